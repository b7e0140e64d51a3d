package delego

import (
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/tensor"
)

// TestOpsTableNamesEveryOp: the table lists every op TensorFlow Lite 2.9
// registers, at its versions, and the custom ops models carry by their
// names, each with what the kernels declare.
func TestOpsTableNamesEveryOp(t *testing.T) {
	r := OpsTable(nil)
	for _, op := range kernels.TFLite29() {
		name := kernel.Registration{Code: op.Code, Custom: op.Custom}.Name()
		row, ok := r.row(name, op.Code == schema.BuiltinOperatorCUSTOM)
		if !ok {
			t.Errorf("%s is not in the table", name)
			continue
		}
		if row.TFLite == nil || row.TFLite.Min != op.Versions.Min || row.TFLite.Max != op.Versions.Max {
			t.Errorf("%s: TFLite versions %+v, want %v", name, row.TFLite, op.Versions)
		}
	}
	for _, name := range []string{"AudioSpectrogram", "Mfcc", "TFLite_Detection_PostProcess", "PosenetDecoderOp",
		"Convolution2DTransposeBias", "MaxPoolingWithArgmax2D", "MaxUnpooling2D", "TransformLandmarks",
		"TransformTensorBilinear", "Landmarks2TransformMatrix"} {
		row, ok := r.row(name, true)
		if s, declared := row.supportOf(KernelsRuntime); !ok || !declared || len(s.Types) == 0 {
			t.Errorf("custom op %s: row %+v", name, row)
		}
	}
	conv, _ := r.row("CONV_2D", false)
	if s, _ := conv.supportOf(KernelsRuntime); s.MinVersion != 1 || s.MaxVersion != 5 || !slices.Contains(s.Types, "INT8") || slices.Contains(s.Types, "BOOL") {
		t.Errorf("CONV_2D: %+v", conv)
	}
	if len(r.Runtimes) != 1 || r.Runtimes[0].Name != KernelsRuntime || !r.Runtimes[0].Usable {
		t.Errorf("runtimes %+v", r.Runtimes)
	}
}

// TestOpsTableUndescribed: a plugin that cannot be described declares
// nothing, the edgetpu plugin as any other (delego knows no plugin's ops but
// from the plugin), and is marked unusable with its error; one described as
// unusable here (no device) lists the ops it declares all the same.
func TestOpsTableUndescribed(t *testing.T) {
	r := OpsTable(&PluginsReport{Plugins: []PluginReport{
		{Name: edgetpuinfo.Name, Path: "/p/delego-edgetpu", Error: "it would not start"},
		{Name: "nodev", Path: "/p/delego-nodev", Reason: "no usable device: found none",
			Ops: []DeclaredOp{{Op: edgetpuinfo.CustomOp, Custom: true, MinVersion: 1, MaxVersion: 1}}},
		{Name: "zeta", Path: "/p/delego-zeta", Error: "not a delego plugin"},
	}})
	if len(r.Runtimes) != 4 || r.Runtimes[1].Usable || !strings.Contains(r.Runtimes[1].Reason, "it would not start") ||
		r.Runtimes[2].Usable || r.Runtimes[2].Reason != "no usable device: found none" {
		t.Fatalf("runtimes %+v", r.Runtimes)
	}
	for _, row := range r.Ops {
		for _, name := range []string{edgetpuinfo.Name, "zeta"} {
			if _, ok := row.supportOf(name); ok {
				t.Errorf("%s, not described, declares %s", name, row.Op)
			}
		}
	}
	if row, _ := r.row(edgetpuinfo.CustomOp, true); !slices.ContainsFunc(row.Support, func(s OpSupport) bool { return s.Runtime == "nodev" }) {
		t.Errorf("%s: %+v, want nodev's declaration", edgetpuinfo.CustomOp, row)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "edgetpu (/p/delego-edgetpu): not usable here: it would not start") {
		t.Errorf("text:\n%s", b.String())
	}
}

