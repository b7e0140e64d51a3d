// Package plugin runs delegates out of process: a delegate is its own
// binary (delego-NAME) that serves the delegate.Delegate contract over gRPC
// with hashicorp/go-plugin, and the host speaks to it through a
// delegate.Delegate that the interpreter cannot tell from an in-process one.
//
// In a plugin binary, main is one line:
//
//	func main() { plugin.Serve(cpu.New()) }
//
// In the host, Open starts a plugin binary and returns its delegate; Find and
// Discover look for binaries named delego-NAME in the directories of
// $DELEGO_PLUGIN_PATH, beside the running executable, in the user's folder
// ($XDG_DATA_HOME/delego/plugins) and in the system's
// (/usr/lib/delego/plugins): see SearchDirs.
//
// # The protocol
//
// pluginpb/delego_plugin.proto, specified in docs/protocol.md: Describe
// (name, version, protocol version, declared support, devices, whether the
// delegate can run here, the settings it honours and the options it takes),
// CheckNodes (the finer support check, once per model), Compile (a
// partition's .tflite bytes, the TFLite settings and the options,
// returning a handle), Attach (a shared memory region for the handle's
// large tensors), Invoke and Release. The go-plugin handshake carries a
// magic cookie (a plugin binary run by hand says it is a plugin and exits)
// and negotiates the protocol version: the host offers ProtocolVersion and
// the versions back to OldestProtocolVersion, and the plugin answers with
// the newest it shares (Serve speaks them all too). A plugin of protocol 1
// still runs, but declares no settings (Client.DeclaresSettings is false)
// and cannot take options (a Compile given some fails with
// ErrIncompatible); a plugin sharing no version with the host is refused
// with ErrIncompatible, naming its version and the host's.
//
// # Tensors
//
// Constants cross once, inside the partition at Compile (a plugin with a
// finer support check also gets the whole model, once per model, in
// CheckNodes; one without never does). Per Invoke only the boundary tensors
// move: those smaller than Options.ShmThreshold inline in the gRPC messages,
// larger ones through a shared memory region per compiled partition. On
// Linux the host makes the region with memfd_create (it never has a name
// in the file system), seals its size, maps it, and sends the descriptor to
// the plugin over the region channel, a socket pair the plugin got at start
// (regionfd_linux.go); Attach names it by a token. Elsewhere, or for a
// plugin without the channel, the region is a file of mode 0600 in
// /dev/shm (os.CreateTemp, O_EXCL) that the host unlinks as soon as Attach
// returns. Either way the plugin refuses a region that is not a regular
// file of the expected size, owned by its user and closed to group and
// others. No tensor in a region ends on or just before a page boundary,
// so a delegate whose vector code reads a few bytes past a buffer (XNNPACK)
// can use it in place.
//
// # The doorbell
//
// On Linux, Invoke skips gRPC: at Attach the host asks for a doorbell, a
// control block at the end of the region, and every tensor with bytes goes
// through the region. The host writes the InvokeRequest into the block and
// wakes the plugin with a futex; a goroutine of the plugin's, watching the
// block, runs it as it runs a gRPC Invoke and answers in the block (the
// InvokeResponse, or the error as a gRPC status, its message cut to 3 KiB),
// waking the host with a futex. That saves the gRPC round trip, a sizeable
// share of a small model's run. While it waits, the host keeps looking at
// its context (a deadline or a cancellation kills the plugin, as for a
// gRPC call) and at the process (one that died is ErrCrashed). A plugin
// that does not know the doorbell answers Attach without it;
// Options.NoDoorbell, or a negative ShmThreshold, keeps every Invoke a gRPC
// call. See doorbell.go for the block's layout and for the two sides of
// the protocol (bellRinger in the host, bellAnswerer in the plugin).
//
// # Failures
//
// Every call takes the caller's context: Invoke's deadline is the RPC's. A
// plugin that crashes or exits makes the call fail with ErrCrashed (with the
// exit status and the tail of its stderr); one that does not answer before
// the context ends is killed, since it may still write into the partition's
// memory, and the call fails with the context's error. Either way the process
// is gone, executables compiled in it fail from then on (execution errors,
// subject to the fallback settings), and the next Compile (or CheckNodes)
// starts a fresh process. Malformed results fail with ErrMalformed and leave
// the process running. Only a plugin that says it cannot run here (no device)
// gives an error wrapping delegate.ErrNoDevice.
//
// # Rehearsing failures
//
// Every plugin Serve runs honours $DELEGO_PLUGIN_FAULT (EnvFault), which it
// inherits from the host: after N successful Invokes it crashes
// (crash-after=N: exits with status 2 in Invoke N+1, without answering),
// hangs (hang-after=N: Invoke N+1 never returns, until the host's deadline
// kills the process) or answers garbage (garbage-after=N: outputs of the
// wrong shape, ErrMalformed in the host), so that an application can try
// its fallback settings and deadlines on a real plugin. "cpu:crash-after=3"
// asks the cpu plugin only; faults are comma-separated. Serve reads the
// variable once, as the plugin starts (a binary built to misbehave passes
// WithFaults instead), and only when it plans a fault for the plugin puts
// a layer around the delegate's executables that counts their Invokes and
// strikes: gRPC Invokes and doorbell rings both run the executable, so both
// paths see it, and a plugin started without faults runs no fault code at
// all. A malformed value stops every plugin from starting, with an error
// that names the variable.
//
// # Processes
//
// A Client owns at most one plugin process at a time, shared by every
// interpreter that uses it; it is safe for concurrent use. Close kills the
// process (gracefully, then by force) and reaps it, and a closed Client
// holds nothing (its go-plugin clients are not go-plugin's "managed" ones,
// which stay in a global list for the life of the program). On Linux the
// plugin also gets SIGKILL when the host dies (Pdeathsig), and Serve exits
// by itself when its parent goes away, so a killed host leaves no plugin
// behind.
//
// # Trust
//
// The plugin's Unix socket is made in a private directory (mode 0700,
// go-plugin's $PLUGIN_UNIX_SOCKET_DIR) that the host removes as soon as it
// is connected; a host killed while a plugin starts leaves it, and the next
// host of the same user to start a plugin removes it. Without mTLS, the
// plugin refuses a connection from any user but its own (SO_PEERCRED). A
// pinned binary (Options.Checksum) is hashed from an open file and executed
// from that same file, so nothing put in its place runs. A plugin that dies
// or stops while it starts is reported as such, with its exit status.
package plugin
