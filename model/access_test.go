package model

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestAccessorsAreReadOnly changes everything the accessors hand out and
// checks that the model did not change: a Model is shared by interpreters,
// delegates and twins, so no caller may alter it.
func TestAccessorsAreReadOnly(t *testing.T) {
	m, err := Load(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	sg := m.Subgraph(0)
	in, firstOp := sg.Inputs(), sg.Operator(0)
	tensor0 := sg.Tensor(in[0])
	before := []any{slices.Clone(in), slices.Clone(firstOp.Inputs()), slices.Clone(tensor0.Shape), tensor0.Quant.Scale[0],
		m.OpCode(0), len(m.Signatures())}

	in[0] = -7
	sg.Outputs()[0] = -7
	firstOp.Inputs()[0] = -7
	firstOp.Outputs()[0] = -7
	tensor0.Shape[0] = -7
	tensor0.Quant.Scale[0] = -7
	sg.Tensors()[in[0]+7].Shape[1] = -7
	m.OpCodes()[0].Version = -7
	m.Subgraphs()[0] = nil
	for _, s := range m.Signatures() {
		s.Inputs = nil
	}

	again := sg.Tensor(sg.Inputs()[0])
	after := []any{sg.Inputs(), sg.Operator(0).Inputs(), again.Shape, again.Quant.Scale[0], m.OpCode(0), len(m.Signatures())}
	for i := range before {
		if !equalAny(before[i], after[i]) {
			t.Errorf("value %d changed from %v to %v through an accessor", i, before[i], after[i])
		}
	}
	if m.Subgraph(0) != sg || sg.Operator(0).Outputs()[0] < 0 {
		t.Error("the subgraph list or an operator's outputs changed through an accessor")
	}
}

func equalAny(a, b any) bool {
	if x, ok := a.([]int); ok {
		return slices.Equal(x, b.([]int))
	}
	return a == b
}

// TestCountCaps: a subgraph with more operators or tensors than the caps
// is a load error that names the cap.
func TestCountCaps(t *testing.T) {
	path := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	for _, c := range []struct {
		opt  LoadOption
		want string
	}{
		{WithMaxOperators(30), "malformed model: subgraph 0: 31 operators, more than the cap of 30 (WithMaxOperators)"},
		{WithMaxTensors(10), "more than the cap of 10 (WithMaxTensors)"},
	} {
		_, err := Load(path, c.opt)
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	if m, err := Load(path, WithMaxOperators(31), WithMaxTensors(1000)); err != nil {
		t.Errorf("at the caps: %v", err)
	} else {
		m.Close()
	}
}