// TestUnrunnable: ops that neither the kernels nor a usable plugin run are
// listed with op, version, main type, nodes and reasons; those a plugin
// runs are not, except in a subgraph other than 0, which plugins are never
// given.
func TestUnrunnable(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1, 4})
	ints := b.Tensor("ints", tensor.Int32, []int{1, 4})
	out := func(name string, typ tensor.DType) int { return b.Tensor(name, typ, []int{1, 4}) }
	b.Op(schema.BuiltinOperatorADD, 9, []int{in, in}, []int{out("a", tensor.Float32)}, nil)
	b.CustomOp("NoSuchOp", 1, []int{in}, []int{out("b", tensor.Float32)}, nil)
	b.Op(schema.BuiltinOperatorFLOOR, 1, []int{ints}, []int{out("c", tensor.Int32)}, nil)
	b.Op(schema.BuiltinOperatorADD, 1, []int{in, in}, []int{out("d", tensor.Float32)}, nil)
	b.CustomOp("PluginOnly", 1, []int{in}, []int{out("e", tensor.Float32)}, nil)
	b.Op(schema.BuiltinOperatorADD, 9, []int{in, in}, []int{out("f", tensor.Float32)}, nil)
	b.Inputs(in, ints)
	b.Outputs(2, 3, 4, 5, 6, 7)
	b.AddSubgraph("body")
	x, y := b.Tensor("x", tensor.Float32, []int{1}), b.Tensor("y", tensor.Float32, []int{1})
	b.CustomOp("PluginOnly", 1, []int{x}, []int{y}, nil)
	b.Inputs(x)
	b.Outputs(y)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	r := OpsTable(&PluginsReport{Plugins: []PluginReport{{Name: "fake", Usable: true, Ops: []DeclaredOp{
		{Op: "ADD", MinVersion: 1, MaxVersion: 2},
		{Op: "FLOOR", MinVersion: 1, MaxVersion: 1, Types: []string{"FLOAT32"}},
		{Op: "PluginOnly", Custom: true, MinVersion: 1, MaxVersion: 1},
	}}}})
	got := r.Unrunnable(m)
	want := []UnrunnableOp{
		{Op: "ADD", Version: 9, Type: "FLOAT32", Nodes: []int{0, 5}, Reasons: []string{"kernels: runs versions 1-4", "fake: runs versions 1-2"}},
		{Op: "NoSuchOp", Custom: true, Version: 1, Type: "FLOAT32", Nodes: []int{1}, Reasons: []string{"kernels: does not run this op", "plugins: no plugin found declares it"}},
		{Op: "FLOOR", Version: 1, Type: "INT32", Nodes: []int{2}, Reasons: []string{"kernels: takes FLOAT32, not INT32", "fake: takes FLOAT32, not INT32"}},
		{Subgraph: 1, Op: "PluginOnly", Custom: true, Version: 1, Type: "FLOAT32", Nodes: []int{0},
			Reasons: []string{"kernels: does not run this op", "fake: plugins are given subgraph 0 only"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Subgraph != w.Subgraph || g.Op != w.Op || g.Custom != w.Custom || g.Version != w.Version || g.Type != w.Type ||
			!slices.Equal(g.Nodes, w.Nodes) || !slices.Equal(g.Reasons, w.Reasons) {
			t.Errorf("op %d: %+v, want %+v", i, g, w)
		}
	}
	var text strings.Builder
	if err := WriteUnrunnable(&text, got); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"ops no runtime here runs (4):", "  ADD version 9 FLOAT32 (subgraph 0, nodes 0 5)",
		"    kernels: runs versions 1-4", "  NoSuchOp version 1 FLOAT32 (subgraph 0, node 1)"} {
		if !strings.Contains(text.String(), line+"\n") {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
}

// TestCoverage: a runtime runs a builtin fully when it takes every
// version TensorFlow Lite registers, partly when it takes some, and not
// when it takes none or does not declare it; the Markdown says so.
func TestCoverage(t *testing.T) {
	r := OpsTable(&PluginsReport{Plugins: []PluginReport{{Name: "fake", Usable: true, Ops: []DeclaredOp{
		{Op: "ADD", MinVersion: 1, MaxVersion: 4},
		{Op: "SUB", MinVersion: 1, MaxVersion: 2},
		{Op: "MUL", MinVersion: 6, MaxVersion: 7},
	}}}})
	full, partial, missing := r.Coverage("fake")
	if full != 1 || partial != 1 || missing != 145 {
		t.Errorf("coverage %d, %d, %d; want 1, 1, 145", full, partial, missing)
	}
	md := r.Markdown()
	for _, want := range []string{"`fake` runs 1 of the 147 builtins TensorFlow Lite 2.9 registers at every version it registers, 1 at only some, 145 at none.\n",
		"| Op | TensorFlow Lite 2.9 | kernels | fake |\n", "| SUB | 1-5 | 1-5 FLOAT32, INT8, UINT8, INT16, INT32, INT64 | 1-2 any |\n",
		"| Mfcc (custom) | 1 | 1 FLOAT32 | - |\n"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
}
