package rnn

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorRNN, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32}, New: newRNN},
		{Code: schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_RNN, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32}, New: newSequenceRNN},
		{Code: schema.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_RNN, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32}, New: newBidirectionalSequenceRNN},
		{Code: schema.BuiltinOperatorSVDF, Versions: tensor.VersionRange{Min: 1, Max: 4}, Types: []tensor.DType{tensor.Float32, tensor.Int8}, New: newSVDF},
	}
}

// Input indices of RNN and UNIDIRECTIONAL_SEQUENCE_RNN.
const (
	rnnInput = iota
	rnnWeights
	rnnRecurrentWeights
	rnnBias
	rnnHiddenState
)

// Params are the options of RNN and UNIDIRECTIONAL_SEQUENCE_RNN.
type Params struct {
	// Activation is applied to each step's output (and new state).
	Activation schema.ActivationFunctionType
	// TimeMajor (UNIDIRECTIONAL_SEQUENCE_RNN only) selects a [time, batch,
	// input] input instead of [batch, time, input].
	TimeMajor bool
	// AsymmetricQuantizeInputs makes the hybrid kernel quantize its float
	// inputs with a zero point per batch row.
	AsymmetricQuantizeInputs bool
}

// NewRNN returns the RNN kernel: one step of a basic RNN cell over a
// [batch, input] input.
func NewRNN(p Params) kernel.Op { return &rnnOp{name: "RNN", p: p} }

// NewSequenceRNN returns the UNIDIRECTIONAL_SEQUENCE_RNN kernel: the cell
// run over every step of a sequence.
func NewSequenceRNN(p Params) kernel.Op {
	return &rnnOp{name: "UNIDIRECTIONAL_SEQUENCE_RNN", seq: true, p: p}
}

func newRNN(info kernel.OpInfo) (kernel.Op, error) {
	var p Params
	// TFLite reads options of another type as none: zeroed parameters.
	if t, ok := info.Options(schema.BuiltinOptionsRNNOptions); ok {
		var o schema.RNNOptions
		o.Init(t.Bytes, t.Pos)
		p.Activation, p.AsymmetricQuantizeInputs = o.FusedActivationFunction(), o.AsymmetricQuantizeInputs()
	}
	return NewRNN(p), nil
}

func newSequenceRNN(info kernel.OpInfo) (kernel.Op, error) {
	var p Params
	if t, ok := info.Options(schema.BuiltinOptionsSequenceRNNOptions); ok {
		var o schema.SequenceRNNOptions
		o.Init(t.Bytes, t.Pos)
		p = Params{Activation: o.FusedActivationFunction(), TimeMajor: o.TimeMajor(), AsymmetricQuantizeInputs: o.AsymmetricQuantizeInputs()}
	}
	return NewSequenceRNN(p), nil
}

// rnnOp is one RNN or UNIDIRECTIONAL_SEQUENCE_RNN node.
type rnnOp struct {
	name string
	seq  bool
	p    Params

	// Set by Prepare.
	batch, steps, inSize int
	c                    cell
}

