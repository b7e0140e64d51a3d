package lstm

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds UNIDIRECTIONAL_SEQUENCE_LSTM and LSTM's full kernel (the
// basic kernel is in basic.go) as TensorFlow Lite 2.9 runs them
// (kernels/unidirectional_sequence_lstm.cc, lstm.cc and lstm_eval.cc): the
// shared option parsing and shape checks.
// LSTM is the same cell run for one time step on a [batch, input] input.
// The float path is in float.go, the fully integer (int8 activations, int16
// cell state) path in integer.go. The hybrid path (float32 activations, int8
// weights) shares the float code.

// Ops returns the family's registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return []kernel.Registration{{
		Code:     schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM,
		Versions: tensor.VersionRange{Min: 1, Max: 3},
		Types:    []tensor.DType{tensor.Float32, tensor.Int8},
		New:      newUnidirectionalSequenceLSTM,
	}, {
		Code:     schema.BuiltinOperatorLSTM,
		Versions: tensor.VersionRange{Min: 1, Max: 4},
		Types:    []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8},
		New:      newLSTM,
	}, {
		Code:     schema.BuiltinOperatorBIDIRECTIONAL_SEQUENCE_LSTM,
		Versions: tensor.VersionRange{Min: 1, Max: 3},
		Types:    []tensor.DType{tensor.Float32},
		New:      newBidirectionalSequenceLSTM,
	}}
}

// Input indices of the LSTM operator (lstm_shared.h in TFLite).
const (
	lstmInput                      = 0
	lstmInputToInputWeights        = 1 // optional (absent for CIFG)
	lstmInputToForgetWeights       = 2
	lstmInputToCellWeights         = 3
	lstmInputToOutputWeights       = 4
	lstmRecurrentToInputWeights    = 5 // optional (absent for CIFG)
	lstmRecurrentToForgetWeights   = 6
	lstmRecurrentToCellWeights     = 7
	lstmRecurrentToOutputWeights   = 8
	lstmCellToInputWeights         = 9  // optional peephole
	lstmCellToForgetWeights        = 10 // optional peephole
	lstmCellToOutputWeights        = 11 // optional peephole
	lstmInputGateBias              = 12 // optional (absent for CIFG)
	lstmForgetGateBias             = 13
	lstmCellGateBias               = 14
	lstmOutputGateBias             = 15
	lstmProjectionWeights          = 16 // optional
	lstmProjectionBias             = 17 // optional
	lstmOutputState                = 18 // variable
	lstmCellState                  = 19 // variable
	lstmInputLayerNormCoefficients = 20 // optional
	lstmForgetLayerNormCoeffs      = 21 // optional
	lstmCellLayerNormCoeffs        = 22 // optional
	lstmOutputLayerNormCoeffs      = 23 // optional

	// A direction of BIDIRECTIONAL_SEQUENCE_LSTM has an optional auxiliary
	// input, with weights per gate, after these (lstmOp.aux).
	lstmAuxInput = 24
)

// The gates, in the order the per-gate tables below use.
const (
	lstmGateInput = iota
	lstmGateForget
	lstmGateCell
	lstmGateOutput
)

var (
	lstmInputWeightsIdx     = [4]int{lstmInputToInputWeights, lstmInputToForgetWeights, lstmInputToCellWeights, lstmInputToOutputWeights}
	lstmRecurrentWeightsIdx = [4]int{lstmRecurrentToInputWeights, lstmRecurrentToForgetWeights, lstmRecurrentToCellWeights, lstmRecurrentToOutputWeights}
	lstmBiasIdx             = [4]int{lstmInputGateBias, lstmForgetGateBias, lstmCellGateBias, lstmOutputGateBias}
	lstmLayerNormIdx        = [4]int{lstmInputLayerNormCoefficients, lstmForgetLayerNormCoeffs, lstmCellLayerNormCoeffs, lstmOutputLayerNormCoeffs}
	lstmAuxWeightsIdx       = [4]int{lstmAuxInput + 1, lstmAuxInput + 2, lstmAuxInput + 3, lstmAuxInput + 4}
	// Peephole weights exist for the input, forget and output gates only.
	lstmPeepholeIdx = [4]int{lstmCellToInputWeights, lstmCellToForgetWeights, -1, lstmCellToOutputWeights}
	lstmGateNames   = [4]string{"input", "forget", "cell", "output"}
)

