//go:build cgo

package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/delego/delego/core"
	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/xnnpack"
	"github.com/delego/delego/testsupport/shared"
)

// This file runs the golden models through the delego-xnnpack plugin, out
// of process: through the library (plugin.Open) and through the delego
// command line (--delegate xnnpack finds the plugin beside delego). The
// checks are the in-process ones (xnnpack_test.go), and the outputs must be
// the in-process delegate's bytes: the same library on the same thread.

// openXNNPACKPlugin starts the delego-xnnpack plugin TestMain built; the
// test's cleanup stops it.
func openXNNPACKPlugin(t *testing.T) *plugin.Client {
	t.Helper()
	c, err := plugin.Open(t.Context(), filepath.Join(binDir, "delego-xnnpack"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// xnnpackSettingsFile writes the settings of xnnpackSettings (one XNNPACK
// thread) for the command line, with the fallbacks given, and returns its
// path.
func xnnpackSettingsFile(t *testing.T, fallback bool) string {
	t.Helper()
	s := `{"xnnpack_settings": {"num_threads": 1}}`
	if fallback {
		s = `{"xnnpack_settings": {"num_threads": 1}, "fallback_settings": {
			"allow_automatic_fallback_on_compilation_error": true,
			"allow_automatic_fallback_on_execution_error": true}}`
	}
	p := filepath.Join(t.TempDir(), "xnnpack.json")
	writeFile(t, p, s)
	return p
}

// TestXNNPACKPluginDescribe: the plugin says it is usable, with the
// in-process delegate's declared support.
func TestXNNPACKPluginDescribe(t *testing.T) {
	c := openXNNPACKPlugin(t)
	info := c.Info()
	if info.Name != xnnpack.Name || !info.Usable || info.Reason != "" || !info.HasChecker || info.Protocol != plugin.ProtocolVersion {
		t.Errorf("info %+v", info)
	}
	want, err := xnnpack.New().Support(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Support(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Builtins) == 0 || len(got.Builtins) != len(want.Builtins) {
		t.Fatalf("declared %d builtin ops, in process %d", len(got.Builtins), len(want.Builtins))
	}
	for op, w := range want.Builtins {
		if g, ok := got.Builtins[op]; !ok || g.Versions != w.Versions || !slices.Equal(g.Types, w.Types) {
			t.Errorf("%v: declared %+v, in process %+v", op, g, w)
		}
	}
}

// TestGoldenThroughXNNPACKPlugin runs every golden case on the plugin, all
// cases in one plugin process: the in-process checks hold, and both
// invokes give the in-process delegate's bytes.
func TestGoldenThroughXNNPACKPlugin(t *testing.T) {
	c := openXNNPACKPlugin(t)
	for _, gc := range shared.GoldenCases(t) {
		t.Run(gc.Name, func(t *testing.T) {
			it, first, second := runXNNPACK(t, gc, c)
			if p := it.Plan(); (xnnpackCPUNodes(gc.Model) == nil) != (len(p.CPUNodes) == 0) {
				t.Errorf("plan:\n%s", it.Report().Text())
			}
			checkXNNPACKOutput(t, gc, first)
			checkXNNPACKSecond(t, gc, first, second)
			_, inFirst, inSecond := runXNNPACK(t, gc, xnnpack.New())
			if !bytes.Equal(first, inFirst) || !bytes.Equal(second, inSecond) {
				t.Error("outputs differ from the in-process delegate's")
			}
		})
	}
	if c.Starts() != 1 {
		t.Errorf("%d plugin processes started, want 1", c.Starts())
	}
}

// TestGoldenThroughXNNPACKCLI runs every golden case through `delego run
// --delegate xnnpack`, which finds delego-xnnpack beside delego: -v names
// the plugin and the plan, nothing falls back, and the output file holds
// the in-process delegate's bytes (which the in-process tests check).
func TestGoldenThroughXNNPACKCLI(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	settings := xnnpackSettingsFile(t, false)
	for _, gc := range shared.GoldenCases(t) {
		t.Run(gc.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.raw")
			_, stderr, err := runDelego(t, append(goldenArgs(t, gc, out), "--delegate", "xnnpack", "--settings", settings, "-v")...)
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			onCPU := "0 on the CPU"
			if xnnpackCPUNodes(gc.Model) != nil {
				onCPU = "1 on the CPU"
			}
			if !strings.Contains(stderr, "delegate xnnpack: plugin "+filepath.Join(binDir, "delego-xnnpack")) ||
				!strings.Contains(stderr, onCPU) || strings.Contains(stderr, "fallback") || strings.Contains(stderr, "ignores") {
				t.Errorf("-v should show the plugin taking the graph (%s):\n%s", onCPU, stderr)
			}
			got := readFile(t, out)
			_, want, _ := runXNNPACK(t, gc, xnnpack.New())
			if !bytes.Equal(got, want) {
				t.Error("the output file differs from the in-process delegate's outputs")
			}
			checkXNNPACKOutput(t, gc, got)
		})
	}
	checkNoOrphans(t)
}

// TestXNNPACKPlanCLI asks `delego plan --delegate xnnpack --json` where each
// golden model's nodes go, the plugin's finer check included: every
// MobileNet and the SPLIT/CONCATENATION graph is one xnnpack partition of
// all its nodes; in the LSTM model exactly the nodes xnnpackCPUNodes names
// stay on the CPU, for the reasons it gives.
func TestXNNPACKPlanCLI(t *testing.T) {
	seen := map[string]bool{}
	for _, gc := range shared.GoldenCases(t) {
		if seen[gc.Model] {
			continue
		}
		seen[gc.Model] = true
		t.Run(gc.Model, func(t *testing.T) {
			stdout, stderr, err := runDelego(t, "plan", shared.Model(t, gc.Model), "--delegate", "xnnpack", "--json")
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr)
			}
			type node struct {
				Node    int
				Op      string
				Reasons []string
			}
			var p struct {
				Summary struct {
					Nodes      int
					Partitions int
				}
				Partitions []struct {
					Delegate string
					FellBack bool `json:"fell_back"`
					Nodes    []node
				}
				CPUNodes  []node `json:"cpu_nodes"`
				Fallbacks []any
			}
			if err := json.Unmarshal([]byte(stdout), &p); err != nil {
				t.Fatal(err)
			}
			if len(p.Fallbacks) != 0 {
				t.Errorf("fallbacks %v", p.Fallbacks)
			}
			delegated := 0
			for _, part := range p.Partitions {
				if part.Delegate != xnnpack.Name || part.FellBack {
					t.Errorf("partition on %q (fell back: %v)", part.Delegate, part.FellBack)
				}
				delegated += len(part.Nodes)
			}
			want := xnnpackCPUNodes(gc.Model)
			if want == nil {
				if len(p.Partitions) != 1 || len(p.CPUNodes) != 0 || delegated != p.Summary.Nodes {
					t.Errorf("want one xnnpack partition of all %d nodes:\n%s", p.Summary.Nodes, stdout)
				}
				return
			}
			if len(p.CPUNodes) != len(want) || delegated+len(p.CPUNodes) != p.Summary.Nodes {
				t.Fatalf("%d nodes on the CPU, want %d:\n%s", len(p.CPUNodes), len(want), stdout)
			}
			for i, n := range p.CPUNodes {
				if len(n.Reasons) != 1 || !strings.Contains(n.Reasons[0], want[i]) {
					t.Errorf("CPU node %d (%s): reasons %q, want %q", n.Node, n.Op, n.Reasons, want[i])
				}
			}
		})
	}
}

// TestXNNPACKPluginsCommand: `delego plugins` lists delego-xnnpack, usable,
// with the ops and versions the delegate declares.
func TestXNNPACKPluginsCommand(t *testing.T) {
	stdout, stderr, err := runDelego(t, "plugins", "--json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	type listed struct {
		Name, Path, Error, Reason string
		Usable                    bool
		Ops                       []struct{ Op string }
	}
	var r struct{ Plugins []listed }
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(r.Plugins, func(p listed) bool { return p.Name == xnnpack.Name })
	if i < 0 {
		t.Fatalf("delego plugins does not list xnnpack:\n%s", stdout)
	}
	p := r.Plugins[i]
	if !p.Usable || p.Error != "" || p.Reason != "" || p.Path != filepath.Join(binDir, "delego-xnnpack") {
		t.Errorf("xnnpack plugin: %+v", p)
	}
	sup, err := xnnpack.New().Support(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Ops) != len(sup.Builtins) {
		t.Errorf("%d ops listed, the delegate declares %d", len(p.Ops), len(sup.Builtins))
	}
	text, _, err := runDelego(t, "plugins")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"xnnpack  " + filepath.Join(binDir, "delego-xnnpack"), "CONV_2D 1-3 (FLOAT32/UINT8/INT8)"} {
		if !strings.Contains(text, w) {
			t.Errorf("delego plugins lacks %q:\n%s", w, text)
		}
	}
}

