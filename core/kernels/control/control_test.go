package control

import (
	"errors"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestRegistrations: every op at TFLite 2.9's versions (1 each).
func TestRegistrations(t *testing.T) {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	kerneltest.CheckRegistrations(t, Ops(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorWHILE:           v1,
		schema.BuiltinOperatorIF:              v1,
		schema.BuiltinOperatorCALL_ONCE:       v1,
		schema.BuiltinOperatorVAR_HANDLE:      v1,
		schema.BuiltinOperatorASSIGN_VARIABLE: v1,
		schema.BuiltinOperatorREAD_VARIABLE:   v1,
	})
}

// TestOutsideAnInterpreter: a node run alone (no subgraphs, no variables)
// is an error that says so, not a nil dereference. The interpreter's tests
// (core/controlflow_test.go) run these kernels against TFLite 2.9.
func TestOutsideAnInterpreter(t *testing.T) {
	for _, reg := range Ops() {
		op, err := reg.New(kernel.OpInfo{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		err = op.Prepare(&kernel.Node{})
		if !errors.Is(err, errNoInterpreter) {
			t.Errorf("%s: %v, want errNoInterpreter", reg.Name(), err)
		}
	}
}

// TestCheckCond: the cond subgraph's answer is one BOOL, of shape [] or [1].
func TestCheckCond(t *testing.T) {
	for _, c := range []struct {
		t  *tensor.Tensor
		ok bool
	}{
		{tensor.NewTensor(tensor.Bool), true},
		{tensor.NewTensor(tensor.Bool, 1), true},
		{tensor.NewTensor(tensor.Bool, 2), false},
		{tensor.NewTensor(tensor.Bool, 1, 1), false},
		{tensor.NewTensor(tensor.Int32), false},
	} {
		if err := checkCond(c.t, true); (err == nil) != c.ok {
			t.Errorf("%s %v: %v, want ok %v", c.t.Type, c.t.Shape, err, c.ok)
		}
	}
}