// LSTMParams are the options of UNIDIRECTIONAL_SEQUENCE_LSTM and of LSTM's
// full kernel.
type LSTMParams struct {
	// Activation is the cell gate's and the output's activation (float and
	// hybrid paths; the integer path always uses tanh, as TFLite does).
	Activation schema.ActivationFunctionType
	// CellClip and ProjClip clip the cell state and the projected output to
	// [-clip, clip]; 0 means no clipping.
	CellClip, ProjClip float32
	// TimeMajor selects [time, batch, input] layout instead of
	// [batch, time, input] (UNIDIRECTIONAL_SEQUENCE_LSTM only).
	TimeMajor bool
	// AsymmetricQuantizeInputs makes the hybrid kernel quantize its float
	// activations with a zero point per batch row.
	AsymmetricQuantizeInputs bool
}

// NewUnidirectionalSequenceLSTM returns the kernel for the given options.
func NewUnidirectionalSequenceLSTM(p LSTMParams) kernel.Op {
	return &lstmOp{name: "UNIDIRECTIONAL_SEQUENCE_LSTM", p: p}
}

// NewLSTM returns LSTM's full kernel for the given options (TimeMajor is
// ignored: the input is one time step).
func NewLSTM(p LSTMParams) kernel.Op {
	p.TimeMajor = true
	return &lstmOp{name: "LSTM", step: true, p: p}
}

func newLSTM(info kernel.OpInfo) (kernel.Op, error) {
	// Unlike UNIDIRECTIONAL_SEQUENCE_LSTM, TFLite 2.9 refuses an LSTM
	// operator without options (they choose the kernel); made without a
	// model, the kernel gets the zeroed defaults.
	var p LSTMParams
	t, ok, err := kernel.StrictOptions(info.Operator, "LSTM", schema.BuiltinOptionsLSTMOptions)
	if err != nil {
		return nil, err
	}
	if !ok && info.Operator != nil {
		return nil, fmt.Errorf("LSTM: the operator has no LSTMOptions")
	}
	if ok {
		var tbl schema.LSTMOptions
		tbl.Init(t.Bytes, t.Pos)
		switch k := tbl.KernelType(); k {
		case schema.LSTMKernelTypeFULL:
		case schema.LSTMKernelTypeBASIC:
			return &basicOp{}, nil
		default:
			return nil, kernel.Unsupported("LSTM: kernel type %s", k)
		}
		p = LSTMParams{
			Activation:               tbl.FusedActivationFunction(),
			CellClip:                 tbl.CellClip(),
			ProjClip:                 tbl.ProjClip(),
			AsymmetricQuantizeInputs: tbl.AsymmetricQuantizeInputs(),
		}
	}
	return NewLSTM(p), nil
}

func newUnidirectionalSequenceLSTM(info kernel.OpInfo) (kernel.Op, error) {
	// Without options TFLite leaves its zero-initialised params: no
	// activation, no clipping.
	var p LSTMParams
	t, ok, err := kernel.StrictOptions(info.Operator, "UNIDIRECTIONAL_SEQUENCE_LSTM", schema.BuiltinOptionsUnidirectionalSequenceLSTMOptions)
	if err != nil {
		return nil, err
	}
	if ok {
		var tbl schema.UnidirectionalSequenceLSTMOptions
		tbl.Init(t.Bytes, t.Pos)
		p = LSTMParams{
			Activation:               tbl.FusedActivationFunction(),
			CellClip:                 tbl.CellClip(),
			ProjClip:                 tbl.ProjClip(),
			TimeMajor:                tbl.TimeMajor(),
			AsymmetricQuantizeInputs: tbl.AsymmetricQuantizeInputs(),
		}
	}
	return NewUnidirectionalSequenceLSTM(p), nil
}

