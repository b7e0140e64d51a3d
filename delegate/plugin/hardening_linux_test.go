package plugin_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/delegate/plugin/pluginpb"
	"github.com/delego/delego/testsupport/shared"
)

// The tests of what a hostile user or a long-running host could do to the
// plugin transport: swap a pinned binary, kill or stop processes at any
// moment, reach a plugin's socket as another user.

// copyFile copies src to dst with mode perm.
func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, perm); err != nil {
		t.Fatal(err)
	}
}

// TestChecksumPinHoldsWhileSwapped pins delego-cpu's SHA-256 and starts it
// again and again while another goroutine keeps replacing the file at its
// path with a different plugin and back (rename, as an attacker with
// write access to the directory would). Every start must run the pinned
// binary (it says "cpu" in Describe; the impostor says "pinned") or fail
// with ErrChecksum: the bytes hashed are the bytes executed.
func TestChecksumPinHoldsWhileSwapped(t *testing.T) {
	dir := t.TempDir()
	genuine, impostor := filepath.Join(dir, "genuine"), filepath.Join(dir, "impostor")
	copyFile(t, pluginPath("cpu"), genuine, 0o755)
	copyFile(t, filepath.Join(binDir, "faultplugin"), impostor, 0o755)
	path := filepath.Join(dir, "delego-pinned")
	copyFile(t, genuine, path, 0o755)
	sum := sha256File(t, genuine)

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Go(func() {
		tmp := filepath.Join(dir, "next")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			src := genuine
			if i%2 == 1 {
				src = impostor
			}
			os.Remove(tmp)
			if err := os.Link(src, tmp); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		}
	})
	var mu sync.Mutex
	ran, refused := 0, 0
	var starters sync.WaitGroup
	for range 4 {
		starters.Go(func() {
			for range 15 {
				c, err := plugin.Open(t.Context(), path, &plugin.Options{Checksum: sum})
				mu.Lock()
				switch {
				case err == nil:
					if name := c.Info().Name; name != "cpu" {
						t.Errorf("a start with the pin ran %q, not the pinned binary", name)
					}
					ran++
				case errors.Is(err, plugin.ErrChecksum):
					refused++
				default:
					t.Errorf("start: %v, want the pinned plugin or ErrChecksum", err)
				}
				mu.Unlock()
				if c != nil {
					c.Close()
				}
			}
		})
	}
	starters.Wait()
	close(stop)
	swapper.Wait()
	t.Logf("%d starts ran the pinned plugin, %d were refused", ran, refused)
	if ran == 0 {
		t.Error("no start ran the pinned plugin")
	}
	checkNoPlugins(t)
}

// TestStartFailureNamesCause: a plugin killed while it starts is reported
// as such (it used to read "not a delego plugin"), and one stopped while it
// starts is killed at the start timeout with words that say so.
func TestStartFailureNamesCause(t *testing.T) {
	_, err := plugin.Open(t.Context(), pluginPath("fault-killed-start"), nil)
	if !errors.Is(err, plugin.ErrCrashed) || errors.Is(err, plugin.ErrIncompatible) ||
		!strings.Contains(err.Error(), "plugin exited during start: signal: killed") {
		t.Errorf("killed while starting: %v, want ErrCrashed saying it exited during start: signal: killed", err)
	}
	var es interface{ ExitStatus() (code, signal int) }
	if !errors.As(err, &es) {
		t.Errorf("%v has no exit status", err)
	} else if code, sig := es.ExitStatus(); code != -1 || sig != int(syscall.SIGKILL) {
		t.Errorf("exit status %d, signal %d; want -1, SIGKILL", code, sig)
	}

	_, err = plugin.Open(t.Context(), pluginPath("fault-stopped-start"), &plugin.Options{StartTimeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "did not finish starting within 500ms") {
		t.Errorf("stopped while starting: %v, want it killed at the start timeout", err)
	}
	checkNoPlugins(t)
}

// privateTemp points $TMPDIR at a fresh directory, where go-plugin would
// make a plugin's socket, and returns it.
func privateTemp(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	return dir
}

// checkEmpty fails the test unless dir is empty.
func checkEmpty(t *testing.T, dir, what string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) > 0 {
		t.Errorf("%s: %s holds %v", what, dir, names)
	}
}

