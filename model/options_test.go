package model_test

import (
	"testing"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestBuiltinOptions: an operator's options unpack to their *schema type,
// one without options gives nil, and FusedActivation reads what they carry.
func TestBuiltinOptions(t *testing.T) {
	b := modelbuild.New()
	x := b.Tensor("x", tensor.Float32, []int{1, 4})
	y := b.Tensor("y", tensor.Float32, []int{1, 4})
	z := b.Tensor("z", tensor.Float32, []int{1, 4})
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, x}, []int{y}, modelbuild.Options(schema.BuiltinOptionsAddOptions,
		&schema.AddOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeRELU6}))
	b.Op(schema.BuiltinOperatorRELU, 1, []int{y}, []int{z}, nil)
	b.Inputs(x)
	b.Outputs(z)
	m, err := model.New(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sg := m.Subgraph(0)
	add, err := sg.Operator(0).BuiltinOptions()
	if o, ok := add.(*schema.AddOptionsT); err != nil || !ok || o.FusedActivationFunction != schema.ActivationFunctionTypeRELU6 {
		t.Errorf("ADD's options = %#v, %v; want AddOptions with RELU6", add, err)
	}
	if a := model.FusedActivation(add); a != schema.ActivationFunctionTypeRELU6 {
		t.Errorf("FusedActivation(ADD's options) = %v, want RELU6", a)
	}
	relu, err := sg.Operator(1).BuiltinOptions()
	if relu != nil || err != nil {
		t.Errorf("RELU's options = %#v, %v; want none", relu, err)
	}
	if a := model.FusedActivation(relu); a != schema.ActivationFunctionTypeNONE {
		t.Errorf("FusedActivation(nil) = %v, want NONE", a)
	}
}