// lstmOp is one UNIDIRECTIONAL_SEQUENCE_LSTM node, one LSTM node (step: a
// single time step, time-major) or one direction of a
// BIDIRECTIONAL_SEQUENCE_LSTM (direction).
type lstmOp struct {
	name string
	step bool
	p    LSTMParams

	// A direction of BIDIRECTIONAL_SEQUENCE_LSTM: its node has 29 inputs,
	// the last 5 an optional auxiliary input and its weights; it may run
	// its time steps last to first and write each output row's values at
	// an offset into longer rows.
	direction bool
	reverse   bool
	outStride int // output row length, 0: nOutput
	outOffset int

	// Set by Prepare.
	integer, hybrid                   bool
	aux                               bool // auxiliary input and weights present
	nBatch, nTime, nInput, nAux       int
	nCell, nOutput                    int
	cifg, peephole, projection, lnorm bool

	f lstmFloatState
	q lstmIntState
}

// lstmShape checks a weight's rank and dimensions.
func lstmShape(t *tensor.Tensor, name string, dims ...int) error {
	if len(t.Shape) != len(dims) {
		return fmt.Errorf("%s has rank %d, want %d", name, len(t.Shape), len(dims))
	}
	for i, d := range dims {
		if t.Shape[i] != d {
			return fmt.Errorf("%s has shape %v, want %v", name, t.Shape, dims)
		}
	}
	return nil
}

// Prepare checks the node as TFLite's Prepare and CheckInputTensorDimensions
// do, sets the output shape and precomputes what Eval needs.
func (op *lstmOp) Prepare(n *kernel.Node) error {
	if err := op.prepare(n); err != nil {
		return fmt.Errorf("%s: %w", op.name, err)
	}
	return nil
}

func (op *lstmOp) prepare(n *kernel.Node) error {
	in, err := op.nodeInputs(n)
	if err != nil {
		return err
	}
	if op.p.CellClip < 0 || op.p.ProjClip < 0 {
		return fmt.Errorf("negative clip (cell %g, projection %g)", op.p.CellClip, op.p.ProjClip)
	}
	if err := op.setSizes(n, in); err != nil {
		return err
	}
	if err := op.setVariant(n, in); err != nil {
		return err
	}
	if err := op.checkDimensions(n); err != nil {
		return err
	}
	outState, cellState, err := op.checkState(n)
	if err != nil {
		return err
	}

	out := n.Outputs[0]
	out.Shape = append(append(out.Shape[:0:0], in.Shape[:len(in.Shape)-1]...), op.nOutput)

	if op.integer {
		return op.prepareInteger(n)
	}
	if outState.Type != tensor.Float32 || cellState.Type != tensor.Float32 || out.Type != tensor.Float32 {
		return kernel.Unsupported("float LSTM with %s output state, %s cell state, %s output",
			outState.Type, cellState.Type, out.Type)
	}
	return op.prepareFloat(n)
}

// nodeInputs checks the input and output counts and that every input a
// LSTM cannot do without is present; it returns the input.
func (op *lstmOp) nodeInputs(n *kernel.Node) (*tensor.Tensor, error) {
	switch {
	case op.direction:
		if len(n.Inputs) != lstmAuxInput+5 {
			return nil, fmt.Errorf("expects %d inputs, got %d", lstmAuxInput+5, len(n.Inputs))
		}
	case len(n.Inputs) != 20 && len(n.Inputs) != 24:
		return nil, fmt.Errorf("expects 20 or 24 inputs, got %d", len(n.Inputs))
	}
	if len(n.Outputs) != 1 || n.Outputs[0] == nil {
		return nil, fmt.Errorf("expects 1 output, got %d", len(n.Outputs))
	}
	in := n.Input(lstmInput)
	if in == nil {
		return nil, fmt.Errorf("missing input")
	}
	for _, i := range []int{lstmInputToForgetWeights, lstmInputToCellWeights, lstmInputToOutputWeights,
		lstmRecurrentToForgetWeights, lstmRecurrentToCellWeights, lstmRecurrentToOutputWeights,
		lstmForgetGateBias, lstmCellGateBias, lstmOutputGateBias} {
		if n.Input(i) == nil {
			return nil, fmt.Errorf("missing required input %d", i)
		}
	}
	return in, nil
}