// TestSocketsRemoved: a plugin's Unix socket lives in a private directory
// named in its $PLUGIN_UNIX_SOCKET_DIR, which is gone once the host is
// connected, so that a plugin killed later (or its host) leaves nothing in
// the temporary directory; restarts after kills leave nothing either.
func TestSocketsRemoved(t *testing.T) {
	tmp := privateTemp(t)
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	c := open(t, "cpu", nil)
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", c.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	var sockDir string
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, "PLUGIN_UNIX_SOCKET_DIR="); ok {
			sockDir = v
		}
	}
	if filepath.Dir(sockDir) != tmp {
		t.Fatalf("the plugin's socket directory is %q, want one in %s", sockDir, tmp)
	}
	checkEmpty(t, tmp, "after Open")
	it, err := interp(t, gc, nil, c)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		syscall.Kill(c.Pid(), syscall.SIGKILL)
		if err := it.Invoke(t.Context()); !errors.Is(err, plugin.ErrCrashed) {
			t.Fatalf("invoke after kill %d: %v, want ErrCrashed", i, err)
		}
		if err := it.Invoke(t.Context()); err != nil { // restarts the plugin
			t.Fatalf("invoke after restart %d: %v", i, err)
		}
	}
	if c.Starts() != 4 {
		t.Errorf("%d starts, want 4", c.Starts())
	}
	checkEmpty(t, tmp, "after 3 kills and restarts")
}

