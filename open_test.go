package delego_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/testsupport/shared"
)

const (
	cat    = "mobilenet_v1_0.25_128_quant__cat_128"
	quant  = "mobilenet_v1_0.25_128_quant.tflite"
	quantE = "mobilenet_v1_0.25_128_quant_edgetpu.tflite"
)

// runGolden opens the model with opts, runs it on the golden cat input
// and checks the golden output. It returns the interpreter, still open.
func runGolden(t *testing.T, modelName string, opts ...delego.Option) *delego.Interpreter {
	t.Helper()
	ctx := context.Background()
	it, err := delego.Open(ctx, shared.Model(t, modelName), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { it.Close() })
	if err := it.Input(0).CopyFrom(shared.ReadGolden(t, cat+".input.raw")); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(ctx); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(it.Output(0).Data(), shared.ReadGolden(t, cat+".output.raw")) {
		t.Errorf("%s: the output differs from the golden %s output", modelName, cat)
	}
	return it
}

func TestOpenCPU(t *testing.T) {
	it := runGolden(t, quant, delego.WithThreads(2))
	if it.Delegates().Threads != 2 || len(it.Delegates().Delegates) != 0 {
		t.Errorf("delegation %+v, want 2 threads and no delegate", it.Delegates())
	}
}

func TestOpenCPUDelegateInProcess(t *testing.T) {
	it := runGolden(t, quant, delego.WithDelegates("cpu"), delego.WithPluginDirs(t.TempDir()))
	if n := len(it.Plan().Partitions); n != 1 {
		t.Errorf("%d partitions, want the whole model on the cpu delegate", n)
	}
}

func TestOpenTwinFallback(t *testing.T) {
	fallback := []byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	it := runGolden(t, quantE, delego.WithDelegates("edgetpu"), delego.WithSettingsData(fallback), delego.WithPluginDirs())
	if it.Twin() == nil || filepath.Base(it.Twin().Path) != quant {
		t.Errorf("Twin() = %v, want the CPU twin %s", it.Twin(), quant)
	}
	_, err := delego.Open(context.Background(), shared.Model(t, quantE), delego.WithDelegates("edgetpu"), delego.WithPluginDirs())
	var de *delegate.Error
	if !errors.As(err, &de) || de.Stage != delegate.StageCompile {
		t.Errorf("without fallback settings: %v, want the edgetpu compile error", err)
	}
}

func TestOpenSettingsPickDelegate(t *testing.T) {
	it := runGolden(t, quant, delego.WithSettingsFile("delegate/config/testdata/fallback_allowed.json"), delego.WithPluginDirs())
	if got := it.Delegates().Names; len(got) != 1 || got[0] != "xnnpack" {
		t.Errorf("delegates %v, want the settings' xnnpack", got)
	}
	if len(it.Fallbacks()) == 0 {
		t.Error("no fallback recorded for the missing xnnpack plugin")
	}
	it = runGolden(t, quant, delego.WithSettingsFile("delegate/config/testdata/fallback_allowed.json"), delego.WithDelegates())
	if got := it.Delegates().Names; len(got) != 0 {
		t.Errorf("WithDelegates(): delegates %v, want none", got)
	}
}

func TestOpenMistakes(t *testing.T) {
	m := filepath.Join(t.TempDir(), "absent.tflite")
	for _, c := range []struct {
		opts []delego.Option
		want string
	}{
		{[]delego.Option{delego.WithDelegates("Edge TPU")}, "only letters, digits"},
		{[]delego.Option{delego.WithDelegates("cpu", "cpu")}, "listed twice"},
		{[]delego.Option{delego.WithSettingsData([]byte(`{"delegat": "GPU"}`))}, "config:"},
		{[]delego.Option{delego.WithSettingsData([]byte(`{"preference": "FORCE_CPU", "tflite_settings": {"delegate": "XNNPACK"}}`))}, "settings:"},
		{[]delego.Option{delego.WithSettings(nil)}, "no settings"},
		{[]delego.Option{delego.WithChecksumsFile(m + ".sums")}, "plugin checksums"},
		{nil, "absent.tflite"},
	} {
		if _, err := delego.Open(context.Background(), m, c.opts...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open with %d options: %v, want an error with %q", len(c.opts), err, c.want)
		}
	}
}