// setSizes reads the batch, time and input sizes from the input and the
// cell and output sizes from the output gate's weights.
func (op *lstmOp) setSizes(n *kernel.Node, in *tensor.Tensor) error {
	switch {
	case op.step:
		// TFLite 2.9 reads [batch, input] from the first two dimensions
		// whatever the rank; only rank 2 is well defined.
		if len(in.Shape) != 2 {
			return fmt.Errorf("input has shape %v, want rank 2", in.Shape)
		}
		op.nBatch, op.nTime, op.nInput = in.Shape[0], 1, in.Shape[1]
	case len(in.Shape) != 3:
		// TFLite reads dims[2] whatever the rank; only rank 3 is well
		// defined.
		return fmt.Errorf("input has shape %v, want rank 3", in.Shape)
	case op.p.TimeMajor:
		op.nTime, op.nBatch, op.nInput = in.Shape[0], in.Shape[1], in.Shape[2]
	default:
		op.nBatch, op.nTime, op.nInput = in.Shape[0], in.Shape[1], in.Shape[2]
	}
	i2o := n.Input(lstmInputToOutputWeights)
	r2o := n.Input(lstmRecurrentToOutputWeights)
	if len(i2o.Shape) != 2 || len(r2o.Shape) != 2 {
		return fmt.Errorf("weights must be 2-D, got %v and %v", i2o.Shape, r2o.Shape)
	}
	op.nCell, op.nOutput = i2o.Shape[0], r2o.Shape[1]
	op.aux, op.nAux = false, 0
	if op.direction && n.Input(lstmAuxWeightsIdx[lstmGateForget]) != nil {
		aux := n.Input(lstmAuxInput)
		if aux == nil || len(aux.Shape) != 3 {
			return fmt.Errorf("auxiliary input weights without a rank 3 auxiliary input")
		}
		op.aux, op.nAux = true, aux.Shape[2]
		// TFLite 2.9 finds each step's auxiliary rows with the input's row
		// length (see lstmSteps): shorter auxiliary rows are read past the
		// auxiliary input's end.
		steps := op.nTime
		if !op.p.TimeMajor {
			steps *= op.nBatch
		}
		if op.nAux < op.nInput && steps > 1 {
			return kernel.Unsupported("auxiliary input rows of %d values, shorter than the input's %d (TFLite 2.9 reads past the auxiliary input)",
				op.nAux, op.nInput)
		}
	}
	return nil
}

// setVariant records which optional parts the node has (layer norm, CIFG,
// peephole, projection) and picks the kernel from the types of the input
// and the weights, as TFLite's Eval does.
func (op *lstmOp) setVariant(n *kernel.Node, in *tensor.Tensor) error {
	op.lnorm = len(n.Inputs) == 24 && n.Input(lstmForgetLayerNormCoeffs) != nil
	op.cifg = n.Input(lstmInputToInputWeights) == nil
	op.peephole = n.Input(lstmCellToOutputWeights) != nil
	op.projection = n.Input(lstmProjectionWeights) != nil
	op.integer = in.Type == tensor.Int8
	op.hybrid = false
	wType := n.Input(lstmInputToOutputWeights).Type
	switch {
	case wType == tensor.Float32 && in.Type == tensor.Float32:
	case (wType == tensor.Int8 || wType == tensor.Uint8) && in.Type == tensor.Float32:
		// TFLite reads uint8 hybrid weights as int8 bits too.
		op.hybrid = true
	case wType == tensor.Int8 && in.Type == tensor.Int8:
	default:
		return kernel.Unsupported("input %s with %s weights", in.Type, wType)
	}
	return nil
}

