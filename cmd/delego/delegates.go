package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
)

// This file reads --delegate and --settings for run, bench and plan; the
// package delego turns them into delegates, as it does for Go callers of
// delego.Open: delego.Plugins.Open is the one place that maps a name to a
// delegate (the plugin binary delego-NAME when one is found, else, for
// "cpu" only, delego's kernels in process).

// delegateOpener makes the delegate called name (see delego.Opener).
type delegateOpener = delego.Opener

// pluginHost is how plugins are found and started: delego.Plugins, whose
// Open is the one place that maps a name to a delegate.
type pluginHost = delego.Plugins

// defaultHost looks in plugin.SearchDirs, without pinning or mTLS.
func defaultHost() pluginHost { return pluginHost{Dirs: plugin.SearchDirs()} }

// delegateOrigin says where a delegate runs, for -v.
func delegateOrigin(d delegate.Delegate) string {
	switch d := d.(type) {
	case *plugin.Client:
		info := d.Info()
		return fmt.Sprintf("plugin %s (version %s, protocol %d, pid %d)", info.Path, info.Version, info.Protocol, d.Pid())
	case *cpu.Delegate:
		return fmt.Sprintf("in process (no %s%s plugin found)", plugin.Prefix, cpu.Name)
	}
	if err := delegate.WhyUnavailable(d); err != nil {
		return fmt.Sprintf("unavailable: %v", err)
	}
	return "in process"
}

// noDelegate is the --delegate value that asks for none, whatever the
// settings say.
const noDelegate = "none"

// delegationFlags are the flags that choose delegates and settings, shared by
// run, bench and plan.
type delegationFlags struct {
	delegates stringList // --delegate, each NAME[,NAME...]
	options   stringList // --delegate-option, each NAME:KEY=VALUE
	settings  string     // --settings FILE
	twin      string     // --cpu-twin FILE
	twinOnly  bool       // --cpu-twin-only
	timeout   time.Duration
	plugins   pluginFlags
}

// define adds --delegate, --delegate-option, --settings, --cpu-twin,
// --timeout and the plugin flags to fs.
func (f *delegationFlags) define(fs *flag.FlagSet) {
	fs.Var(&f.delegates, "delegate", "")
	fs.Var(&f.options, "delegate-option", "")
	fs.StringVar(&f.settings, "settings", "", "")
	fs.StringVar(&f.twin, "cpu-twin", "", "")
	fs.DurationVar(&f.timeout, "timeout", 0, "")
	f.plugins.define(fs)
}

// pluginFlags are the flags on how plugins start, shared by run, bench,
// plan and plugins.
type pluginFlags struct {
	checksums string // --plugin-checksums FILE
	strict    bool   // --strict-checksums
	mtls      bool   // --plugin-mtls
	insecure  bool   // --allow-insecure-plugins
}

func (f *pluginFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.checksums, "plugin-checksums", "", "")
	fs.BoolVar(&f.strict, "strict-checksums", false, "")
	fs.BoolVar(&f.mtls, "plugin-mtls", false, "")
	fs.BoolVar(&f.insecure, "allow-insecure-plugins", false, "")
}

// options are the delego options of the plugin flags.
func (f *pluginFlags) options() []delego.Option {
	var opts []delego.Option
	if f.checksums != "" {
		opts = append(opts, delego.WithChecksumsFile(f.checksums))
	}
	if f.strict {
		opts = append(opts, delego.WithStrictChecksums())
	}
	if f.mtls {
		opts = append(opts, delego.WithPluginMTLS())
	}
	if f.insecure {
		opts = append(opts, delego.WithInsecurePlugins())
	}
	return opts
}

// host reads the checksums file, if any, and returns the plugin host.
func (f *pluginFlags) host() (pluginHost, error) {
	h := defaultHost()
	h.MTLS, h.AllowInsecure, h.StrictChecksums = f.mtls, f.insecure, f.strict
	if f.checksums != "" {
		sums, err := plugin.ReadChecksums(f.checksums)
		if err != nil {
			return pluginHost{}, err
		}
		h.Checksums = sums
	}
	return h, nil
}

