package core

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

// recordOp is a fake kernel: it keeps the model's declared output shapes and
// writes the node index into every output byte, logging the order of calls.
type recordOp struct {
	index int
	log   *[]int
}

func (o *recordOp) Prepare(n *kernel.Node) error { return nil }

func (o *recordOp) Eval(n *kernel.Node) error {
	*o.log = append(*o.log, o.index)
	for _, t := range n.Outputs {
		for i := range t.Data {
			t.Data[i] = byte(o.index + 1)
		}
	}
	return nil
}

// fakeRegistry registers recordOp for the given builtins.
func fakeRegistry(log *[]int, versions tensor.VersionRange, codes ...schema.BuiltinOperator) *kernel.Registry {
	r := kernel.NewRegistry()
	next := 0
	for _, c := range codes {
		r.Register(kernel.Registration{Code: c, Versions: versions, New: func(kernel.OpInfo) (kernel.Op, error) {
			next++
			return &recordOp{index: next - 1, log: log}, nil
		}})
	}
	return r
}

type countingProfiler struct{ calls map[string]int }

func (p *countingProfiler) NodeDone(_ *model.Model, _ int, op string, _ time.Duration) {
	p.calls[op]++
}

func loadSplitConcat(t *testing.T) *model.Model {
	t.Helper()
	m, err := model.Load(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestInterpreterLifecycle(t *testing.T) {
	m := loadSplitConcat(t)
	var log []int
	prof := &countingProfiler{calls: map[string]int{}}
	it, err := NewInterpreter(m, &Options{
		Registry: fakeRegistry(&log, tensor.VersionRange{Min: 1, Max: 9}, schema.BuiltinOperatorSPLIT, schema.BuiltinOperatorCONCATENATION),
		Profiler: prof,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Invoke before AllocateTensors: %v, want ErrNotReady", err)
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	in := it.Input(0)
	pattern := make([]byte, in.ByteSize())
	for i := range pattern {
		pattern[i] = byte(i * 7)
	}
	if err := in.CopyFrom(pattern); err != nil {
		t.Fatal(err)
	}
	if err := in.CopyFrom(pattern[1:]); err == nil || !strings.Contains(err.Error(), "got") {
		t.Errorf("CopyFrom with a short buffer: %v", err)
	}
	if err := it.Invoke(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(log) != m.Subgraph(0).NumOperators() {
		t.Fatalf("ran %d nodes, model has %d", len(log), m.Subgraph(0).NumOperators())
	}
	if string(in.Data()) != string(pattern) {
		t.Error("Invoke changed the graph input")
	}
	for i := 0; i < it.NumOutputs(); i++ {
		if o := it.Output(i); len(o.Data()) != o.ByteSize() || o.Data()[0] == 0 {
			t.Errorf("output %d (%s) not written", i, o.Name())
		}
	}
	total := 0
	for _, n := range prof.calls {
		total += n
	}
	if total != len(log) {
		t.Errorf("profiler saw %d nodes, ran %d", total, len(log))
	}

	// A resize invalidates the plan until AllocateTensors runs again.
	if err := it.ResizeInput(0, []int{1, 4, 4, 3}); err != nil {
		t.Fatal(err)
	}
	if err := it.Invoke(t.Context()); !errors.Is(err, ErrNotReady) {
		t.Errorf("Invoke after ResizeInput: %v, want ErrNotReady", err)
	}
	if err := it.ResizeInput(0, []int{1, -4}); err == nil {
		t.Error("negative dimension accepted")
	}
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	if got := it.Input(0).ByteSize(); got != 48 {
		t.Errorf("resized input holds %d bytes, want 48", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := it.Invoke(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Invoke with a cancelled context: %v", err)
	}
}

func TestInterpreterRejectsOpVersionAboveRange(t *testing.T) {
	m := loadSplitConcat(t)
	var log []int
	for _, oc := range m.OpCodes() {
		if oc.Version != 1 {
			t.Fatalf("split_concat.tflite: %s is version %d; this test assumes 1", oc.Name(), oc.Version)
		}
	}
	// A kernel for version 0 only, as an old runtime would have: every op of
	// the model (version 1) is above the range.
	_, err := NewInterpreter(m, &Options{Registry: fakeRegistry(&log, tensor.VersionRange{Min: 0, Max: 0},
		schema.BuiltinOperatorSPLIT, schema.BuiltinOperatorCONCATENATION)})
	var uerr *UnsupportedOpError
	if !errors.As(err, &uerr) {
		t.Fatalf("err = %v, want UnsupportedOpError", err)
	}
	want := "op 1 (SPLIT) version 1 is not supported; supported versions 0"
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the version and range", err)
	}
}

func TestVariableTensorsStartAtZeroPoint(t *testing.T) {
	m, err := model.Load(shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	g, err := newGraph(m, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	vars := 0
	for _, tt := range g.tensors {
		if !tt.Variable {
			continue
		}
		vars++
		want := byte(0)
		if tt.Type == tensor.Int8 {
			want = byte(tt.ZeroPoint())
		}
		for i, b := range tt.Data {
			if b != want {
				t.Fatalf("variable %q byte %d = %d, want %d", tt.Name, i, b, want)
			}
		}
	}
	if vars != 2 {
		t.Errorf("found %d variable tensors, want 2", vars)
	}
}

func TestSignatureDefs(t *testing.T) {
	m, err := model.Load(shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	it, err := NewInterpreter(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	sigs := it.Signatures()
	if len(sigs) != 1 || sigs[0].Key != "serving_default" || len(sigs[0].Inputs) != 1 || sigs[0].Inputs[0].Name != "x" {
		t.Fatalf("signatures = %+v", sigs)
	}
	// The signature's input name finds the graph input.
	if got := it.InputByName("x"); got == nil || got.Index() != it.Input(0).Index() {
		t.Errorf("InputByName(x) = %v, want input 0", got)
	}
	if got := it.OutputByName(sigs[0].Outputs[0].Name); got == nil || got.Index() != it.Output(0).Index() {
		t.Errorf("OutputByName(%q) = %v, want output 0", sigs[0].Outputs[0].Name, got)
	}
	if it.InputByName("no such tensor") != nil {
		t.Error("InputByName found a tensor that does not exist")
	}
}

// TestOpCodesAboveThePlaceholder: files of the 2020 schema put codes above
// 127 only in builtin_code, with the deprecated byte at 127; the op code is
// the larger of the two.
func TestOpCodesAboveThePlaceholder(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{2})
	out := b.Tensor("out", tensor.Float32, []int{2})
	b.Op(schema.BuiltinOperatorGELU, 1, []int{in}, []int{out}, nil)
	b.Inputs(in)
	b.Outputs(out)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := m.OpCode(0).Builtin; got != schema.BuiltinOperatorGELU {
		t.Fatalf("op code = %v, want GELU (150)", got)
	}
}

// TestResizeInputHonoursTheModelsCap: a resize is held to the tensor-size
// cap the model was loaded with, not only to the default.
func TestResizeInputHonoursTheModelsCap(t *testing.T) {
	m, err := model.Load(shared.Model(t, "split_concat.tflite"), model.WithMaxTensorBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	var log []int
	it, err := NewInterpreter(m, &Options{Registry: fakeRegistry(&log, tensor.VersionRange{Min: 1, Max: 9},
		schema.BuiltinOperatorSPLIT, schema.BuiltinOperatorCONCATENATION)})
	if err != nil {
		t.Fatal(err)
	}
	if err := it.ResizeInput(0, []int{1, 16, 16, 3}); err != nil {
		t.Errorf("768 bytes refused under a 4096-byte cap: %v", err)
	}
	if err := it.ResizeInput(0, []int{1, 64, 64, 3}); err == nil || !strings.Contains(err.Error(), "4096-byte cap") {
		t.Errorf("12288 bytes under a 4096-byte cap: %v", err)
	}
}
