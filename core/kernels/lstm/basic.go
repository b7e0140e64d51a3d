package lstm

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// This file holds LSTM's basic kernel (kernel_type BASIC) as TensorFlow
// Lite 2.9 runs it (lstm.cc's basic kernel and LstmCell): one time step of
// a cell whose four gates come from one fully connected layer over the
// input and the previous activation side by side, float32 or quantized
// (uint8 activations and weights, int32 bias, int16 state with 4 integer
// bits). Inputs: input, previous activation, weights, bias, previous state;
// outputs: activation, state, and the concatenation and the gates before
// their activation functions, which TFLite exposes too. Eval also copies
// the new activation and state back into the previous ones, as TFLite does.

// Input and output indices of the basic kernel.
const (
	basicInput      = 0
	basicPrevActiv  = 1
	basicWeights    = 2
	basicBias       = 3
	basicPrevState  = 4
	basicActivOut   = 0
	basicStateOut   = 1
	basicConcatTemp = 2
	basicActivTemp  = 3
)

// basicStateIntBits is the only number of integer bits of the quantized
// state TFLite 2.9 runs (LstmCell<4>).
const basicStateIntBits = 4

// basicOp is one LSTM node with the basic kernel.
type basicOp struct {
	// Set by Prepare.
	quantized           bool
	nBatch, nIn, nDepth int
	accMul              lstmQuantMul
	weightsZP           int32
	logistic, tanh      *kernel.FixedMemo
}

// Prepare checks the node as TFLite's basic Prepare does and sets the
// output shapes; it also checks the types and the state's scale, which
// TFLite checks in Eval.
func (op *basicOp) Prepare(n *kernel.Node) error {
	if err := op.prepare(n); err != nil {
		return fmt.Errorf("LSTM (basic kernel): %w", err)
	}
	return nil
}

func (op *basicOp) prepare(n *kernel.Node) error {
	if len(n.Inputs) != 5 || len(n.Outputs) != 4 {
		return fmt.Errorf("expects 5 inputs and 4 outputs, got %d and %d", len(n.Inputs), len(n.Outputs))
	}
	for i, t := range n.Inputs {
		if t == nil {
			return fmt.Errorf("missing input %d", i)
		}
	}
	for i, t := range n.Outputs {
		if t == nil {
			return fmt.Errorf("missing output %d", i)
		}
	}
	in, prevA, w, bias, prevS := n.Inputs[basicInput], n.Inputs[basicPrevActiv], n.Inputs[basicWeights], n.Inputs[basicBias], n.Inputs[basicPrevState]
	if len(in.Shape) != 2 {
		return fmt.Errorf("input has shape %v, want rank 2", in.Shape)
	}
	nb := in.Shape[0]
	if len(prevA.Shape) != 2 || prevA.Shape[0] != nb {
		return fmt.Errorf("previous activation has shape %v, want [%d depth]", prevA.Shape, nb)
	}
	op.nBatch, op.nIn, op.nDepth = nb, in.Shape[1], prevA.Shape[1]
	total := op.nIn + op.nDepth
	if err := lstmShape(w, "weights", 4*op.nDepth, total); err != nil {
		return err
	}
	if err := lstmShape(bias, "bias", 4*op.nDepth); err != nil {
		return err
	}
	if err := lstmShape(prevS, "previous state", nb, op.nDepth); err != nil {
		return err
	}
	if prevA.Const || prevS.Const {
		return fmt.Errorf("the previous activation and state must not be constant: Eval writes them")
	}
	outs := n.Outputs
	outs[basicActivOut].Shape = append(outs[basicActivOut].Shape[:0:0], prevA.Shape...)
	outs[basicStateOut].Shape = append(outs[basicStateOut].Shape[:0:0], prevS.Shape...)
	outs[basicConcatTemp].Shape = []int{nb, total}
	outs[basicActivTemp].Shape = []int{nb, 4 * op.nDepth}
	return op.checkTypes(n)
}

// checkTypes accepts the two type combinations TFLite 2.9 runs and, for
// the quantized one, precomputes its parameters.
func (op *basicOp) checkTypes(n *kernel.Node) error {
	types := func(want ...tensor.DType) bool {
		all := append(append([]*tensor.Tensor{}, n.Inputs...), n.Outputs...)
		for i, t := range all {
			if t.Type != want[i] {
				return false
			}
		}
		return true
	}
	f, u8, i16, i32 := tensor.Float32, tensor.Uint8, tensor.Int16, tensor.Int32
	switch {
	case types(f, f, f, f, f, f, f, f, f):
		op.quantized = false
		return nil
	case types(u8, u8, u8, i32, i16, u8, i16, u8, i16):
	default:
		return kernel.Unsupported("input %s, weights %s, state %s: not a combination of types LstmCell runs (all FLOAT32, or UINT8 with INT32 bias and INT16 state)",
			n.Inputs[basicInput].Type, n.Inputs[basicWeights].Type, n.Inputs[basicPrevState].Type)
	}
	op.quantized = true
	stateScale := n.Outputs[basicStateOut].Scale()
	log2, ok := kernel.CheckedLog2(stateScale)
	if !ok || 15+log2 != basicStateIntBits {
		return kernel.Unsupported("state scale %g (TFLite 2.9 runs 2^-11 only: a power of two with %d integer bits)", stateScale, basicStateIntBits)
	}
	op.accMul = lstmQuantize(4096 * float64(n.Inputs[basicBias].Scale()))
	op.weightsZP = n.Inputs[basicWeights].ZeroPoint()
	op.logistic, op.tanh = kernel.NewFixedMemo(n, false, 3), kernel.NewFixedMemo(n, true, 3)
	return nil
}