// checkDimensions is TFLite's CheckInputTensorDimensions: the shapes and
// types of the weights, peepholes, biases, projection and layer norm
// coefficients, and which of them go together.
func (op *lstmOp) checkDimensions(n *kernel.Node) error {
	wType := n.Input(lstmInputToOutputWeights).Type
	if err := op.checkGateWeights(n); err != nil {
		return err
	}
	if err := op.checkPeepholes(n, wType); err != nil {
		return err
	}
	if err := op.checkBiases(n); err != nil {
		return err
	}
	if err := op.checkProjection(n, wType); err != nil {
		return err
	}
	return op.checkLayerNorm(n)
}

// biasType is the type of the gate and projection biases: INT32 for the
// integer kernel, FLOAT32 otherwise.
func (op *lstmOp) biasType() tensor.DType {
	if op.integer {
		return tensor.Int32
	}
	return tensor.Float32
}

// checkGateWeights checks the input and recurrent weights of every gate.
func (op *lstmOp) checkGateWeights(n *kernel.Node) error {
	if (n.Input(lstmInputToInputWeights) == nil) != (n.Input(lstmRecurrentToInputWeights) == nil) {
		return fmt.Errorf("input gate weights must be all present or all absent")
	}
	for g := range 4 {
		if g == lstmGateInput && op.cifg {
			continue
		}
		if err := lstmShape(n.Input(lstmInputWeightsIdx[g]), "input_to_"+lstmGateNames[g]+"_weights", op.nCell, op.nInput); err != nil {
			return err
		}
		if err := lstmShape(n.Input(lstmRecurrentWeightsIdx[g]), "recurrent_to_"+lstmGateNames[g]+"_weights", op.nCell, op.nOutput); err != nil {
			return err
		}
		if !op.aux {
			continue
		}
		name := "aux_input_to_" + lstmGateNames[g] + "_weights"
		aw := n.Input(lstmAuxWeightsIdx[g])
		if aw == nil {
			return fmt.Errorf("missing %s", name)
		}
		if err := lstmShape(aw, name, op.nCell, op.nAux); err != nil {
			return err
		}
		if wType := n.Input(lstmInputToOutputWeights).Type; aw.Type != wType {
			return kernel.Unsupported("%s %s with %s weights", name, aw.Type, wType)
		}
	}
	return nil
}

// checkPeepholes checks the peephole weights: all present (the input
// gate's but for CIFG) or all absent, of the weights' type (INT16 for the
// integer kernel).
func (op *lstmOp) checkPeepholes(n *kernel.Node, wType tensor.DType) error {
	peepholeType := wType
	if op.integer {
		peepholeType = tensor.Int16
	}
	for g, idx := range lstmPeepholeIdx {
		if idx < 0 {
			continue
		}
		if t := n.Input(idx); t != nil {
			if err := lstmShape(t, "cell_to_"+lstmGateNames[g]+"_weights", op.nCell); err != nil {
				return err
			}
			if t.Type != peepholeType {
				return fmt.Errorf("cell_to_%s_weights is %s, want %s", lstmGateNames[g], t.Type, peepholeType)
			}
		}
	}
	c2i, c2f, c2o := n.Input(lstmCellToInputWeights), n.Input(lstmCellToForgetWeights), n.Input(lstmCellToOutputWeights)
	allPeephole := (c2i != nil || op.cifg) && c2f != nil && c2o != nil
	noPeephole := c2i == nil && c2f == nil && c2o == nil
	if !allPeephole && !noPeephole {
		return fmt.Errorf("peephole weights must be all present or all absent")
	}
	return nil
}

