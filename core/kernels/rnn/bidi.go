package rnn

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// BIDIRECTIONAL_SEQUENCE_RNN as TFLite 2.9 runs it
// (kernels/bidirectional_sequence_rnn.cc): a forward cell over the sequence
// and a backward cell over it in reverse, each with its own variable
// hidden state, writing two outputs or, with merge_outputs, one whose rows
// hold the forward then the backward units.
//
// The optional auxiliary input serves two ways. With auxiliary weights
// (stacking with cross links) both cells add their auxiliary weights times
// it. Without them (stacking after another bidirectional layer) it is the
// backward cell's input instead of the input, which TFLite 2.9 honours in
// time-major layout only: batch-major, the backward cell reads the input.
// Other TFLite 2.9 behaviours kept here: the backward output is shaped
// [batch, time, units] even in time-major layout (its data is time-major),
// and the hybrid kernel in time-major layout runs the whole sequence
// max_time times over, the states carrying on from one pass to the next.
// One combination TFLite 2.9 crashes on is refused (see Prepare).

// Input indices of BIDIRECTIONAL_SEQUENCE_RNN.
const (
	bidiInput = iota
	bidiFwWeights
	bidiFwRecurrentWeights
	bidiFwBias
	bidiFwHiddenState
	bidiBwWeights
	bidiBwRecurrentWeights
	bidiBwBias
	bidiBwHiddenState
	bidiAuxInput     // optional
	bidiFwAuxWeights // optional
	bidiBwAuxWeights // optional
)

// BidiParams are the options of BIDIRECTIONAL_SEQUENCE_RNN.
type BidiParams struct {
	Params
	// MergeOutputs writes both cells' outputs into the first output.
	MergeOutputs bool
}

// NewBidirectionalSequenceRNN returns the BIDIRECTIONAL_SEQUENCE_RNN kernel.
func NewBidirectionalSequenceRNN(p BidiParams) kernel.Op { return &bidiOp{p: p} }

func newBidirectionalSequenceRNN(info kernel.OpInfo) (kernel.Op, error) {
	var p BidiParams
	if t, ok := info.Options(schema.BuiltinOptionsBidirectionalSequenceRNNOptions); ok {
		var o schema.BidirectionalSequenceRNNOptions
		o.Init(t.Bytes, t.Pos)
		p = BidiParams{
			Params: Params{Activation: o.FusedActivationFunction(), TimeMajor: o.TimeMajor(),
				AsymmetricQuantizeInputs: o.AsymmetricQuantizeInputs()},
			MergeOutputs: o.MergeOutputs(),
		}
	}
	return NewBidirectionalSequenceRNN(p), nil
}

const bidiName = "BIDIRECTIONAL_SEQUENCE_RNN"

// bidiOp is one BIDIRECTIONAL_SEQUENCE_RNN node.
type bidiOp struct {
	p BidiParams

	// Set by Prepare.
	batch, steps, inSize int
	fw, bw               cell
	// crossAux: both cells read the auxiliary input with their auxiliary
	// weights; bwFromAux: the backward cell reads the auxiliary input
	// instead of the input.
	crossAux, bwFromAux bool
	// passes is how many times the sequence runs (see above).
	passes int
}

// Prepare checks the node as TFLite's Prepare and Eval do and sets the
// outputs' shapes.
func (op *bidiOp) Prepare(n *kernel.Node) error {
	nOut := 2
	if op.p.MergeOutputs {
		nOut = 1
	}
	if len(n.Inputs) != 12 || len(n.Outputs) != nOut {
		return fmt.Errorf("%s: got %d inputs and %d outputs, want 12 and %d", bidiName, len(n.Inputs), len(n.Outputs), nOut)
	}
	for i := range bidiAuxInput {
		if n.Inputs[i] == nil {
			return fmt.Errorf("%s: input %d is missing", bidiName, i)
		}
	}
	in := n.Inputs[bidiInput]
	if in.Type != tensor.Float32 {
		return kernel.Unsupported("%s: %s input", bidiName, in.Type)
	}
	if len(in.Shape) != 3 {
		return fmt.Errorf("%s: input has shape %v, want rank 3", bidiName, in.Shape)
	}
	op.batch, op.steps, op.inSize = in.Shape[0], in.Shape[1], in.Shape[2]
	if op.p.TimeMajor {
		op.batch, op.steps = op.steps, op.batch
	}
	if err := op.checkAux(n); err != nil {
		return err
	}
	fwUnits, err := op.prepareCell(n, &op.fw, "fw_", bidiFwWeights, bidiFwAuxWeights)
	if err != nil {
		return err
	}
	bwUnits, err := op.prepareCell(n, &op.bw, "bw_", bidiBwWeights, bidiBwAuxWeights)
	if err != nil {
		return err
	}
	if op.fw.hybrid != op.bw.hybrid || n.Inputs[bidiBwWeights].Type != n.Inputs[bidiFwWeights].Type {
		return kernel.Unsupported("%s: %s forward weights with %s backward weights", bidiName, n.Inputs[bidiFwWeights].Type, n.Inputs[bidiBwWeights].Type)
	}
	// TFLite 2.9's hybrid step writes strided (merged) rows one batch row
	// at a time, passing a null zero-point array offset by the row, and
	// crashes from the second row on.
	if op.fw.hybrid && op.p.TimeMajor && op.p.MergeOutputs && op.batch > 1 && !op.p.AsymmetricQuantizeInputs {
		return kernel.Unsupported("%s: hybrid, time-major, merged outputs with %d batch rows and symmetric quantization (TFLite 2.9 crashes on it)", bidiName, op.batch)
	}
	op.passes = 1
	if op.fw.hybrid && op.p.TimeMajor {
		op.passes = op.steps
	}
	fwShape := []int{in.Shape[0], in.Shape[1], fwUnits}
	if op.p.MergeOutputs {
		fwShape[2] += bwUnits
	} else {
		kernel.SetShape(n.Outputs[1], []int{op.batch, op.steps, bwUnits})
	}
	kernel.SetShape(n.Outputs[0], fwShape)
	return nil
}