// TestClosedClientIsGarbage: what a closed Client started is garbage
// (go-plugin's "managed" clients stayed in a global list for the life of
// the program: a host that opened 600 plugins held 58,000 more heap
// objects).
func TestClosedClientIsGarbage(t *testing.T) {
	var started []func() bool
	for range 5 {
		c := open(t, "cpu", nil)
		started = append(started, plugin.Collected(c))
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		left := 0
		for _, collected := range started {
			if !collected() {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of 5 closed plugin clients are still reachable", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startHost runs a host helper (see hostHelper) on the cpu plugin and the
// model, and returns it with its plugin's pid.
func startHost(t *testing.T, mode, modelPath string) (*exec.Cmd, int) {
	t.Helper()
	host := exec.Command(os.Args[0])
	host.Env = append(os.Environ(), helperEnv+"="+mode, "DELEGO_PLUGIN_TEST_BINARY="+pluginPath("cpu"),
		"DELEGO_PLUGIN_TEST_MODEL="+modelPath)
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		host.Process.Kill()
		host.Wait()
		t.Fatalf("host helper printed %q (%v)", line, err)
	}
	go io.Copy(io.Discard, out)
	return host, pid
}

// reapOrphan waits for the plugin pid, orphaned by its killed host and now
// this process's child (subreaper), to die, and reaps it.
func reapOrphan(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		if got == pid || errors.Is(err, unix.ECHILD) {
			return // reaped, or reaped by its host before it died
		}
		if err != nil {
			t.Fatalf("wait for the plugin %d: %v", pid, err)
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			unix.Wait4(pid, &ws, 0, nil)
			t.Fatalf("the plugin %d outlived its killed host", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// shmEntries lists /dev/shm.
func shmEntries(t *testing.T) string {
	entries, err := os.ReadDir("/dev/shm")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, " ")
}

// TestHostKilledInAttachLeavesNoRegion kills a host (SIGKILL) while it waits
// in Attach for its stopped plugin, the shared memory region made: a region
// in /dev/shm was left there (40 times of 40); a memfd has no name to leave.
func TestHostKilledInAttachLeavesNoRegion(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	tmp := privateTemp(t)
	shm := shmEntries(t)
	host, pid := startHost(t, "stuck", shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	// Wait until the host maps its region: it is in Attach.
	deadline := time.Now().Add(10 * time.Second)
	for {
		maps, _ := os.ReadFile(fmt.Sprintf("/proc/%d/maps", host.Process.Pid))
		if strings.Contains(string(maps), "delego-region") || strings.Contains(string(maps), "delego-shm-") {
			break
		}
		if time.Now().After(deadline) {
			host.Process.Kill()
			host.Wait()
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the host never mapped a region")
		}
		time.Sleep(5 * time.Millisecond)
	}
	host.Process.Kill()
	host.Wait()
	reapOrphan(t, pid)
	if now := shmEntries(t); now != shm {
		t.Errorf("/dev/shm: %q before, %q after", shm, now)
	}
	checkEmpty(t, tmp, "after the host was killed")
}

// reapPlugins reaps every plugin process that is this process's child,
// waiting up to 5 s for them to end.
func reapPlugins(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := pluginChildren(t)
		if len(left) == 0 {
			return
		}
		for _, p := range left {
			pid, _ := strconv.Atoi(strings.Fields(p)[0])
			var ws unix.WaitStatus
			unix.Wait4(pid, &ws, unix.WNOHANG, nil)
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin processes outlived their killed hosts: %v", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestKilledAtRandomLeavesNothing starts hosts that open the cpu plugin and
// invoke a model on it over and over, and kills the host or the plugin
// (SIGKILL) at a random moment, start included: afterwards no process,
// socket or shared memory file is left.
func TestKilledAtRandomLeavesNothing(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	tmp := privateTemp(t)
	shm := shmEntries(t)
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	for i := range 16 {
		if i%4 == 0 {
			// The host, at any moment from its start.
			host := exec.Command(os.Args[0])
			host.Env = append(os.Environ(), helperEnv+"=invoking", "DELEGO_PLUGIN_TEST_BINARY="+pluginPath("cpu"),
				"DELEGO_PLUGIN_TEST_MODEL="+model)
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(time.Duration(rand.IntN(200)) * time.Millisecond)
			host.Process.Kill()
			host.Wait()
			reapPlugins(t)
			continue
		}
		host, pid := startHost(t, "invoking", model)
		time.Sleep(time.Duration(rand.IntN(300)) * time.Millisecond)
		victim := host.Process.Pid
		if i%2 == 1 {
			victim = pid // the host sees it crash and ends
		}
		syscall.Kill(victim, syscall.SIGKILL)
		host.Process.Kill()
		host.Wait()
		reapOrphan(t, pid)
	}
	if now := shmEntries(t); now != shm {
		t.Errorf("/dev/shm: %q before, %q after", shm, now)
	}
	// A host killed while its plugin started left the socket directory it
	// had made: the next host to start a plugin removes it, once it is
	// older than any start could be.
	plugin.SweepSocketDirs(time.Now().Add(time.Hour))
	checkEmpty(t, tmp, "after 16 kills")
	checkNoPlugins(t)
}

// servePlugin starts the plugin at bin by hand, as a host offering
// protocol versions (go-plugin's $PLUGIN_PROTOCOL_VERSIONS, e.g. "2,1")
// would, with its socket in dir and under umask 0 (so the socket is
// srwxrwxrwx), and returns the socket's path and the version the plugin
// chose. The test stops it at its end.
func servePlugin(t *testing.T, bin, dir, versions string) (sock, version string) {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), plugin.MagicCookieKey+"="+plugin.MagicCookieValue,
		"PLUGIN_PROTOCOL_VERSIONS="+versions, "PLUGIN_UNIX_SOCKET_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0)
	err = cmd.Start()
	syscall.Umask(old)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	parts := strings.Split(strings.TrimSpace(line), "|")
	if err != nil || len(parts) < 5 || parts[2] != "unix" {
		t.Fatalf("handshake %q: %v", line, err)
	}
	return parts[3], parts[1]
}

// describeAs connects to the plugin's socket with effective user uid (the
// connection keeps the user it was made with) and asks it to describe
// itself.
func describeAs(t *testing.T, sock string, uid int) (*pluginpb.DescribeResponse, error) {
	t.Helper()
	if err := syscall.Setresuid(-1, uid, -1); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("unix", sock)
	if err := syscall.Setresuid(-1, 0, -1); err != nil {
		t.Fatal(err)
	}
	if err != nil {
		t.Fatalf("user %d cannot connect: %v", uid, err)
	}
	cc, err := grpc.NewClient("passthrough:plugin", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return conn, nil }))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return pluginpb.NewDelegateClient(cc).Describe(ctx, &pluginpb.DescribeRequest{})
}

// TestPluginRefusesOtherUsers: a plugin without mTLS answers only its own
// user (SO_PEERCRED), even where its socket is open to everyone (under
// umask 000, another user got an answer from root's plugin).
func TestPluginRefusesOtherUsers(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("connecting as another user needs root; TestPeerCheck checks the refusal itself")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	for d := dir; d != "/"; d = filepath.Dir(d) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm()&0o011 != 0o011 {
			// Let the other user through to the socket (it keeps root's groups).
			os.Chmod(d, st.Mode().Perm()|0o011)
		}
	}
	sock, _ := servePlugin(t, pluginPath("cpu"), dir, strconv.Itoa(plugin.ProtocolVersion))
	if st, err := os.Stat(sock); err != nil || st.Mode().Perm() != 0o777 {
		t.Fatalf("socket %s: %v, %v; want one open to everyone", sock, st.Mode(), err)
	}
	if _, err := describeAs(t, sock, 0); err != nil {
		t.Fatalf("its own user: %v", err)
	}
	_, err := describeAs(t, sock, 65534)
	switch {
	case err == nil:
		t.Error("user 65534 got an answer from root's plugin")
	case status.Code(err) != codes.Unavailable:
		t.Errorf("user 65534: %v; want the connection refused by the plugin", err)
	}
}

// TestSweepSocketDirs: a host removes the socket directories that dead
// hosts of its user left, once they are older than any start; those of a
// live host, or young ones, stay.
func TestSweepSocketDirs(t *testing.T) {
	tmp := privateTemp(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(pid int) string {
		d, err := os.MkdirTemp(tmp, fmt.Sprintf("delego-plugin-%d-", pid))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "plugin1"), nil, 0o600)
		return d
	}
	live, gone := mk(os.Getpid()), mk(dead.Process.Pid)
	plugin.SweepSocketDirs(time.Now())
	for _, d := range []string{live, gone} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed while young: %v", d, err)
		}
	}
	plugin.SweepSocketDirs(time.Now().Add(time.Hour))
	if _, err := os.Stat(live); err != nil {
		t.Errorf("the live host's %s was removed", live)
	}
	if _, err := os.Stat(gone); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead host's %s is still there (%v)", gone, err)
	}
}