// checkBiases checks the gate biases: the input gate's exactly when the
// LSTM is not CIFG.
func (op *lstmOp) checkBiases(n *kernel.Node) error {
	biasType := op.biasType()
	for g, idx := range lstmBiasIdx {
		t := n.Input(idx)
		if g == lstmGateInput {
			if op.cifg {
				if t != nil {
					return fmt.Errorf("CIFG LSTM has an input gate bias")
				}
				continue
			}
			if t == nil {
				return fmt.Errorf("missing input gate bias")
			}
		}
		if err := lstmShape(t, lstmGateNames[g]+"_gate_bias", op.nCell); err != nil {
			return err
		}
		if t.Type != biasType {
			return fmt.Errorf("%s_gate_bias is %s, want %s", lstmGateNames[g], t.Type, biasType)
		}
	}
	return nil
}

// checkProjection checks the projection weights and bias, and that an LSTM
// without projection has as many outputs as cells.
func (op *lstmOp) checkProjection(n *kernel.Node, wType tensor.DType) error {
	nCell, nOutput := op.nCell, op.nOutput
	if pw := n.Input(lstmProjectionWeights); pw != nil {
		if err := lstmShape(pw, "projection_weights", nOutput, nCell); err != nil {
			return err
		}
		if pw.Type != wType {
			return kernel.Unsupported("projection weights %s with %s weights", pw.Type, wType)
		}
	} else if n.Input(lstmProjectionBias) != nil {
		return fmt.Errorf("projection bias without projection weights")
	}
	if pb := n.Input(lstmProjectionBias); pb != nil {
		if err := lstmShape(pb, "projection_bias", nOutput); err != nil {
			return err
		}
		if biasType := op.biasType(); pb.Type != biasType {
			return fmt.Errorf("projection_bias is %s, want %s", pb.Type, biasType)
		}
	}
	if !op.projection && nOutput != nCell {
		return fmt.Errorf("%d outputs but %d cells without projection", nOutput, nCell)
	}
	return nil
}

// checkLayerNorm checks the layer norm coefficients of a layer norm LSTM:
// one per gate (none for a CIFG input gate), FLOAT32 or, for the integer
// kernel, INT16.
func (op *lstmOp) checkLayerNorm(n *kernel.Node) error {
	if !op.lnorm {
		return nil
	}
	lnType := tensor.Float32
	if op.integer {
		lnType = tensor.Int16
	}
	for g, idx := range lstmLayerNormIdx {
		t := n.Input(idx)
		if g == lstmGateInput && op.cifg {
			if t != nil {
				return fmt.Errorf("CIFG LSTM has input layer norm coefficients")
			}
			continue
		}
		if t == nil {
			return fmt.Errorf("missing %s layer norm coefficients", lstmGateNames[g])
		}
		if err := lstmShape(t, lstmGateNames[g]+"_layer_norm_coefficients", op.nCell); err != nil {
			return err
		}
		if t.Type != lnType {
			return fmt.Errorf("%s layer norm coefficients are %s, want %s", lstmGateNames[g], t.Type, lnType)
		}
	}
	return nil
}

// checkState checks that the output and cell states are variables of the
// right size and returns them.
func (op *lstmOp) checkState(n *kernel.Node) (outState, cellState *tensor.Tensor, err error) {
	outState, cellState = n.Input(lstmOutputState), n.Input(lstmCellState)
	if outState == nil || !outState.Variable || cellState == nil || !cellState.Variable {
		return nil, nil, fmt.Errorf("output and cell state must be variable tensors")
	}
	if outState.NumElements() != op.nBatch*op.nOutput {
		return nil, nil, fmt.Errorf("output state has %d elements, want %d", outState.NumElements(), op.nBatch*op.nOutput)
	}
	if cellState.NumElements() != op.nBatch*op.nCell {
		return nil, nil, fmt.Errorf("cell state has %d elements, want %d", cellState.NumElements(), op.nBatch*op.nCell)
	}
	return outState, cellState, nil
}

// Eval runs the sequence, updating the state tensors in place.
func (op *lstmOp) Eval(n *kernel.Node) error {
	if op.integer {
		return op.evalInteger(n)
	}
	return op.evalFloat(n)
}
