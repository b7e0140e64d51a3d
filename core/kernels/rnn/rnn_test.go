package rnn

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// variable marks t a variable tensor, as the model loader does for
// is_variable, and returns it.
func variable(t *tensor.Tensor) *tensor.Tensor { t.Variable = true; return t }

// prepared prepares op on a node of ins and outs and gives the outputs
// memory, as the interpreter does; the node's Evals are then the Invokes.
func prepared(t *testing.T, op kernel.Op, ins []*tensor.Tensor, outs ...*tensor.Tensor) *kernel.Node {
	t.Helper()
	n := &kernel.Node{Inputs: ins, Outputs: outs, Threads: 1}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		o.Data = tensor.NewTensor(o.Type, o.Shape...).Data
	}
	return n
}

// evalFloats runs one Invoke and checks the float output against want.
func evalFloats(t *testing.T, op kernel.Op, n *kernel.Node, invoke int, want ...float32) {
	t.Helper()
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	got := n.Outputs[0].Float32s()
	for i, w := range want {
		if math.Abs(float64(got[i]-w)) > 1e-6 {
			t.Fatalf("Invoke %d: out = %v, want %v", invoke, got, want)
		}
	}
}

// TestRNNStatePersists: the hidden state is the previous Invoke's output,
// h' = b + W·x + R·h, worked by hand.
func TestRNNStatePersists(t *testing.T) {
	op := NewRNN(Params{})
	n := prepared(t, op, []*tensor.Tensor{
		kerneltest.F32T([]int{1, 2}, 1, 2),
		kerneltest.ConstT(kerneltest.F32T([]int{2, 2}, 1, 0, 0, 1)),
		kerneltest.ConstT(kerneltest.F32T([]int{2, 2}, 0.5, 0, 0, 0.5)),
		kerneltest.ConstT(kerneltest.F32T([]int{2}, 0.125, -0.125)),
		variable(kerneltest.F32T([]int{1, 2})),
	}, kerneltest.OutT(tensor.Float32))
	evalFloats(t, op, n, 1, 1.125, 1.875)
	evalFloats(t, op, n, 2, 1.6875, 2.8125)   // 0.125+1+0.5625, -0.125+2+0.9375
	evalFloats(t, op, n, 3, 1.96875, 3.28125) // 0.125+1+0.84375, -0.125+2+1.40625
	if h := n.Inputs[rnnHiddenState].Float32s(); h[0] != 1.96875 || h[1] != 3.28125 {
		t.Errorf("hidden state %v, want the last output", h)
	}
}

// TestHybridRNNQuantizesPerRow: the input is quantized to int8 with scale
// max|x|/127 and rounded half away from zero: -0.5 becomes -64, so the
// identity weights (127 at scale 1/127) give -64/127, not -0.5.
func TestHybridRNNQuantizesPerRow(t *testing.T) {
	op := NewRNN(Params{})
	n := prepared(t, op, []*tensor.Tensor{
		kerneltest.F32T([]int{1, 2}, 1, -0.5),
		kerneltest.ConstT(kerneltest.WithQ(kerneltest.TensorOf[int8](tensor.Int8, []int{2, 2}, 127, 0, 0, 127), 1.0/127, 0)),
		kerneltest.ConstT(kerneltest.WithQ(kerneltest.TensorOf[int8](tensor.Int8, []int{2, 2}, 0, 0, 0, 0), 1, 0)),
		kerneltest.ConstT(kerneltest.F32T([]int{2}, 0, 0)),
		variable(kerneltest.F32T([]int{1, 2})),
	}, kerneltest.OutT(tensor.Float32))
	evalFloats(t, op, n, 1, 1, -64.0/127)
}

// TestSVDFMemory: each Invoke shifts the memory left and appends W_f·x;
// the output is the memory weighted by W_t (oldest first).
func TestSVDFMemory(t *testing.T) {
	op := NewSVDF(SVDFParams{Rank: 1})
	in := kerneltest.F32T([]int{1, 1}, 1)
	n := prepared(t, op, []*tensor.Tensor{
		in,
		kerneltest.ConstT(kerneltest.F32T([]int{1, 1}, 1)),
		kerneltest.ConstT(kerneltest.F32T([]int{1, 3}, 1, 10, 100)),
		nil,
		variable(kerneltest.F32T([]int{1, 3})),
	}, kerneltest.OutT(tensor.Float32))
	for i, want := range []float32{100, 210, 321, 32} { // memories 001, 012, 123, 230
		in.Float32s()[0] = float32((i + 1) % 4)
		evalFloats(t, op, n, i+1, want)
	}
}

