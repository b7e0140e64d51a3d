package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// TestOpsJSONListsEveryOp: "delego ops --json" lists every builtin TFLite
// 2.9 registers and the custom ops models carry, by their names, the
// kernels' versions and types, and the delego-edgetpu plugin TestMain
// built, which declares its op with no device here.
func TestOpsJSONListsEveryOp(t *testing.T) {
	code, stdout, stderr := cli(t, "ops", "--json")
	if code != exitOK || stderr != "" {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	var r delego.OpsReport
	decodeJSON(t, []byte(stdout), &r)
	rows := map[string]delego.OpsRow{}
	for _, row := range r.Ops {
		rows[row.Op] = row
	}
	var names []string
	for _, op := range kernels.TFLite29() {
		names = append(names, kernel.Registration{Code: op.Code, Custom: op.Custom}.Name())
	}
	names = append(names, "PosenetDecoderOp", "Convolution2DTransposeBias", "MaxPoolingWithArgmax2D",
		"MaxUnpooling2D", "TransformLandmarks", "TransformTensorBilinear", "Landmarks2TransformMatrix", "edgetpu-custom-op")
	for _, name := range names {
		if _, ok := rows[name]; !ok {
			t.Errorf("%s is not listed", name)
		}
	}
	if add := rows["ADD"]; add.TFLite == nil || add.TFLite.Max != 4 || len(add.Support) == 0 ||
		add.Support[0].Runtime != "kernels" || !slices.Contains(add.Support[0].Types, "INT16") {
		t.Errorf("ADD: %+v", add)
	}
	if !slices.ContainsFunc(r.Runtimes, func(rt delego.OpsRuntime) bool { return rt.Name == "edgetpu" }) ||
		!slices.ContainsFunc(rows["edgetpu-custom-op"].Support, func(s delego.OpSupport) bool { return s.Runtime == "edgetpu" }) {
		t.Errorf("edgetpu: runtimes %+v, op %+v", r.Runtimes, rows["edgetpu-custom-op"])
	}
}

// TestOpsText: the text table has a header, one line per op and "-" for
// what a runtime does not declare.
func TestOpsText(t *testing.T) {
	code, stdout, _ := cli(t, "ops")
	if code != exitOK {
		t.Fatalf("status %d", code)
	}
	for _, want := range []string{"runtimes:\n  kernels (delego's CPU kernels, in process)\n", "OP ", "TFLITE 2.9", "KERNELS", "EDGETPU"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stdout, "\nkernels runs ") || !strings.Contains(stdout, " of the 147 builtins TensorFlow Lite 2.9 registers") {
		t.Errorf("no count of the kernels' builtins in:\n%s", stdout)
	}
	if !strings.Contains(stdout, "\nFLOOR ") || !strings.Contains(stdout, "1 FLOAT32 ") {
		t.Errorf("no FLOOR line in:\n%s", stdout)
	}
	if code, _, stderr := cli(t, "ops", "extra"); code != exitUsage || !strings.Contains(stderr, "takes no arguments") {
		t.Errorf("ops extra: status %d, stderr %q", code, stderr)
	}
}

// TestInspectCannotRun: inspect names the ops that neither the kernels nor
// a plugin runs, with version, type and nodes, in text and JSON.
func TestInspectCannotRun(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1, 4})
	a := b.Tensor("a", tensor.Float32, []int{1, 4})
	c := b.Tensor("c", tensor.Float32, []int{1, 4})
	d := b.Tensor("d", tensor.Float32, []int{1, 4})
	b.Op(schema.BuiltinOperatorADD, 1, []int{in, in}, []int{a}, nil)
	b.Op(schema.BuiltinOperatorRELU, 4, []int{a}, []int{c}, nil)
	b.CustomOp("NoSuchOp", 1, []int{c}, []int{d}, nil)
	b.Inputs(in)
	b.Outputs(d)
	path := filepath.Join(t.TempDir(), "m.tflite")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := cli(t, "inspect", path)
	if code != exitOK || stderr != "" {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"\nops no runtime here runs (2):\n", "\n  RELU version 4 FLOAT32 (subgraph 0, node 1)\n    kernels: runs versions 1-3\n",
		"\n  NoSuchOp version 1 FLOAT32 (subgraph 0, node 2)\n    kernels: does not run this op\n    plugins: no plugin found declares it\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
	_, stdout, _ = cli(t, "inspect", "--json", path)
	var r struct {
		CannotRun []delego.UnrunnableOp `json:"cannot_run"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.CannotRun) != 2 || r.CannotRun[0].Op != "RELU" || r.CannotRun[0].Version != 4 || r.CannotRun[0].Type != "FLOAT32" ||
		!slices.Equal(r.CannotRun[0].Nodes, []int{1}) || r.CannotRun[1].Op != "NoSuchOp" || !r.CannotRun[1].Custom {
		t.Errorf("cannot_run %+v", r.CannotRun)
	}
	_, stdout, _ = cli(t, "inspect", "--json", shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if !strings.Contains(stdout, `"cannot_run": []`) {
		t.Errorf("a model that runs has no empty cannot_run list:\n%s", stdout[max(0, len(stdout)-300):])
	}
}
