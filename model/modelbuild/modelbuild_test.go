package modelbuild_test

import (
	"bytes"
	"os"
	"testing"
	"unsafe"

	"github.com/delego/delego/model"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
)

func TestBuildTinyModel(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Uint8, []int{1, 4}, modelbuild.Quant(0.5, 3))
	w := b.Const("w", tensor.Float32, []int{2}, []byte{0, 0, 128, 63, 0, 0, 0, 64})
	out := b.Tensor("out", tensor.Uint8, []int{1, 4}, modelbuild.Quant(0.5, 3))
	b.Op(schema.BuiltinOperatorADD, 1, []int{in, w}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU}))
	res := b.Tensor("res", tensor.Uint8, []int{1, 4})
	b.CustomOp("my-op", 2, []int{out}, []int{res}, []byte{1, 2, 3})
	b.Inputs(in)
	b.Outputs(res)

	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	sg := m.Subgraph(0)
	if sg.NumTensors() != 4 || sg.NumOperators() != 2 || sg.Inputs()[0] != in || sg.Outputs()[0] != res {
		t.Fatalf("subgraph = %+v", sg)
	}
	if q := sg.Tensor(in).Quant; q == nil || q.Scale[0] != 0.5 || q.ZeroPoint[0] != 3 {
		t.Errorf("quantization = %+v", q)
	}
	data := m.Buffer(sg.Tensor(w).Buffer)
	if !bytes.Equal(data, []byte{0, 0, 128, 63, 0, 0, 0, 64}) {
		t.Errorf("const data = %v", data)
	}
	if uintptr(unsafe.Pointer(&data[0]))%16 != 0 {
		t.Error("constant buffer is not 16-byte aligned")
	}
	if oc := m.OpCodeOf(sg.Operator(1)); oc.Custom != "my-op" || oc.Version != 2 || !bytes.Equal(sg.Operator(1).CustomOptions(), []byte{1, 2, 3}) {
		t.Errorf("custom op = %+v", oc)
	}
	if oc := m.OpCodeOf(sg.Operator(0)); oc.Builtin != schema.BuiltinOperatorADD {
		t.Errorf("builtin op = %+v", oc)
	}
}

// TestRoundTripRealModel unpacks a real model and packs it again: every
// table must survive.
func TestRoundTripRealModel(t *testing.T) {
	raw, err := os.ReadFile(shared.Model(t, "keras_lstm_mnist_ptq.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	orig, err := model.New(raw)
	if err != nil {
		t.Fatal(err)
	}
	again, err := model.New(modelbuild.Pack(schema.GetRootAsModel(raw, 0).UnPack()))
	if err != nil {
		t.Fatal(err)
	}
	a, b := orig.Subgraph(0), again.Subgraph(0)
	if a.NumTensors() != b.NumTensors() || a.NumOperators() != b.NumOperators() {
		t.Fatalf("tables differ: %d/%d tensors, %d/%d ops", a.NumTensors(), b.NumTensors(), a.NumOperators(), b.NumOperators())
	}
	for i := range a.NumTensors() {
		ta, tb := a.Tensor(i), b.Tensor(i)
		if ta.Name != tb.Name || ta.Type != tb.Type || !bytes.Equal(orig.Buffer(ta.Buffer), again.Buffer(tb.Buffer)) {
			t.Errorf("tensor %d differs", i)
		}
	}
	for i := range a.NumOperators() {
		if orig.OpCodeOf(a.Operator(i)) != again.OpCodeOf(b.Operator(i)) {
			t.Errorf("op %d: %+v vs %+v", i, orig.OpCodeOf(a.Operator(i)), again.OpCodeOf(b.Operator(i)))
		}
	}
}