// TestXNNPACKPluginCrashFallback kills the plugin between two invokes of a
// float MobileNet: that is an execution error (plugin.ErrCrashed). Without
// fallback settings it is the result; with
// allow_automatic_fallback_on_execution_error the CPU reruns the partition
// and the output is the golden one. The next interpreter starts a fresh
// plugin and runs on XNNPACK again.
func TestXNNPACKPluginCrashFallback(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_float__cat_128_f32")
	golden := shared.ReadGolden(t, gc.OutputFile)
	c := openXNNPACKPlugin(t)
	m, err := model.Load(shared.Model(t, gc.Model))
	if err != nil {
		t.Fatal(err)
	}
	interp := func(fallback bool) *core.Interpreter {
		s := xnnpackSettings()
		s.FallbackSettings = fallbackSettings(false, fallback).FallbackSettings
		it, err := core.NewInterpreter(m, &core.Options{Delegates: []delegate.Delegate{c}, Settings: s})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { it.Close() })
		if err := it.AllocateTensors(); err != nil {
			t.Fatal(err)
		}
		if err := it.Input(0).CopyFrom(shared.ReadGolden(t, gc.InputFile)); err != nil {
			t.Fatal(err)
		}
		if err := it.Invoke(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := compareOutputs(gc, it.Output(0).Data(), golden); err != nil {
			t.Fatal(err)
		}
		return it
	}
	strict, lenient := interp(false), interp(true)
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = strict.Invoke(t.Context())
	if de, ok := errors.AsType[*delegate.Error](err); !ok || de.Stage != delegate.StageExecute || !errors.Is(err, plugin.ErrCrashed) {
		t.Errorf("without fallback: err = %v, want an execute-stage plugin.ErrCrashed", err)
	}
	if err := lenient.Invoke(t.Context()); err != nil {
		t.Fatalf("with fallback: %v", err)
	}
	if ev := lenient.Fallbacks(); len(ev) != 1 || ev[0].Stage != delegate.StageExecute || !errors.Is(ev[0].Err, plugin.ErrCrashed) {
		t.Errorf("fallbacks %v", ev)
	}
	if err := compareOutputs(gc, lenient.Output(0).Data(), golden); err != nil {
		t.Errorf("after the fallback: %v", err)
	}
	fresh := interp(false)
	if ev := fresh.Fallbacks(); len(ev) != 0 || c.Starts() != 2 {
		t.Errorf("the next interpreter: fallbacks %v, %d plugin starts (want 2)", ev, c.Starts())
	}
}
