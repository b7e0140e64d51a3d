package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/testsupport/shared"
)

// TestBenchWithStoppedPlugin stops (SIGSTOP) the cpu plugin in the middle
// of `delego bench --timeout 1s`: with fallback settings the bench finishes
// on the CPU and a restarted plugin, exit 0, the failure told once; without
// them it exits 1 soon after the timeout, naming the hang. No process is
// left either way.
//
// The stop lands once the plugin has mapped the shared memory its Invokes
// use (Attach comes with the first Invoke, after the compile), not after a
// guessed delay: on a loaded machine a plugin may still be compiling a
// second after it starts, and on a quiet one 1,000 runs take a third of one.
func TestBenchWithStoppedPlugin(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	settings := filepath.Join(t.TempDir(), "fallback.json")
	writeFile(t, settings, `{"fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}`)
	for _, fallback := range []bool{true, false} {
		t.Run("fallback="+strconv.FormatBool(fallback), func(t *testing.T) {
			args := []string{"bench", model, "--delegate", "cpu", "--timeout", "1s", "--runs", "5000"}
			if fallback {
				args = append(args, "--settings", settings)
			}
			cmd := exec.Command(binPath, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			child := waitForChild(t, cmd.Process.Pid)
			pid, _ := strconv.Atoi(strings.Fields(child)[0])
			waitForRegion(t, pid)
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			stopped := time.Now()
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				<-done
				// The stopped plugin is this process's child now (subreaper):
				// end and reap it, so that no later test finds it left over.
				syscall.Kill(pid, syscall.SIGKILL)
				syscall.Wait4(pid, nil, 0, nil)
				t.Fatalf("delego still running 30 s after its plugin stopped\n%s", stderr.String())
			}
			took := time.Since(stopped)
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			if fallback {
				if err != nil || len(lines) != 1 || !strings.Contains(lines[0], "no answer within 1s") ||
					!strings.Contains(lines[0], "the CPU stood in, its plugin was restarted once") {
					t.Errorf("with fallback: %v, stderr %q", err, stderr.String())
				}
			} else if err == nil || took > 10*time.Second || !strings.Contains(stderr.String(), "execute: no answer within 1s") {
				t.Errorf("without fallback: %v after %v, stderr %q", err, took, stderr.String())
			}
			if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
				t.Errorf("the stopped plugin %s outlived delego", child)
			}
			checkNoOrphans(t)
		})
	}
}

// waitForRegion waits until plugin pid has mapped a shared-memory region
// of delego's (a memfd named delego-region, or a delego-shm- file): the
// host attaches one with the first Invoke.
func waitForRegion(t *testing.T, pid int) {
	t.Helper()
	maps := "/proc/" + strconv.Itoa(pid) + "/maps"
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(maps)
		if err != nil {
			t.Fatalf("plugin %d: %v", pid, err)
		}
		if bytes.Contains(b, []byte("delego-region")) || bytes.Contains(b, []byte("delego-shm-")) {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("plugin %d mapped no shared memory within 30 s", pid)
}

// flakyPlugin is a delego-cpu, in a folder of its own, that misbehaves as
// it starts while a file says so, and otherwise runs the real plugin: while
// the file stop exists it stops itself (SIGSTOP), as a plugin frozen by a
// debugger or a cgroup would be; while fail exists it exits at once. Each
// start appends its pid to the file starts.
type flakyPlugin struct{ dir, stop, fail, starts string }

func newFlakyPlugin(t *testing.T) flakyPlugin {
	t.Helper()
	dir := t.TempDir()
	f := flakyPlugin{dir: dir, stop: filepath.Join(dir, "stop"), fail: filepath.Join(dir, "fail"), starts: filepath.Join(dir, "starts")}
	script := fmt.Sprintf(`#!/bin/sh
echo $$ >> %q
if [ -e %q ]; then kill -STOP $$; fi
if [ -e %q ]; then echo "flaky plugin: told not to start" >&2; exit 1; fi
exec %q "$@"
`, f.starts, f.stop, f.fail, filepath.Join(binDir, "delego-cpu"))
	if err := os.WriteFile(f.path(), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// path is the plugin binary.
func (f flakyPlugin) path() string { return filepath.Join(f.dir, "delego-cpu") }

// set creates file (f.stop or f.fail) when on, else removes it.
func (f flakyPlugin) set(t *testing.T, file string, on bool) {
	t.Helper()
	if on {
		writeFile(t, file, "")
	} else if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
}

// started is how many times the plugin was started.
func (f flakyPlugin) started(t *testing.T) int {
	t.Helper()
	return strings.Count(string(readFile(t, f.starts)), "\n")
}

// TestRunWithPluginStoppedAtStart runs `delego run --timeout 2s` with a cpu
// plugin that stops as it starts: --timeout bounds the start too, so delego
// is done soon after 2 s (it used to wait for the plugin's own 30 s start
// timeout), on the CPU with compile fallback settings and with exit 1
// without them. No process is left either way.
func TestRunWithPluginStoppedAtStart(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	f := newFlakyPlugin(t)
	f.set(t, f.stop, true)
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	settings := filepath.Join(t.TempDir(), "fallback.json")
	writeFile(t, settings, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	for _, fallback := range []bool{true, false} {
		t.Run("fallback="+strconv.FormatBool(fallback), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.raw")
			args := append(goldenArgs(t, gc, out), "--delegate", "cpu", "--timeout", "2s")
			if fallback {
				args = append(args, "--settings", settings)
			}
			start := time.Now()
			_, stderr, err := runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + f.dir}, args...)
			took := time.Since(start)
			// The bound is far below the plugin's own start timeout (30 s)
			// and far above the 2 s asked for, so a loaded machine passes.
			if took > 15*time.Second {
				t.Errorf("delego took %v with a plugin stopped as it started, under --timeout 2s", took)
			}
			if !strings.Contains(stderr, "start plugin") {
				t.Errorf("stderr does not say the plugin did not start: %q", stderr)
			}
			if fallback {
				if err != nil || !bytes.Equal(readFile(t, out), shared.ReadGolden(t, gc.OutputFile)) {
					t.Errorf("with fallback: %v, or the output differs from the golden one; stderr %q", err, stderr)
				}
			} else if err == nil {
				t.Errorf("without fallback delego succeeded; stderr %q", stderr)
			}
			checkNoOrphans(t)
		})
	}
}