// Eval runs the cell and copies the new activation and state into the
// previous ones.
func (op *basicOp) Eval(n *kernel.Node) error {
	if op.quantized {
		op.evalQuantized(n)
	} else {
		op.evalFloat(n)
	}
	copy(n.Inputs[basicPrevActiv].Data, n.Outputs[basicActivOut].Data)
	copy(n.Inputs[basicPrevState].Data, n.Outputs[basicStateOut].Data)
	return nil
}

// basicConcat writes each batch row of in and then of prev into dst.
func basicConcat[T any](dst, in, prev []T, nb, nIn, nDepth int) {
	total := nIn + nDepth
	for b := range nb {
		copy(dst[b*total:], in[b*nIn:(b+1)*nIn])
		copy(dst[b*total+nIn:], prev[b*nDepth:(b+1)*nDepth])
	}
}

func (op *basicOp) evalFloat(n *kernel.Node) {
	nb, nIn, d := op.nBatch, op.nIn, op.nDepth
	concat, gates := n.Outputs[basicConcatTemp].Float32s(), n.Outputs[basicActivTemp].Float32s()
	basicConcat(concat, n.Inputs[basicInput].Float32s(), n.Inputs[basicPrevActiv].Float32s(), nb, nIn, d)
	bias := n.Inputs[basicBias].Float32s()
	for b := range nb {
		copy(gates[b*4*d:(b+1)*4*d], bias)
	}
	kernel.MatVecAccFloat(n.Inputs[basicWeights].Float32s(), 4*d, nIn+d, concat, nb, gates)
	sigmoid := func(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
	prevS := n.Inputs[basicPrevState].Float32s()
	state, activ := n.Outputs[basicStateOut].Float32s(), n.Outputs[basicActivOut].Float32s()
	for b := range nb {
		g := gates[b*4*d : (b+1)*4*d]
		for c := range d {
			ig, mod := sigmoid(g[c]), float32(math.Tanh(float64(g[d+c])))
			fg, og := sigmoid(g[2*d+c]), sigmoid(g[3*d+c])
			s := float32(ig*mod) + float32(fg*prevS[b*d+c])
			state[b*d+c] = s
			activ[b*d+c] = og * float32(math.Tanh(float64(s)))
		}
	}
}

// basicRuyScale rescales a fully connected sum as ruy's x86 kernels do in
// TFLite 2.9's optimized LstmCell: the high product rounded half up, then
// the right shift rounded half up (not TFLite's reference rounding, half
// away from zero).
func basicRuyScale(acc int32, mul lstmQuantMul) int64 {
	left, right := max(mul.shift, 0), max(-mul.shift, 0)
	r := (int64(acc<<left)*int64(mul.m) + 1<<30) >> 31
	if right > 0 {
		r = (r + int64(1)<<(right-1)) >> right
	}
	return r
}

// evalQuantized is TFLite's optimized LstmCell<4>: the fully connected
// layer with inputs offset by -128 and the weights by their zero point,
// rescaled to Q3.12 (basicRuyScale); the gates in 16-bit fixed point; the activation back to uint8
// around 128.
func (op *basicOp) evalQuantized(n *kernel.Node) {
	nb, nIn, d := op.nBatch, op.nIn, op.nDepth
	total := nIn + d
	concat, gates := n.Outputs[basicConcatTemp].Uint8s(), n.Outputs[basicActivTemp].Int16s()
	basicConcat(concat, n.Inputs[basicInput].Uint8s(), n.Inputs[basicPrevActiv].Uint8s(), nb, nIn, d)
	w, bias := n.Inputs[basicWeights].Uint8s(), n.Inputs[basicBias].Int32s()
	for b := range nb {
		x := concat[b*total : (b+1)*total]
		for r := range 4 * d {
			acc := bias[r]
			for i, wv := range w[r*total : (r+1)*total] {
				acc += (int32(x[i]) - 128) * (int32(wv) - op.weightsZP)
			}
			v := basicRuyScale(acc, op.accMul)
			gates[b*4*d+r] = int16(min(max(v, math.MinInt16), math.MaxInt16))
		}
	}
	prevS := n.Inputs[basicPrevState].Int16s()
	state, activ := n.Outputs[basicStateOut].Int16s(), n.Outputs[basicActivOut].Uint8s()
	for b := range nb {
		g := gates[b*4*d : (b+1)*4*d]
		for c := range d {
			ig, mod := op.logistic.At(g[c]), op.tanh.At(g[d+c])
			fg, og := op.logistic.At(g[2*d+c]), op.logistic.At(g[3*d+c])
			// F0 * F0 -> F0; F0 * F4 -> F4; the sum in F4, saturating.
			s := kernel.FixedSaturatingAdd(kernel.FixedRescale(kernel.FixedMul(ig, mod), 0, basicStateIntBits),
				kernel.FixedMul(fg, prevS[b*d+c]))
			// tanh of the state rescaled to F3 (saturating).
			t := op.tanh.At(kernel.FixedRescale(s, basicStateIntBits, 3))
			a := kernel.RoundingDivideByPOT(int32(kernel.FixedMul(og, t)), 8)
			state[b*d+c] = s
			activ[b*d+c] = uint8(128 + min(max(a, -128), 127))
		}
	}
}
