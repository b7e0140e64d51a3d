package lstm

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds BIDIRECTIONAL_SEQUENCE_LSTM as TensorFlow Lite 2.9 runs it
// (kernels/bidirectional_sequence_lstm.cc): two sequence LSTMs without
// layer norm over the same input, the backward one from the last time step
// to the first, float32 or hybrid (int8 or uint8 weights). Each direction is
// an lstmOp on a node of its own that points at the bidirectional node's
// tensors.

// Input indices of BIDIRECTIONAL_SEQUENCE_LSTM: the input, each
// direction's 17 weights and biases (in the order of LSTM's inputs 1-17),
// the states, the auxiliary input and each direction's auxiliary weights.
const (
	bidiInput        = 0
	bidiFwWeights    = 1  // 1..17
	bidiBwWeights    = 18 // 18..34
	bidiFwState      = 35 // output state; 36: cell state
	bidiBwState      = 37 // output state; 38: cell state
	bidiAuxInput     = 39
	bidiFwAuxWeights = 40 // 40..43, per gate
	bidiBwAuxWeights = 44 // 44..47, per gate
	bidiInputs       = 48
)

// NewBidirectionalSequenceLSTM returns the kernel for the given options;
// merge puts both directions' outputs in the first output, forward then
// backward in each row.
func NewBidirectionalSequenceLSTM(p LSTMParams, merge bool) kernel.Op {
	op := &bidiOp{p: p, merge: merge}
	for d := range op.dir {
		op.dir[d] = lstmOp{name: "BIDIRECTIONAL_SEQUENCE_LSTM", p: p, direction: true, reverse: d == 1}
	}
	return op
}

func newBidirectionalSequenceLSTM(info kernel.OpInfo) (kernel.Op, error) {
	// Without options TFLite leaves its zero-initialised params: batch
	// major, outputs not merged.
	var p LSTMParams
	var merge bool
	t, ok, err := kernel.StrictOptions(info.Operator, "BIDIRECTIONAL_SEQUENCE_LSTM", schema.BuiltinOptionsBidirectionalSequenceLSTMOptions)
	if err != nil {
		return nil, err
	}
	if ok {
		var tbl schema.BidirectionalSequenceLSTMOptions
		tbl.Init(t.Bytes, t.Pos)
		p = LSTMParams{
			Activation:               tbl.FusedActivationFunction(),
			CellClip:                 tbl.CellClip(),
			ProjClip:                 tbl.ProjClip(),
			TimeMajor:                tbl.TimeMajor(),
			AsymmetricQuantizeInputs: tbl.AsymmetricQuantizeInputs(),
		}
		merge = tbl.MergeOutputs()
	}
	return NewBidirectionalSequenceLSTM(p, merge), nil
}

// bidiOp is one BIDIRECTIONAL_SEQUENCE_LSTM node.
type bidiOp struct {
	p     LSTMParams
	merge bool

	dir  [2]lstmOp             // forward, backward
	node [2]kernel.Node        // each direction's view of the node
	in   [2][29]*tensor.Tensor // their inputs
	out  [2]tensor.Tensor      // their output, sharing the real output's data
}

// Prepare checks the node as TFLite's Prepare does, prepares both
// directions and sets the output shapes.
func (op *bidiOp) Prepare(n *kernel.Node) error {
	if err := op.prepare(n); err != nil {
		return fmt.Errorf("BIDIRECTIONAL_SEQUENCE_LSTM: %w", err)
	}
	return nil
}