// pluginFlagsHelp documents pluginFlags, for the help texts.
const pluginFlagsHelp = `  --plugin-checksums FILE
                   run only plugins whose SHA-256 is pinned in FILE (lines
                   "HEX  NAME" as sha256sum writes them; NAME a path or a
                   base name such as delego-cpu); a plugin not listed, or
                   whose sum differs, is not started: it is unavailable, a
                   compilation error the fallback settings decide
  --strict-checksums  with --plugin-checksums: a plugin not listed, or
                   whose sum differs, stops a run or a plan whatever the
                   fallback settings say; the error names the plugin and
                   both sums
  --plugin-mtls    secure the connection to each plugin with go-plugin's
                   automatic mutual TLS
  --allow-insecure-plugins  run the plugins delego otherwise refuses
                   because another user could replace them: a binary, its
                   directory or a directory above them writable by every
                   user (above: unless sticky, as /tmp) or owned by someone
                   other than you and root, and relative directories in
                   $DELEGO_PLUGIN_PATH ("." or "bin": whatever the working
                   directory holds). Without it a refused plugin is
                   unavailable, "cpu" included, and the error says what is
                   wrong and where
`

// delegationHelp documents the flags of delegationFlags, for the help texts.
const delegationHelp = `  --delegate NAME[,NAME...]
                   run the nodes a delegate supports on it, the delegates in
                   priority order (the flag may also be repeated). Each
                   delegate is a plugin process: the binary delego-NAME,
                   looked for in the directories of $DELEGO_PLUGIN_PATH,
                   beside delego, in $XDG_DATA_HOME/delego/plugins, then in
                   /usr/lib/delego/plugins (see "delego plugins"); build them with
                   "go build -o bin/ ./...". Without a plugin, "cpu" is
                   delego's own kernels in process (not when its plugin is
                   refused as insecure: see --allow-insecure-plugins); an
                   accelerator never runs in process, so a crash in its
                   driver cannot take delego down ("edgetpu", a Coral USB
                   Accelerator, needs delego-edgetpu; coral_settings.device
                   picks one, "delego devices" lists them). A delegate that
                   cannot be had (no plugin binary, a plugin refused as
                   insecure, one that will not start or cannot run here) is
                   a compilation error: with
                   allow_automatic_fallback_on_compilation_error the CPU runs
                   its nodes (and delego says so), else delego fails. A
                   plugin that crashes, hangs or answers garbage while
                   running is an execution error, subject to
                   allow_automatic_fallback_on_execution_error.
                   "none": no delegate, whatever the settings say. Without
                   --delegate, the settings' delegate field picks one
                   (XNNPACK: xnnpack, GPU: gpu, NNAPI: nnapi, HEXAGON: hexagon,
                   EDGETPU and EDGETPU_CORAL: edgetpu; NONE or absent: none).
  --delegate-option NAME:KEY=VALUE
                   give the delegate NAME the option KEY=VALUE, as TFLite's
                   external delegate takes options (the flag may be
                   repeated); it replaces the same key of the settings'
                   delegate_options. NAME must run, and must declare KEY,
                   else delego fails saying which options it takes.
  --settings FILE  TFLite acceleration settings: a ComputeSettings or a
                   TFLiteSettings (configuration.proto) in JSON (.json) or
                   binary protobuf (.pb, .binpb; other names: by content).
                   stable_delegate_loader_settings names any plugin, as
                   TFLite names a stable delegate: {"delegate_name":
                   "mytpu"} runs delego-mytpu from the search directories,
                   {"delegate_path": "/abs/delego-mytpu"} that binary
                   (held to the same checks); with delegate set too, both
                   must name the same delegate. delegate_options (delego's
                   own field) gives the selected delegate key/value
                   options. delego itself honours delegate,
                   stable_delegate_loader_settings, delegate_options,
                   cpu_settings.num_threads, max_delegated_partitions and
                   fallback_settings; each delegate declares the fields it
                   reads (xnnpack_settings.num_threads, coral_settings, ...).
                   Each other field set is printed on standard error
                   ("delego ignores ..."), and one whose ignoring would
                   change the results (GPU precision, FORCE_CPU, ...) is an
                   error; while a delegate that declares nothing runs (an
                   older plugin), or one that cannot be had was asked for,
                   such fields are warnings that say so. To
                   learn what they declare, delego starts the delegates
                   once before the model runs.
  --cpu-twin FILE  the CPU twin of an Edge TPU model: the same model before
                   Coral's compiler (default: foo.tflite beside
                   foo_edgetpu.tflite). The CPU cannot run edgetpu-custom-op,
                   so when the edgetpu delegate fails to compile and
                   allow_automatic_fallback_on_compilation_error allows a
                   fallback, the twin runs instead (same inputs and outputs,
                   matched by name), and delego says so.
  --timeout DURATION
                   the longest any one call to a delegate may take (e.g. 2s,
                   500ms): starting its plugin, compiling its partition
                   (also when a lost plugin is restarted in the middle of a
                   run) and running the partition once. A call past it is a
                   compilation or execution error: the plugin is killed, the
                   fallback settings decide, and the next run starts a fresh
                   plugin. Default: 30s for a partition's first run, then 20
                   times its slowest run so far, at least 2s; 2 minutes to
                   compile, 30s to start. A plugin process that dies is
                   restarted the same way; after 5 failed restarts in a row
                   its restarts pause for 30s (the CPU runs the partition
                   meanwhile when the fallback settings allow it, else those
                   runs fail at once), then it is tried again.
` + pluginFlagsHelp + `
Every plugin reads DELEGO_PLUGIN_FAULT, to fail on purpose so that the
fallback settings can be rehearsed: [PLUGIN:]crash-after=N, hang-after=N or
garbage-after=N (comma-separated) crashes, hangs or answers garbage in the
plugin's invoke N+1 (see README.md, "Rehearsing failures").
The edgetpu delegate also reads the environment:
  DELEGO_EDGETPU_DEVICE=sim      run it on a simulated Coral USB Accelerator
                   (sim-dfu: one waiting for its firmware); the outputs
                   are the simulator's, and delego says so. sim:N plugs in
                   N simulated devices (usb:0 ... usb:N-1, at most 16).
                   sim:FAULTS (or sim:N:FAULTS) makes the simulated devices
                   fail on purpose: unplug-after=N, timeout-after=N,
                   stall-after=N or delay-after=N:DURATION (comma-separated)
                   in each device's invoke N+1; busy=DURATION among them
                   makes every invoke take that long on the device (the
                   simulator itself takes no device time)
  DELEGO_EDGETPU_FIRMWARE=FILE   the firmware for a device that waits for
                   it (1a6e:089a), where coral_settings.firmware_path names
                   none (libedgetpu's apex_latest_single_ep.bin)
  DELEGO_USB_TRACE=FILE          write every USB operation of the Edge TPU
                   driver to FILE, one per line
`