// Prepare checks the node as TFLite's Prepare does and sets the output's
// shape.
func (op *rnnOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, op.name, 5, 1); err != nil {
		return err
	}
	in := n.Inputs[rnnInput]
	w, rec, bias, state := n.Inputs[rnnWeights], n.Inputs[rnnRecurrentWeights], n.Inputs[rnnBias], n.Inputs[rnnHiddenState]
	if in.Type != tensor.Float32 {
		return kernel.Unsupported("%s: %s input", op.name, in.Type)
	}
	hybrid, err := cellTypes(op.name, "", w, rec, bias, state, n.Outputs[0])
	if err != nil {
		return err
	}
	rank := 2
	if op.seq {
		rank = 3
	}
	if len(in.Shape) != rank {
		return fmt.Errorf("%s: input has shape %v, want rank %d", op.name, in.Shape, rank)
	}
	op.batch, op.steps, op.inSize = in.Shape[0], 1, in.Shape[rank-1]
	if op.seq {
		op.steps = in.Shape[1]
		if op.p.TimeMajor {
			op.batch, op.steps = op.steps, op.batch
		}
	}
	units, err := checkCell(op.name, "", op.inSize, op.batch, w, rec, bias, state)
	if err != nil {
		return err
	}
	if !state.Variable {
		return fmt.Errorf("%s: the hidden state (input %d) must be a variable tensor", op.name, rnnHiddenState)
	}
	op.c.prepare(w, rec, bias, nil, hybrid, op.p.AsymmetricQuantizeInputs, op.p.Activation)
	shape := []int{op.batch, units}
	if op.seq {
		shape = []int{in.Shape[0], in.Shape[1], units}
	}
	kernel.SetShape(n.Outputs[0], shape)
	return nil
}

// cellTypes checks the types of a cell's tensors (prefix names the cell,
// "fw_" or "bw_", or is empty) and reports whether the cell is hybrid:
// float32 weights make a float cell, int8 or uint8 ones a hybrid cell; the
// bias, the state and the output are float32.
func cellTypes(op, prefix string, w, rec, bias, state, out *tensor.Tensor) (hybrid bool, err error) {
	switch w.Type {
	case tensor.Float32:
	case tensor.Int8, tensor.Uint8:
		hybrid = true
	default:
		return false, kernel.Unsupported("%s: %s %sweights", op, w.Type, prefix)
	}
	if rec.Type != w.Type {
		return false, fmt.Errorf("%s: %srecurrent weights are %s, the %sweights %s", op, prefix, rec.Type, prefix, w.Type)
	}
	for _, t := range []struct {
		name string
		t    *tensor.Tensor
	}{{prefix + "bias", bias}, {prefix + "hidden state", state}, {"output", out}} {
		if t.t.Type != tensor.Float32 {
			return false, kernel.Unsupported("%s: %s %s", op, t.t.Type, t.name)
		}
	}
	return hybrid, nil
}

// checkCell checks the shapes of a cell's tensors against the input size
// and batch and returns the cell's number of units.
func checkCell(op, prefix string, inSize, batch int, w, rec, bias, state *tensor.Tensor) (units int, err error) {
	if len(w.Shape) != 2 || w.Shape[1] != inSize {
		return 0, fmt.Errorf("%s: %sweights have shape %v, want [units %d]", op, prefix, w.Shape, inSize)
	}
	units = w.Shape[0]
	if len(rec.Shape) != 2 || rec.Shape[0] != units || rec.Shape[1] != units {
		return 0, fmt.Errorf("%s: %srecurrent weights have shape %v, want [%d %d]", op, prefix, rec.Shape, units, units)
	}
	if len(bias.Shape) != 1 || bias.Shape[0] != units {
		return 0, fmt.Errorf("%s: %sbias has shape %v, want [%d]", op, prefix, bias.Shape, units)
	}
	if len(state.Shape) != 2 || state.Shape[0] != batch || state.Shape[1] != units {
		return 0, fmt.Errorf("%s: %shidden state has shape %v, want [%d %d]", op, prefix, state.Shape, batch, units)
	}
	return units, nil
}

// Eval runs the cell over every step of every batch row, updating the
// hidden state.
func (op *rnnOp) Eval(n *kernel.Node) error {
	x, out := n.Inputs[rnnInput].Float32s(), n.Outputs[0].Float32s()
	h := n.Inputs[rnnHiddenState].Float32s()
	units := op.c.units
	for b := range op.batch {
		hb := h[b*units : (b+1)*units]
		for s := range op.steps {
			i := b*op.steps + s
			if op.p.TimeMajor {
				i = s*op.batch + b
			}
			op.c.step(x[i*op.inSize:(i+1)*op.inSize], nil, hb, out[i*units:(i+1)*units])
		}
	}
	return nil
}
