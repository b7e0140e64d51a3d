package plugin_test

import (
	"bufio"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestHostKilledLeavesNoPlugin kills a host process with SIGKILL (no
// cleanup runs) and checks that its plugin process dies too: through
// Pdeathsig and the plugin's watch of its parent together (a host using
// Open), and through the watch alone (a host that started the plugin
// without Pdeathsig).
//
// This test process makes itself a child subreaper, so that the orphaned
// plugin becomes its child: it can then tell a plugin that died (and reap
// it) from one that lives on.
func TestHostKilledLeavesNoPlugin(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatalf("PR_SET_CHILD_SUBREAPER: %v", err)
	}
	for _, c := range []struct {
		mode   string
		within time.Duration
		ended  string // how the plugin must end: which of the two ended it
	}{
		{"open", 2 * time.Second, "signal killed"}, // Pdeathsig: at once
		{"raw", 5 * time.Second, "exit status 3"},  // the watch polls every second
	} {
		t.Run(c.mode, func(t *testing.T) {
			host := exec.Command(os.Args[0])
			host.Env = append(os.Environ(), helperEnv+"="+c.mode, "DELEGO_PLUGIN_TEST_BINARY="+pluginPath("cpu"))
			host.Stderr = os.Stderr
			out, err := host.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := host.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				host.Process.Kill()
				host.Wait()
				t.Fatalf("host helper: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("host helper printed %q", line)
			}
			if comm, ppid, _, ok := procStat(pid); !ok || ppid != host.Process.Pid || !strings.HasPrefix(comm, "delego-") {
				t.Fatalf("plugin %d: %q, parent %d; want delego-cpu, child of the host %d", pid, comm, ppid, host.Process.Pid)
			}
			start := time.Now()
			if err := host.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			host.Wait()

			// The plugin, now our child, must die: reap it.
			for {
				var ws unix.WaitStatus
				got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil)
				if err != nil {
					t.Fatalf("wait for the plugin %d: %v", pid, err)
				}
				if got == pid {
					t.Logf("plugin %d ended %s after its host was killed (%v)", pid, time.Since(start).Round(time.Millisecond), describeWait(ws))
					// The watch alone would end it within c.within too:
					// tell which did.
					if got := describeWait(ws); got != c.ended {
						t.Errorf("plugin %d ended with %s, want %s", pid, got, c.ended)
					}
					break
				}
				if time.Since(start) > c.within {
					syscall.Kill(pid, syscall.SIGKILL)
					unix.Wait4(pid, &ws, 0, nil)
					t.Fatalf("the plugin %d outlived its killed host by %s", pid, c.within)
				}
				time.Sleep(20 * time.Millisecond)
			}
			checkGone(t, pid)
		})
	}
	checkNoPlugins(t)
}

func describeWait(ws unix.WaitStatus) string {
	if ws.Signaled() {
		return "signal " + ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}
