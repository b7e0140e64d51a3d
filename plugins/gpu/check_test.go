package gpu

import (
	"strings"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestCheckNodes: nodes TFLite's GPU delegate takes and this delegate
// lowers are accepted; one TFLite refuses keeps TFLite's reason. (One TFLite
// takes but the lowering refuses, an FC with a fused TANH, is in
// TestTensorOpsRefused.)
func TestCheckNodes(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1, 4, 4, 3})
	perm := b.Const("perm", tensor.Int32, []int{4}, raw32([]int32{0, 2, 1, 3}))
	moved := b.Tensor("moved", tensor.Float32, []int{1, 4, 4, 3})
	sum := b.Tensor("sum", tensor.Float32, []int{1, 4, 4, 3})
	out := b.Tensor("out", tensor.Float32, []int{1, 4, 4, 3})
	b.Op(schema.BuiltinOperatorTRANSPOSE, 1, []int{in, perm}, []int{moved},
		&schema.BuiltinOptionsT{Type: schema.BuiltinOptionsTransposeOptions, Value: &schema.TransposeOptionsT{}})
	b.Op(schema.BuiltinOperatorADD, 1, []int{moved, moved}, []int{sum},
		&schema.BuiltinOptionsT{Type: schema.BuiltinOptionsAddOptions, Value: &schema.AddOptionsT{}})
	b.Op(schema.BuiltinOperatorSQUEEZE, 1, []int{sum}, []int{out}, nil)
	b.Inputs(in)
	b.Outputs(out)
	vs, err := New().CheckNodes(t.Context(), b.Bytes(), []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if !vs[0].Accept {
		t.Errorf("TRANSPOSE: %+v", vs[0])
	}
	if !vs[1].Accept {
		t.Errorf("ADD: %+v", vs[1])
	}
	if vs[2].Accept || !strings.Contains(vs[2].Reason, "TFLite's GPU delegate has no parser") {
		t.Errorf("SQUEEZE: %+v", vs[2])
	}
}