// names returns the delegate names the flags give, lowercased, in order:
// nil when --delegate is absent, empty for "none".
func (f *delegationFlags) names(cmd string) ([]string, bool, error) {
	if len(f.delegates) == 0 {
		return nil, false, nil
	}
	var names []string
	for _, v := range f.delegates {
		for _, n := range strings.Split(v, ",") {
			n = strings.ToLower(strings.TrimSpace(n))
			if err := delego.CheckName(n); err != nil {
				return nil, false, usagef(cmd, "--delegate %q: %v", v, err)
			}
			if slices.Contains(names, n) {
				return nil, false, usagef(cmd, "--delegate: %q is listed twice", n)
			}
			names = append(names, n)
		}
	}
	if len(names) > 1 && slices.Contains(names, noDelegate) {
		return nil, false, usagef(cmd, "--delegate: %q cannot be combined with other delegates", noDelegate)
	}
	if names[0] == noDelegate {
		names = names[:0]
	}
	return names, true, nil
}

// configure resolves the flags as the library resolves Open's options:
// the settings read and checked (each warning printed as it is found),
// the delegates named, the plugins' checksums read, before any model is
// read. threads is --threads (0: the settings', else 1); e's kernels and
// delegates, when set, stand in for the built-in kernels and the plugins;
// more are the command's own options.
func (f *delegationFlags) configure(ctx context.Context, cmd string, threads int, e env, stderr io.Writer, more ...delego.Option) (*delego.Config, error) {
	names, given, err := f.names(cmd)
	if err != nil {
		return nil, err
	}
	if f.timeout < 0 {
		return nil, usagef(cmd, "--timeout must not be negative, got %v", f.timeout)
	}
	opts := []delego.Option{
		delego.WithCPUTwin(f.twin),
		delego.WithThreads(threads),
		delego.WithWatchdog(watchdog(f.timeout)),
		delego.WithKernels(e.registry),
		delego.WithWarnings(func(w error) { fmt.Fprintf(stderr, "delego: %v\n", w) }),
	}
	if f.settings != "" {
		opts = append(opts, delego.WithSettingsFile(f.settings))
	}
	if given {
		opts = append(opts, delego.WithDelegates(names...))
	}
	for _, v := range f.options {
		name, key, value, err := parseDelegateOption(v)
		if err != nil {
			return nil, usagef(cmd, "--delegate-option %q: %v", v, err)
		}
		opts = append(opts, delego.WithDelegateOption(name, key, value))
	}
	if e.open != nil {
		opts = append(opts, delego.WithOpener(e.open))
	}
	opts = append(opts, f.plugins.options()...)
	return delego.Configure(ctx, append(opts, more...)...)
}

