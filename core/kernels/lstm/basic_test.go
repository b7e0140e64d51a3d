package lstm

import (
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// basicQuantNode is a quantized basic-kernel node of 1 batch row, 2 inputs
// and 1 unit whose weights are all at their zero point and whose bias is 0:
// every gate gets 0 before its activation.
func basicQuantNode() *kernel.Node {
	q := func(t *tensor.Tensor, scale float32, zp int64) *tensor.Tensor {
		t.Quant = &tensor.Quantization{Scale: []float32{scale}, ZeroPoint: []int64{zp}}
		return t
	}
	w := q(tensor.NewTensor(tensor.Uint8, 4, 3), 0.01, 120)
	for i := range w.Data {
		w.Data[i] = 120
	}
	w.Const = true
	bias := q(tensor.NewTensor(tensor.Int32, 4), 0.01/128, 0)
	bias.Const = true
	in := q(tensor.NewTensor(tensor.Uint8, 1, 2), 1.0/128, 128)
	in.Data[0], in.Data[1] = 7, 250
	prevA := q(tensor.NewTensor(tensor.Uint8, 1, 1), 1.0/128, 128)
	prevS := q(tensor.NewTensor(tensor.Int16, 1, 1), 1.0/2048, 0)
	prevS.Int16s()[0] = 2048 // 1.0 with 4 integer bits
	return &kernel.Node{
		Inputs: []*tensor.Tensor{in, prevA, w, bias, prevS},
		Outputs: []*tensor.Tensor{q(&tensor.Tensor{Type: tensor.Uint8}, 1.0/128, 128), q(&tensor.Tensor{Type: tensor.Int16}, 1.0/2048, 0),
			q(&tensor.Tensor{Type: tensor.Uint8}, 1.0/128, 128), q(&tensor.Tensor{Type: tensor.Int16}, 1.0/4096, 0)},
		Threads: 1,
	}
}

// TestLSTMBasicQuantizedCell checks LstmCell<4> on gates at 0: every
// logistic is 0.5 and the input modulation tanh(0) = 0, so the state halves
// (1.0 -> 0.5, raw 1024) and the activation is 0.5*tanh(0.5) = 0.231, 30/128
// above 128; Eval copies both back into the previous activation and state.
func TestLSTMBasicQuantizedCell(t *testing.T) {
	n := basicQuantNode()
	op := &basicOp{}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	for _, o := range n.Outputs {
		o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
	}
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	if got := n.Outputs[basicStateOut].Int16s()[0]; got != 1024 {
		t.Errorf("state %d, want 1024", got)
	}
	if got := n.Outputs[basicActivOut].Data[0]; got != 158 {
		t.Errorf("activation %d, want 158", got)
	}
	if got := n.Outputs[basicConcatTemp].Data; string(got) != string([]byte{7, 250, 0}) {
		t.Errorf("concatenation %v", got)
	}
	if n.Inputs[basicPrevState].Int16s()[0] != 1024 || n.Inputs[basicPrevActiv].Data[0] != 158 {
		t.Errorf("previous state %d and activation %d not updated", n.Inputs[basicPrevState].Int16s()[0], n.Inputs[basicPrevActiv].Data[0])
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = op.Eval(n) }); allocs != 0 {
		t.Errorf("%v allocations per Eval", allocs)
	}
}

func TestLSTMBasicRefusals(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(n *kernel.Node)
		want string
	}{
		{"constant state", func(n *kernel.Node) { n.Inputs[basicPrevState].Const = true }, "must not be constant"},
		{"state scale", func(n *kernel.Node) { n.Outputs[basicStateOut].Quant.Scale[0] = 1.0 / 1024 }, "state scale 0.0009765625"},
		{"int8 weights", func(n *kernel.Node) { n.Inputs[basicWeights].Type = tensor.Int8 }, "weights INT8"},
		{"weights shape", func(n *kernel.Node) { n.Inputs[basicWeights].Shape = []int{4, 2} }, "weights has shape [4 2], want [4 3]"},
		{"three outputs", func(n *kernel.Node) { n.Outputs = n.Outputs[:3] }, "expects 5 inputs and 4 outputs, got 5 and 3"},
	} {
		n := basicQuantNode()
		c.edit(n)
		err := (&basicOp{}).Prepare(n)
		if err == nil || !strings.HasPrefix(err.Error(), "LSTM (basic kernel): ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
