package plugin_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
)

// binDir holds the plugin binaries TestMain built: delego-cpu and the fault
// plugin under each of its names.
var binDir string

// faultModes are the fault plugin's names (delego-fault-MODE).
var faultModes = []string{"crash-compile", "crash-invoke", "exit-invoke", "error-invoke", "hang", "hang-later", "garbage", "protocol", "nodevice", "nodevice-declaring", "checker", "configurable", "describe-v1", "chatty", "killed-start", "stopped-start"}

// helperEnv makes the test binary a host helper instead of running tests
// (see hostHelper).
const helperEnv = "DELEGO_PLUGIN_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(hostHelper(mode, os.Getenv("DELEGO_PLUGIN_TEST_BINARY")))
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "delego-plugin-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := buildPlugins(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	binDir = dir
	return m.Run()
}

// buildPlugins builds delego-cpu and the fault plugin into dir, once per
// test binary, and links the fault plugin under each of its names.
func buildPlugins(dir string) error {
	cmd := exec.Command("go", "build", "-o", dir,
		"github.com/delego/delego/plugins/cpu/cmd/delego-cpu",
		"github.com/delego/delego/testsupport/faultplugin")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build plugins: %v\n%s", err, out)
	}
	for _, m := range faultModes {
		if err := os.Link(filepath.Join(dir, "faultplugin"), filepath.Join(dir, "delego-fault-"+m)); err != nil {
			return err
		}
	}
	return nil
}

// pluginPath is the path of a built plugin, e.g. "cpu" or "fault-hang".
func pluginPath(name string) string { return filepath.Join(binDir, plugin.Prefix+name) }

// hostHelper is a host process for the reaping tests. It starts the plugin
// at bin, prints the plugin's pid and waits to be killed.
//
//	open:    through plugin.Open (Pdeathsig on Linux, and the plugin's watch
//	         of its parent)
//	raw:     a bare exec of the plugin with the magic cookie (no Pdeathsig):
//	         only the plugin's watch of its parent can end it
//	stuck:   through plugin.Open, then compiles $DELEGO_PLUGIN_TEST_MODEL
//	         on it, stops the plugin (SIGSTOP) and invokes, so that the host
//	         waits in Attach with its shared memory region made
//	invoking: through plugin.Open, then invokes $DELEGO_PLUGIN_TEST_MODEL
//	         on it over and over
func hostHelper(mode, bin string) int {
	var pid int
	switch mode {
	case "stuck", "invoking":
		return invokingHost(mode, bin, os.Getenv("DELEGO_PLUGIN_TEST_MODEL"))
	case "open":
		c, err := plugin.Open(context.Background(), bin, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		pid = c.Pid()
	case "raw":
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), plugin.MagicCookieKey+"="+plugin.MagicCookieValue,
			"PLUGIN_PROTOCOL_VERSIONS="+strconv.Itoa(plugin.ProtocolVersion))
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		// Wait for the handshake line: the plugin is serving.
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		pid = cmd.Process.Pid
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	fmt.Println(pid)
	time.Sleep(time.Hour)
	return 0
}

// invokingHost is hostHelper's stuck and invoking modes.
func invokingHost(mode, bin, modelPath string) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	c, err := plugin.Open(ctx, bin, &plugin.Options{ShmThreshold: 1})
	if err != nil {
		return fail(err)
	}
	m, err := model.Load(modelPath)
	if err != nil {
		return fail(err)
	}
	it, err := core.NewInterpreterContext(ctx, m, &core.Options{Delegates: []delegate.Delegate{c}})
	if err == nil {
		err = it.AllocateTensors()
	}
	if err != nil {
		return fail(err)
	}
	fmt.Println(c.Pid())
	if mode == "stuck" {
		syscall.Kill(c.Pid(), syscall.SIGSTOP)
	}
	for {
		if err := it.Invoke(ctx); err != nil {
			return fail(err)
		}
	}
}

// pluginChildren lists this process's children whose command name starts
// with "delego-", zombies included: after a test, there must be none.
func pluginChildren(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("no /proc: %v", err)
	}
	self := os.Getpid()
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, ppid, state, ok := procStat(pid)
		if ok && ppid == self && strings.HasPrefix(comm, "delego-") {
			out = append(out, fmt.Sprintf("%d %s (%s)", pid, comm, state))
		}
	}
	return out
}

// procStat reads a process's command name, parent and state from
// /proc/PID/stat.
func procStat(pid int) (comm string, ppid int, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", 0, "", false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < open {
		return "", 0, "", false
	}
	f := strings.Fields(s[close+1:])
	if len(f) < 2 {
		return "", 0, "", false
	}
	ppid, _ = strconv.Atoi(f[1])
	return s[open+1 : close], ppid, f[0], true
}

// checkNoPlugins fails the test when a plugin process of this test process
// is left, running or as a zombie.
func checkNoPlugins(t *testing.T) {
	t.Helper()
	if left := pluginChildren(t); len(left) > 0 {
		t.Errorf("plugin processes left: %v", left)
	}
}

// checkGone fails the test unless process pid no longer exists (not even as
// a zombie), waiting up to 5 seconds.
func checkGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, _, state, ok := procStat(pid)
		if !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process %d still exists (state %s)", pid, state)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sha256File returns the SHA-256 of a file.
func sha256File(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256(b)
	return s[:]
}
