package integration

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/delego/delego/core"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// TestGoldenThroughCPUPlugin runs every golden case with the delego-cpu
// plugin taking the whole graph: the outputs must be byte-identical to the
// in-process run (both invokes, so the LSTM's state too) and match TFLite's.
// All cases share one plugin process, each on its own goroutine.
func TestGoldenThroughCPUPlugin(t *testing.T) {
	c, err := plugin.Open(t.Context(), filepath.Join(binDir, "delego-cpu"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	t.Run("cases", func(t *testing.T) {
		for _, gc := range shared.GoldenCases(t) {
			t.Run(gc.Name, func(t *testing.T) {
				t.Parallel()
				first, second := runGolden(t, gc, 1)
				m, err := model.Load(shared.Model(t, gc.Model))
				if err != nil {
					t.Fatal(err)
				}
				it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{c}})
				if err != nil {
					t.Fatal(err)
				}
				defer it.Close()
				if p := it.Plan(); len(p.Partitions) != 1 || len(p.CPUNodes) != 0 {
					t.Fatalf("plan should hold one cpu partition and no CPU nodes:\n%s", it.Report().Text())
				}
				if err := it.AllocateTensors(); err != nil {
					t.Fatal(err)
				}
				feedGolden(t, it, gc)
				for i, want := range [][]byte{first, second} {
					if got := invokeOutputs(t, it); !bytes.Equal(got, want) {
						t.Errorf("invoke %d: outputs differ from the in-process run", i+1)
					}
				}
				if err := compareOutputs(gc, first, shared.ReadGolden(t, gc.OutputFile)); err != nil {
					t.Error(err)
				}
				if ev := it.Fallbacks(); len(ev) != 0 {
					t.Errorf("unexpected fallbacks: %v", ev)
				}
			})
		}
	})
	if c.Starts() != 1 {
		t.Errorf("%d plugin processes started, want 1", c.Starts())
	}
}