// checkAux checks the auxiliary input and weights: both weights or none,
// and an auxiliary input like the input.
func (op *bidiOp) checkAux(n *kernel.Node) error {
	aux, fwAux, bwAux := n.Inputs[bidiAuxInput], n.Inputs[bidiFwAuxWeights], n.Inputs[bidiBwAuxWeights]
	if (fwAux == nil) != (bwAux == nil) {
		return fmt.Errorf("%s: the forward and backward auxiliary weights must be both present or both absent", bidiName)
	}
	op.crossAux = fwAux != nil
	op.bwFromAux = aux != nil && !op.crossAux
	if op.crossAux && aux == nil {
		return fmt.Errorf("%s: auxiliary weights without an auxiliary input", bidiName)
	}
	if aux == nil {
		return nil
	}
	if aux.Type != tensor.Float32 {
		return kernel.Unsupported("%s: %s auxiliary input", bidiName, aux.Type)
	}
	// TFLite 2.9 steps through the auxiliary input with the input's row
	// length, so only an auxiliary input shaped like the input is read
	// right.
	if !equalShapes(aux.Shape, n.Inputs[bidiInput].Shape) {
		return kernel.Unsupported("%s: auxiliary input of shape %v with input of shape %v", bidiName, aux.Shape, n.Inputs[bidiInput].Shape)
	}
	return nil
}

func equalShapes(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// prepareCell checks and sets one direction's cell, whose weights, recurrent
// weights, bias and hidden state are inputs w..w+3 and auxiliary weights
// input auxW; it returns its number of units.
func (op *bidiOp) prepareCell(n *kernel.Node, c *cell, prefix string, w, auxW int) (int, error) {
	weights, rec, bias, state := n.Inputs[w], n.Inputs[w+1], n.Inputs[w+2], n.Inputs[w+3]
	hybrid, err := cellTypes(bidiName, prefix, weights, rec, bias, state, n.Outputs[0])
	if err != nil {
		return 0, err
	}
	units, err := checkCell(bidiName, prefix, op.inSize, op.batch, weights, rec, bias, state)
	if err != nil {
		return 0, err
	}
	if !state.Variable {
		return 0, fmt.Errorf("%s: the %shidden state (input %d) must be a variable tensor", bidiName, prefix, w+3)
	}
	var aux *tensor.Tensor
	if op.crossAux {
		aux = n.Inputs[auxW]
		if aux.Type != weights.Type {
			return 0, kernel.Unsupported("%s: %s %saux weights with %s weights", bidiName, aux.Type, prefix, weights.Type)
		}
		if len(aux.Shape) != 2 || aux.Shape[0] != units || aux.Shape[1] != op.inSize {
			return 0, fmt.Errorf("%s: %saux weights have shape %v, want [%d %d]", bidiName, prefix, aux.Shape, units, op.inSize)
		}
	}
	c.prepare(weights, rec, bias, aux, hybrid, op.p.AsymmetricQuantizeInputs, op.p.Activation)
	return units, nil
}

// Eval runs both cells over the sequence, updating their hidden states.
func (op *bidiOp) Eval(n *kernel.Node) error {
	x := n.Inputs[bidiInput].Float32s()
	var aux []float32
	if a := n.Inputs[bidiAuxInput]; a != nil {
		aux = a.Float32s()
	}
	fwOut, bwOut := n.Outputs[0].Float32s(), n.Outputs[0].Float32s()
	fwUnits, bwUnits := op.fw.units, op.bw.units
	fwStride, bwStride, bwOff := fwUnits, bwUnits, 0
	if op.p.MergeOutputs {
		fwStride, bwStride, bwOff = fwUnits+bwUnits, fwUnits+bwUnits, fwUnits
	} else {
		bwOut = n.Outputs[1].Float32s()
	}
	bwX, cellAux := x, aux
	if op.bwFromAux {
		cellAux = nil
		if op.p.TimeMajor {
			bwX = aux
		}
	}
	hf, hb := n.Inputs[bidiFwHiddenState].Float32s(), n.Inputs[bidiBwHiddenState].Float32s()
	for range op.passes {
		for b := range op.batch {
			for s := range op.steps {
				i := op.row(b, s)
				op.fw.step(x[i*op.inSize:], rowOf(cellAux, i, op.inSize), hf[b*fwUnits:(b+1)*fwUnits], fwOut[i*fwStride:])
			}
			for s := op.steps - 1; s >= 0; s-- {
				i := op.row(b, s)
				op.bw.step(bwX[i*op.inSize:], rowOf(cellAux, i, op.inSize), hb[b*bwUnits:(b+1)*bwUnits], bwOut[i*bwStride+bwOff:])
			}
		}
	}
	return nil
}

// row is the index of batch b's step s among the input's rows.
func (op *bidiOp) row(b, s int) int {
	if op.p.TimeMajor {
		return s*op.batch + b
	}
	return b*op.steps + s
}

// rowOf returns row i of v (nil when v is).
func rowOf(v []float32, i, n int) []float32 {
	if v == nil {
		return nil
	}
	return v[i*n : (i+1)*n]
}