// parseDelegateOption reads a --delegate-option value, NAME:KEY=VALUE (the
// value may be empty and may hold '=' and ':').
func parseDelegateOption(v string) (name, key, value string, err error) {
	name, kv, ok := strings.Cut(v, ":")
	if !ok {
		return "", "", "", errors.New("want NAME:KEY=VALUE, with the delegate's name before ':'")
	}
	name = strings.ToLower(strings.TrimSpace(name))
	if err := delego.CheckName(name); err != nil {
		return "", "", "", err
	}
	key, value, ok = strings.Cut(kv, "=")
	if !ok || key == "" {
		return "", "", "", errors.New("want NAME:KEY=VALUE, with the option's key before '='")
	}
	return name, key, value, nil
}

// defineTwinOnly adds --cpu-twin-only to fs, for the commands that run one
// model (model says which).
func (f *delegationFlags) defineTwinOnly(fs *flag.FlagSet) {
	fs.BoolVar(&f.twinOnly, "cpu-twin-only", false, "")
}

// twinOnlyHelp documents --cpu-twin-only, after delegationHelp.
const twinOnlyHelp = `  --cpu-twin-only  take the CPU twin (--cpu-twin, or foo.tflite for MODEL
                   foo_edgetpu.tflite) for MODEL: to compare an Edge TPU
                   model's results, plan or speed with its twin's
`

// model is the model the command runs for MODEL (path): with
// --cpu-twin-only its CPU twin, which it says on stderr.
func (f *delegationFlags) model(cmd, path string, stderr io.Writer) (string, error) {
	if !f.twinOnly {
		return path, nil
	}
	twin := f.twin
	if twin == "" {
		twin = edgetpuinfo.TwinPath(path)
	}
	if twin == "" {
		return "", usagef(cmd, "--cpu-twin-only: %s is not named as Coral's compiler names an Edge TPU model (foo_edgetpu.tflite, whose twin is foo.tflite): name its twin with --cpu-twin", path)
	}
	fmt.Fprintf(stderr, "delego: --cpu-twin-only: the CPU twin %s runs instead of %s\n", twin, path)
	return twin, nil
}

// watchdog is the watchdog --timeout asks for: timeout bounds every
// delegate call (core.Watchdog.Invoke, which the compile limit and the
// plugins' start follow); 0 leaves the defaults.
func watchdog(timeout time.Duration) core.Watchdog { return core.Watchdog{Invoke: timeout} }

// env is what a command takes from its surroundings; tests replace parts.
type env struct {
	registry *kernel.Registry // the CPU kernels; nil: the built-in ones
	open     delegateOpener   // nil: the plugin host the flags describe
	// devices lists the Edge TPUs for "delego devices" and "delego
	// pipeline"; nil: the delego-edgetpu plugin does.
	devices func(context.Context) (*edgetpuinfo.Devices, error)
}

// withPluginLogs is what -v (verbose) makes of a command's stderr: the
// writer the command and its plugins then share, under one lock, and the
// option that streams each plugin's stderr to it, a whole line at a time
// after the plugin's name ("[xnnpack] ..."). Without -v, stderr as it is
// and no option: a plugin's stderr stays hidden unless it crashes.
func withPluginLogs(verbose bool, stderr io.Writer) (io.Writer, []delego.Option) {
	if !verbose {
		return stderr, nil
	}
	w := &lockedWriter{w: stderr}
	return w, []delego.Option{delego.WithPluginStderr(w)}
}

// lockedWriter makes a writer safe for concurrent use: one Write at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// closeAfter closes c as a command ends. A failure to close after the
// command succeeded is a warning on stderr, not a failed command: the
// result stands (a plugin that dies after answering, say). After a failure
// it joins the command's error.
func closeAfter(err *error, stderr io.Writer, what string, c io.Closer) {
	cerr := c.Close()
	switch {
	case cerr == nil:
	case *err == nil:
		fmt.Fprintf(stderr, "delego: warning: %s: %s\n", what, words.OneLine(cerr.Error()))
	default:
		*err = errors.Join(*err, cerr)
	}
}