// TestOpenPluginReaped runs the golden case through the delego-cpu plugin
// and checks that Close leaves no plugin process behind.
func TestOpenPluginReaped(t *testing.T) {
	dir := buildCPUPlugin(t)
	it := runGolden(t, quant, delego.WithDelegates("cpu"), delego.WithPluginDirs(dir), delego.WithWatchdog(core.Watchdog{}))
	c, ok := it.Delegates().Delegates[0].(*plugin.Client)
	if !ok {
		t.Fatalf("the cpu delegate is %T, want the plugin", it.Delegates().Delegates[0])
	}
	pid := c.Pid()
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if p, err := os.FindProcess(pid); err == nil && p.Signal(syscall.Signal(0)) == nil {
		t.Errorf("plugin process %d still runs after Close", pid)
	}

	// An Open that fails after starting the plugin (the CPU cannot run
	// edgetpu-custom-op, and no fallback is allowed) stops it too.
	_, err := delego.Open(context.Background(), shared.Model(t, quantE), delego.WithDelegates("cpu"), delego.WithPluginDirs(dir))
	if err == nil {
		t.Fatal("the cpu delegate ran an Edge TPU model")
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("after a failed Open, child processes %v remain", kids)
	}
}

// buildCPUPlugin builds delego-cpu into a temporary folder, which it
// returns.
func buildCPUPlugin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds delego-cpu")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir, "./plugins/cpu/cmd/delego-cpu")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return dir
}

// TestOpenWithRestarts: WithRestarts reaches the interpreter. With
// restarts off (Max -1), a plugin killed under it moves its partition to
// the CPU for good (with execution fallback) and is not started again;
// with the defaults the CPU stands in once and the plugin is restarted.
func TestOpenWithRestarts(t *testing.T) {
	dir := buildCPUPlugin(t)
	fallback := []byte(`{"fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}`)
	for _, c := range []struct {
		restarts []delego.Option
		outcome  delegate.Outcome
		starts   int
	}{
		{[]delego.Option{delego.WithRestarts(core.Restarts{Max: -1})}, delegate.MovedToCPU, 1},
		{nil, delegate.RanOnCPU, 2},
	} {
		opts := append([]delego.Option{delego.WithDelegates("cpu"), delego.WithPluginDirs(dir), delego.WithSettingsData(fallback)}, c.restarts...)
		it := runGolden(t, quant, opts...)
		client := it.Delegates().Delegates[0].(*plugin.Client)
		if err := syscall.Kill(client.Pid(), syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := it.Invoke(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		if fbs := it.Fallbacks(); len(fbs) == 0 || fbs[0].Outcome != c.outcome || client.Starts() != c.starts {
			t.Errorf("%d options: fallbacks %v, %d starts; want %v first, %d starts", len(c.restarts), fbs, client.Starts(), c.outcome, c.starts)
		}
		if !bytes.Equal(it.Output(0).Data(), shared.ReadGolden(t, cat+".output.raw")) {
			t.Errorf("%d options: the output differs from the golden one", len(c.restarts))
		}
		it.Close()
	}
}

// children lists this process's child processes (Linux).
func children(t *testing.T) []string {
	t.Helper()
	tasks, err := filepath.Glob("/proc/self/task/*/children")
	if err != nil || len(tasks) == 0 {
		t.Skip("no /proc children lists here")
	}
	var kids []string
	for _, f := range tasks {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread ended
		}
		kids = append(kids, strings.Fields(string(b))...)
	}
	return kids
}

// TestOpenBoundsAPluginStoppedAtStart: WithWatchdog's limit bounds the
// start of the plugins Open starts. A delego-cpu that stops itself
// (SIGSTOP) as it starts is killed after the 300 ms limit, instead of the
// plugin's own 30 s start timeout, and the compile fallback runs the model
// on the CPU; no process is left.
func TestOpenBoundsAPluginStoppedAtStart(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "delego-cpu"), []byte("#!/bin/sh\nkill -STOP $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fallback := []byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	start := time.Now()
	it := runGolden(t, quant, delego.WithDelegates("cpu"), delego.WithPluginDirs(dir), delego.WithSettingsData(fallback),
		delego.WithWatchdog(core.Watchdog{Invoke: 300 * time.Millisecond}))
	// Far below the plugin's own 30 s, far above the limit: a loaded
	// machine passes.
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Open took %v with a plugin stopped as it started, under a 300ms watchdog", took)
	}
	if fbs := it.Fallbacks(); len(fbs) != 1 || !strings.Contains(fbs[0].Err.Error(), "start plugin") {
		t.Errorf("fallbacks %v, want the plugin's failed start", fbs)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes %v remain", kids)
	}
}

// TestMissingEdgeTPUPluginHint: without delego-edgetpu the delegate is
// unavailable with a hint a library user can follow too: where the binary
// goes and the go install line that builds it, not only the way to build
// it in delego's source tree.
func TestMissingEdgeTPUPluginHint(t *testing.T) {
	d := delego.Plugins{Dirs: []string{t.TempDir()}}.Open(context.Background(), "edgetpu")
	defer d.Close()
	err := delegate.WhyUnavailable(d)
	for _, want := range []string{"no plugin binary delego-edgetpu", "install it in one of them",
		"go install github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu@latest", "go build -o bin/ ./..."} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("edgetpu without its plugin: unavailable %v, want it to say %q", err, want)
		}
	}
}