// closeWithin runs close, failing the test (and killing pid) when it does
// not return within 20 s.
func closeWithin(t *testing.T, pid int, what string, close func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		close()
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		syscall.Kill(pid, syscall.SIGKILL)
		<-done
		t.Fatalf("%s did not return", what)
	}
	checkGone(t, pid)
}

// TestCloseStoppedPlugin: closing an interpreter and then the Client of a
// plugin that was stopped (SIGSTOP), or the Client alone, ends within the
// release and graceful stop bounds, the process killed and reaped
// (go-plugin's shutdown call waited for the stopped process for good).
func TestCloseStoppedPlugin(t *testing.T) {
	c, err := plugin.Open(t.Context(), pluginPath("cpu"), nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := interp(t, shared.GoldenCaseNamed(t, "split_concat__seed1"), nil, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(c.Pid(), syscall.SIGSTOP)
	closeWithin(t, c.Pid(), "Close of a stopped plugin's interpreter and Client", func() {
		it.Close()
		c.Close()
	})

	c, err = plugin.Open(t.Context(), pluginPath("cpu"), nil)
	if err != nil {
		t.Fatal(err)
	}
	syscall.Kill(c.Pid(), syscall.SIGSTOP)
	closeWithin(t, c.Pid(), "Close of a stopped plugin's Client", func() { c.Close() })
	checkNoPlugins(t)
}