// goldenArgs writes a golden case's inputs to files and returns
// `run MODEL --input ... --output OUT`.
func goldenArgs(t *testing.T, gc shared.GoldenCase, out string) []string {
	t.Helper()
	dir := t.TempDir()
	in := shared.ReadGolden(t, gc.InputFile)
	args := []string{"run", shared.Model(t, gc.Model), "--output", out}
	for i, gi := range gc.Inputs {
		p := filepath.Join(dir, fmt.Sprintf("in%d.raw", i))
		if err := os.WriteFile(p, in[gi.Offset:gi.Offset+gi.Bytes], 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--input", p)
	}
	return args
}

// TestGoldenThroughCLIPlugin runs every golden case through `delego run
// --delegate cpu`, which finds the delego-cpu plugin beside delego: the
// output file must be byte-identical to the run without delegates.
func TestGoldenThroughCLIPlugin(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	for _, gc := range shared.GoldenCases(t) {
		t.Run(gc.Name, func(t *testing.T) {
			dir := t.TempDir()
			plain, viaPlugin := filepath.Join(dir, "plain.raw"), filepath.Join(dir, "plugin.raw")
			if _, stderr, err := runDelego(t, goldenArgs(t, gc, plain)...); err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			_, stderr, err := runDelego(t, append(goldenArgs(t, gc, viaPlugin), "--delegate", "cpu", "-v")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			if !strings.Contains(stderr, "delegate cpu: plugin "+filepath.Join(binDir, "delego-cpu")) ||
				!strings.Contains(stderr, "0 on the CPU") || strings.Contains(stderr, "fallback") {
				t.Errorf("-v should show the plugin taking the whole graph:\n%s", stderr)
			}
			a, b := readFile(t, plain), readFile(t, viaPlugin)
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("outputs through the plugin differ from the in-process run (%d and %d bytes)", len(b), len(a))
			}
		})
	}
	checkNoOrphans(t)
}

// TestPluginsCommand lists the plugins beside delego.
func TestPluginsCommand(t *testing.T) {
	stdout, stderr, err := runDelego(t, "plugins", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var r struct {
		SearchPath []string `json:"search_path"`
		Plugins    []struct {
			Name, Path, Error, Version, Reason string
			Protocol                           int
			Usable                             bool
			Devices                            []struct{ Name, Description string }
			Ops                                []struct {
				Op     string
				Custom bool
				Min    int `json:"min_version"`
				Max    int `json:"max_version"`
			}
		}
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if want := []string{binDir, plugin.UserDir(), plugin.SystemDir}; !slices.Equal(r.SearchPath, want) {
		t.Errorf("search path %q, want %q: delego's directory, then the user's and the system's plugin folders", r.SearchPath, want)
	}
	byName := map[string]int{}
	for i, p := range r.Plugins {
		byName[p.Name] = i
	}
	if len(r.Plugins) != 2+len(faultModes) {
		t.Errorf("%d plugins listed, want delego-cpu, delego-xnnpack and %d fault plugins", len(r.Plugins), len(faultModes))
	}
	cpuP := r.Plugins[byName["cpu"]]
	if !cpuP.Usable || cpuP.Error != "" || cpuP.Protocol != plugin.ProtocolVersion || cpuP.Path != filepath.Join(binDir, "delego-cpu") ||
		len(cpuP.Devices) != 1 {
		t.Errorf("cpu plugin: %+v", cpuP)
	}
	// Every op the core supports, at the same versions.
	want := map[string]tensor.VersionRange{}
	for _, reg := range kernels.Builtins().All() {
		name := reg.Custom
		if name == "" {
			name = reg.Code.String()
		}
		want[name] = reg.Versions
	}
	got := map[string]tensor.VersionRange{}
	for _, o := range cpuP.Ops {
		got[o.Op] = tensor.VersionRange{Min: o.Min, Max: o.Max}
	}
	if len(want) == 0 || !maps.Equal(got, want) {
		t.Errorf("cpu plugin ops %v\nwant the core's %v", got, want)
	}
	if p := r.Plugins[byName["fault-protocol"]]; p.Usable || !strings.Contains(p.Error, "speaks delego plugin protocol 99, this delego speaks 2 and 1") {
		t.Errorf("fault-protocol: %+v", p)
	}
	if p := r.Plugins[byName["fault-nodevice"]]; p.Usable || p.Error != "" || !strings.Contains(p.Reason, "no fault accelerator") {
		t.Errorf("fault-nodevice: %+v", p)
	}
	text, _, err := runDelego(t, "plugins")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"cpu  " + filepath.Join(binDir, "delego-cpu"), "usable    yes", "CONV_2D 1-5", "fault-protocol", "in process: cpu"} {
		if !strings.Contains(text, w) {
			t.Errorf("delego plugins lacks %q:\n%s", w, text)
		}
	}
}

// TestCLIPluginFaults runs a model through each fault plugin with `delego
// run`: without fallback settings the failure is the result (exit status 1,
// the cause on stderr); with them the output is the CPU's. No plugin process
// may outlive delego.
func TestCLIPluginFaults(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	dir := t.TempDir()
	wantOut := filepath.Join(dir, "want.raw")
	if _, stderr, err := runDelego(t, goldenArgs(t, gc, wantOut)...); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	want := readFile(t, wantOut)
	settings := filepath.Join(dir, "fallback.json")
	writeFile(t, settings, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true,
		"allow_automatic_fallback_on_execution_error": true}}`)

	for _, c := range []struct {
		mode, stage, mention string
	}{
		{"crash-compile", "compile", "crash in compile"},
		{"crash-invoke", "execute", "crash in invoke"},
		{"exit-invoke", "execute", "exit status 7"},
		{"garbage", "execute", "malformed plugin result"},
		{"protocol", "compile", "speaks delego plugin protocol 99, this delego speaks 2 and 1"},
		{"nodevice", "compile", "no usable device"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.raw")
			_, stderr, err := runDelego(t, append(goldenArgs(t, gc, out), "--delegate", "fault-"+c.mode)...)
			if err == nil {
				t.Fatal("exit status 0")
			}
			if w := "delegate fault-" + c.mode; !strings.Contains(stderr, w) || !strings.Contains(stderr, c.stage) || !strings.Contains(stderr, c.mention) {
				t.Errorf("stderr %q should name the delegate, the %s stage and %q", stderr, c.stage, c.mention)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("a failed run left an output file")
			}
			_, stderr, err = runDelego(t, append(goldenArgs(t, gc, out), "--delegate", "fault-"+c.mode, "--settings", settings)...)
			if err != nil {
				t.Fatalf("with fallback: %v\n%s", err, stderr)
			}
			if got := readFile(t, out); len(want) == 0 || !bytes.Equal(got, want) {
				t.Error("fallback output differs from the CPU's")
			}
			if !strings.Contains(stderr, "the result came from the CPU fallback") {
				t.Errorf("stderr %q should report the fallback", stderr)
			}
			checkNoOrphans(t)
		})
	}
}

// TestSignalsStopPlugins interrupts delego while its plugin works (SIGINT,
// SIGTERM) or hangs (SIGTERM to a delego waiting on fault-hang): delego
// exits, and its plugin process is gone with it.
func TestSignalsStopPlugins(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	for _, c := range []struct {
		name     string
		delegate string
		sig      syscall.Signal
		args     []string
	}{
		{"SIGINT while benchmarking", "cpu", syscall.SIGINT, []string{"bench", model, "--runs", "1000000"}},
		{"SIGTERM while benchmarking", "cpu", syscall.SIGTERM, []string{"bench", model, "--runs", "1000000"}},
		{"SIGTERM while the plugin hangs", "fault-hang", syscall.SIGTERM, []string{"bench", model, "--runs", "10"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(binPath, append(c.args, "--delegate", c.delegate)...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			child := waitForChild(t, cmd.Process.Pid)
			pid, _ := strconv.Atoi(strings.Fields(child)[0])
			time.Sleep(300 * time.Millisecond) // let it get to work
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err == nil {
					t.Errorf("delego exited 0 after %v", c.sig)
				}
				// The signal lands in a timed run ("context canceled") or, on a
				// loaded machine, still in the plugin's compile ("... when the
				// call was canceled"): either way delego must say so.
				if msg := stderr.String(); !strings.Contains(msg, "context canceled") && !strings.Contains(msg, "when the call was canceled") {
					t.Errorf("stderr %q should say the run was cancelled", msg)
				}
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("delego did not exit after %v\n%s", c.sig, stderr.String())
			}
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
				t.Errorf("plugin process %s outlived delego", child)
			}
			checkNoOrphans(t)
		})
	}
}

// TestPluginChecksumsThroughCLI pins delego-cpu's SHA-256: the right sum
// runs it, a wrong one refuses it (a compilation error, which the fallback
// settings can turn into a CPU run).
func TestPluginChecksumsThroughCLI(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "split_concat__seed1")
	data, err := os.ReadFile(filepath.Join(binDir, "delego-cpu"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.sha256")
	writeFile(t, good, hex.EncodeToString(sum[:])+"  delego-cpu\n")
	sum[31] ^= 1
	bad := filepath.Join(dir, "bad.sha256")
	writeFile(t, bad, hex.EncodeToString(sum[:])+"  delego-cpu\n")

	out := filepath.Join(dir, "out.raw")
	_, stderr, err := runDelego(t, append(goldenArgs(t, gc, out), "--delegate", "cpu", "--plugin-checksums", good, "--plugin-mtls", "-v")...)
	if err != nil || !strings.Contains(stderr, "delegate cpu: plugin") {
		t.Errorf("pinned: %v\n%s", err, stderr)
	}
	_, stderr, err = runDelego(t, append(goldenArgs(t, gc, out), "--delegate", "cpu", "--plugin-checksums", bad)...)
	if err == nil || !strings.Contains(stderr, "checksums did not match") {
		t.Errorf("wrong sum: %v\n%s", err, stderr)
	}
}