func (op *bidiOp) prepare(n *kernel.Node) error {
	if len(n.Inputs) != bidiInputs {
		return fmt.Errorf("expects %d inputs, got %d", bidiInputs, len(n.Inputs))
	}
	nOut := 2
	if op.merge {
		nOut = 1
	}
	if len(n.Outputs) != nOut {
		return fmt.Errorf("expects %d outputs (merge_outputs %v), got %d", nOut, op.merge, len(n.Outputs))
	}
	for _, o := range n.Outputs {
		if o == nil {
			return fmt.Errorf("missing output")
		}
	}
	in := n.Input(bidiInput)
	if in == nil {
		return fmt.Errorf("missing input")
	}
	if in.Type != tensor.Float32 {
		return kernel.Unsupported("%s input", in.Type)
	}
	if len(in.Shape) != 3 {
		return fmt.Errorf("input has shape %v, want rank 3", in.Shape)
	}
	aux := n.Input(bidiAuxInput)
	// With an auxiliary input but no auxiliary weights (TensorFlow's
	// static_bidirectional_rnn after another bidirectional LSTM), the
	// backward direction reads the auxiliary input instead of the input;
	// with both, each direction adds the auxiliary input's products.
	crossLinks := n.Input(bidiFwAuxWeights+lstmGateForget) != nil
	if aux != nil && (len(aux.Shape) != 3 || aux.Shape[0] != in.Shape[0] || aux.Shape[1] != in.Shape[1]) {
		return fmt.Errorf("auxiliary input has shape %v, want [%d %d *]", aux.Shape, in.Shape[0], in.Shape[1])
	}
	if err := op.checkAuxWeights(n, crossLinks); err != nil {
		return err
	}
	if aux != nil && !crossLinks && aux.Type != tensor.Float32 {
		return kernel.Unsupported("%s auxiliary input", aux.Type)
	}

	for d := range 2 {
		ins := &op.in[d]
		clear(ins[:])
		ins[lstmInput] = in
		w, state, auxW := bidiFwWeights, bidiFwState, bidiFwAuxWeights
		if d == 1 {
			w, state, auxW = bidiBwWeights, bidiBwState, bidiBwAuxWeights
			if aux != nil && !crossLinks {
				ins[lstmInput] = aux
			}
		}
		copy(ins[lstmInputToInputWeights:lstmProjectionBias+1], n.Inputs[w:w+17])
		ins[lstmOutputState], ins[lstmCellState] = n.Inputs[state], n.Inputs[state+1]
		if crossLinks {
			ins[lstmAuxInput] = aux
			copy(ins[lstmAuxWeightsIdx[0]:], n.Inputs[auxW:auxW+4])
		}
		op.node[d] = kernel.Node{Inputs: ins[:], Outputs: []*tensor.Tensor{&op.out[d]},
			Threads: n.Threads, Workers: n.Workers, Scratch: n.Scratch}
		op.out[d] = tensor.Tensor{Type: n.Outputs[min(d, nOut-1)].Type}
	}
	// TFLite checks both directions against the forward sizes.
	fw, bw := &op.dir[0], &op.dir[1]
	for d, name := range []string{"forward", "backward"} {
		dir := &op.dir[d]
		dir.outStride, dir.outOffset = 0, 0
		if err := dir.prepare(&op.node[d]); err != nil {
			return fmt.Errorf("%s cell: %w", name, err)
		}
	}
	if bw.nCell != fw.nCell || bw.nOutput != fw.nOutput {
		return fmt.Errorf("backward cell has %d cells and %d outputs, forward %d and %d",
			bw.nCell, bw.nOutput, fw.nCell, fw.nOutput)
	}
	if bw.hybrid != fw.hybrid {
		return kernel.Unsupported("forward and backward weights of different types")
	}
	if op.merge {
		// TFLite 2.9's batch-major EvalFloat and EvalHybrid find batch
		// row b's states at b times the output's row length, which with
		// merged outputs lies past the states' end from the second row on.
		if !op.p.TimeMajor && fw.nBatch > 1 {
			return kernel.Unsupported("merged outputs of a batch-major input with %d batch rows (TFLite 2.9 reads past its states)", fw.nBatch)
		}
		fw.outStride, bw.outStride = fw.nOutput+bw.nOutput, fw.nOutput+bw.nOutput
		bw.outOffset = fw.nOutput
	}
	lead := in.Shape[:2]
	for d, o := range n.Outputs {
		o.Shape = append(append(o.Shape[:0:0], lead...), op.dir[d].nOutput)
	}
	if op.merge {
		n.Outputs[0].Shape[2] = fw.nOutput + bw.nOutput
	}
	return nil
}

// checkAuxWeights checks that the six auxiliary forget, cell and output
// weights are all present (cross links, with an auxiliary input) or all
// absent.
func (op *bidiOp) checkAuxWeights(n *kernel.Node, crossLinks bool) error {
	for _, base := range []int{bidiFwAuxWeights, bidiBwAuxWeights} {
		for _, g := range []int{lstmGateForget, lstmGateCell, lstmGateOutput} {
			if (n.Input(base+g) != nil) != crossLinks {
				return fmt.Errorf("auxiliary input weights must be all present or all absent")
			}
		}
	}
	if crossLinks && n.Input(bidiAuxInput) == nil {
		return fmt.Errorf("auxiliary input weights without an auxiliary input")
	}
	return nil
}

// Eval runs the forward then the backward direction, updating their
// states in place.
func (op *bidiOp) Eval(n *kernel.Node) error {
	for d := range 2 {
		op.out[d].Data = n.Outputs[min(d, len(n.Outputs)-1)].Data
		op.out[d].Shape = n.Outputs[min(d, len(n.Outputs)-1)].Shape
		if err := op.dir[d].Eval(&op.node[d]); err != nil {
			return err
		}
	}
	return nil
}