// TestSVDFInteger: with unit scales the feature products go into the int16
// memory unchanged, the time sums plus the bias plus the output zero point
// make the output, clamped to int8 (RELU is required but not applied).
func TestSVDFInteger(t *testing.T) {
	op := NewSVDF(SVDFParams{Rank: 1, Activation: schema.ActivationFunctionTypeRELU})
	in := kerneltest.WithQ(kerneltest.TensorOf[int8](tensor.Int8, []int{1, 1}, 7), 1, 0)
	n := prepared(t, op, []*tensor.Tensor{
		in,
		kerneltest.ConstT(kerneltest.WithQ(kerneltest.TensorOf[int8](tensor.Int8, []int{1, 1}, 2), 1, 0)),
		kerneltest.ConstT(kerneltest.WithQ(kerneltest.TensorOf[int16](tensor.Int16, []int{1, 2}, 1, 3), 1, 0)),
		kerneltest.ConstT(kerneltest.TensorOf[int32](tensor.Int32, []int{1}, 5)),
		variable(kerneltest.WithQ(tensor.NewTensor(tensor.Int16, 1, 2), 1, 0)),
	}, kerneltest.QOut(tensor.Int8, 1, 3))
	for i, c := range []struct{ x, want int8 }{
		{7, 50},      // memory [0 14]: 3*14 + 5 + 3
		{-20, -98},   // memory [14 -40]: 14 - 120 + 5 + 3
		{0, -32},     // memory [-40 0]: -40 + 5 + 3
		{-100, -128}, // memory [0 -200]: -600 + 8, clamped
	} {
		in.Int8s()[0] = c.x
		if err := op.Eval(n); err != nil {
			t.Fatal(err)
		}
		if got := n.Outputs[0].Int8s()[0]; got != c.want {
			t.Errorf("Invoke %d: out = %d, want %d", i+1, got, c.want)
		}
	}
}

// TestRefusals: what TFLite 2.9 refuses is refused in Prepare, with an
// error that names the op and the reason; unsupported types and options
// wrap kernel.ErrUnsupported.
func TestRefusals(t *testing.T) {
	rnnInputs := func(in *tensor.Tensor, stateVar bool) []*tensor.Tensor {
		state := kerneltest.F32T([]int{1, 2})
		state.Variable = stateVar
		return []*tensor.Tensor{in,
			kerneltest.ConstT(kerneltest.F32T([]int{2, 2}, 1, 0, 0, 1)),
			kerneltest.ConstT(kerneltest.F32T([]int{2, 2}, 0, 0, 0, 0)),
			kerneltest.ConstT(kerneltest.F32T([]int{2}, 0, 0)), state}
	}
	svdfInt := func(act schema.ActivationFunctionType) (kernel.Op, []*tensor.Tensor) {
		return NewSVDF(SVDFParams{Rank: 1, Activation: act}), []*tensor.Tensor{
			kerneltest.QT(tensor.Int8, []int{1, 1}, 1, 0),
			kerneltest.QT(tensor.Int8, []int{1, 1}, 1, 0),
			kerneltest.QT(tensor.Int16, []int{1, 2}, 1, 0),
			nil,
			variable(kerneltest.QT(tensor.Int16, []int{1, 2}, 1, 0)),
		}
	}
	tanhOp, tanhIns := svdfInt(schema.ActivationFunctionTypeTANH)
	for _, c := range []struct {
		name        string
		op          kernel.Op
		ins         []*tensor.Tensor
		out         *tensor.Tensor
		unsupported bool
		msg         string
	}{
		{"state not variable", NewRNN(Params{}), rnnInputs(kerneltest.F32T([]int{1, 2}), false), kerneltest.OutT(tensor.Float32), false, "RNN: the hidden state (input 4) must be a variable tensor"},
		{"int8 input", NewRNN(Params{}), rnnInputs(kerneltest.QT(tensor.Int8, []int{1, 2}, 1, 0), true), kerneltest.OutT(tensor.Float32), true, "RNN: INT8 input"},
		{"wrong input size", NewSequenceRNN(Params{}), rnnInputs(kerneltest.F32T([]int{1, 1, 3}), true), kerneltest.OutT(tensor.Float32), false, "weights have shape [2 2], want [units 3]"},
		{"integer SVDF without RELU", tanhOp, tanhIns, kerneltest.QOut(tensor.Int8, 1, 0), true, "integer SVDF with activation TANH"},
	} {
		err := kerneltest.PrepareErr(c.op, c.out, c.ins...)
		if err == nil || !strings.Contains(err.Error(), c.msg) || errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: got %v, want %q (unsupported %v)", c.name, err, c.msg, c.unsupported)
		}
	}
}

// TestEvalDoesNotAllocate: the steady-state Invoke of the hybrid kernels,
// asymmetric quantization included, allocates nothing.
func TestEvalDoesNotAllocate(t *testing.T) {
	w := func(rows, cols int) *tensor.Tensor {
		return kerneltest.ConstT(kerneltest.LcgFill(kerneltest.QT(tensor.Int8, []int{rows, cols}, 0.01, 0), 3))
	}
	rnnOp := NewSequenceRNN(Params{AsymmetricQuantizeInputs: true, Activation: schema.ActivationFunctionTypeTANH})
	rn := prepared(t, rnnOp, []*tensor.Tensor{
		kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 2, 3, 4), 1), w(5, 4), w(5, 5),
		kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 5)), variable(tensor.NewTensor(tensor.Float32, 2, 5)),
	}, kerneltest.OutT(tensor.Float32))
	svdfOp := NewSVDF(SVDFParams{Rank: 2, AsymmetricQuantizeInputs: true})
	sn := prepared(t, svdfOp, []*tensor.Tensor{
		kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 2, 4), 1), w(6, 4), w(6, 3), nil,
		variable(tensor.NewTensor(tensor.Float32, 2, 18)),
	}, kerneltest.OutT(tensor.Float32))
	for name, run := range map[string]func() error{"UNIDIRECTIONAL_SEQUENCE_RNN": func() error { return rnnOp.Eval(rn) }, "SVDF": func() error { return svdfOp.Eval(sn) }} {
		if err := run(); err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(20, func() { _ = run() }); a != 0 {
			t.Errorf("%s: %v allocations per Eval", name, a)
		}
	}
}
