package rnn

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// SVDF as TFLite 2.9 runs it (kernels/svdf.cc, internal/reference/svdf.h):
// a fully connected layer factored into a feature matrix and a time
// matrix. Each Invoke shifts every filter's memory one step to the left,
// writes the feature matrix times the input into its last slot, and
// reduces the memory with the time weights:
//
//	state[b,f,:] = (state[b,f,1:], W_feature[f]·x[b])
//	out[b,u]     = act(bias[u] + Σ_r W_time[u*rank+r]·state[b,u*rank+r,:])
//
// The float kernel works in float32; the hybrid one (int8 or uint8
// feature and time weights) quantizes the input per batch row for the
// feature product and dequantizes the time weights; the fully integer one
// (int8 input and feature weights, int16 time weights and state, int32
// bias, int8 output) rescales the feature products into the int16 state
// and the time sums into the output, and applies no activation beyond the
// int8 range (TFLite requires RELU and does not apply it).

// Input indices of SVDF.
const (
	svdfInput = iota
	svdfWeightsFeature
	svdfWeightsTime
	svdfBias // optional
	svdfState
)

// SVDFParams are the options of SVDF.
type SVDFParams struct {
	// Rank is the number of filters per unit.
	Rank int
	// Activation is applied to the output (float and hybrid kernels).
	Activation schema.ActivationFunctionType
	// AsymmetricQuantizeInputs makes the hybrid kernel quantize its input
	// with a zero point per batch row.
	AsymmetricQuantizeInputs bool
}

// NewSVDF returns the SVDF kernel for the given options.
func NewSVDF(p SVDFParams) kernel.Op { return &svdfOp{p: p} }

func newSVDF(info kernel.OpInfo) (kernel.Op, error) {
	var p SVDFParams
	if t, ok := info.Options(schema.BuiltinOptionsSVDFOptions); ok {
		var o schema.SVDFOptions
		o.Init(t.Bytes, t.Pos)
		p = SVDFParams{Rank: int(o.Rank()), Activation: o.FusedActivationFunction(), AsymmetricQuantizeInputs: o.AsymmetricQuantizeInputs()}
	}
	return NewSVDF(p), nil
}

// svdfKind is the arithmetic a node runs in.
type svdfKind int

const (
	svdfFloat svdfKind = iota
	svdfHybrid
	svdfInteger
)

// svdfOp is one SVDF node.
type svdfOp struct {
	p SVDFParams

	// Set by Prepare.
	kind                                  svdfKind
	batch, inSize, filters, units, memory int
	feature                               matrix
	timeF                                 []float32 // the float time weights, dequantized for the hybrid kernel
	timeReady                             bool
	needRowSums                           bool
	scratch                               []float32 // per batch and filter
	scratchI                              []int32
	qx                                    []int8
	acc                                   []int32
	// The integer kernel's rescaling: feature products into the state,
	// time sums into the output.
	m1, m2         int32
	shift1, shift2 int
	inZP, outZP    int32
}

// Prepare checks the node as TFLite's Prepare and Eval do, sets the
// output's shape and precomputes what Eval needs.
func (op *svdfOp) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 5 || len(n.Outputs) != 1 {
		return fmt.Errorf("SVDF: got %d inputs and %d outputs, want 5 and 1", len(n.Inputs), len(n.Outputs))
	}
	for _, i := range []int{svdfInput, svdfWeightsFeature, svdfWeightsTime, svdfState} {
		if n.Inputs[i] == nil {
			return fmt.Errorf("SVDF: input %d is missing", i)
		}
	}
	if n.Outputs[0] == nil {
		return fmt.Errorf("SVDF: the output is missing")
	}
	if err := op.checkShapes(n); err != nil {
		return err
	}
	if err := op.setKind(n); err != nil {
		return err
	}
	kernel.SetShape(n.Outputs[0], []int{op.batch, op.units})
	op.scratch = kernel.Sized(op.scratch, op.batch*op.filters)
	switch op.kind {
	case svdfHybrid:
		op.feature.set(n.Inputs[svdfWeightsFeature], true)
		op.needRowSums = op.p.AsymmetricQuantizeInputs
		op.qx = kernel.Sized(op.qx, op.inSize)
		op.acc = kernel.Sized(op.acc, op.filters)
		// Dequantized at the first Eval after Prepare, as TFLite does at
		// its first Eval.
		op.timeF = kernel.Sized(op.timeF, op.filters*op.memory)
		op.timeReady = false
	case svdfFloat:
		op.feature.set(n.Inputs[svdfWeightsFeature], false)
	case svdfInteger:
		op.scratchI = kernel.Sized(op.scratchI, op.batch*op.filters)
	}
	return nil
}

// checkShapes checks the tensors' shapes and sets the sizes.
func (op *svdfOp) checkShapes(n *kernel.Node) error {
	in, wf, wt, state := n.Inputs[svdfInput], n.Inputs[svdfWeightsFeature], n.Inputs[svdfWeightsTime], n.Inputs[svdfState]
	if len(in.Shape) != 2 {
		return fmt.Errorf("SVDF: input has shape %v, want [batch input]", in.Shape)
	}
	op.batch, op.inSize = in.Shape[0], in.Shape[1]
	if len(wf.Shape) != 2 || wf.Shape[1] != op.inSize {
		return fmt.Errorf("SVDF: feature weights have shape %v, want [filters %d]", wf.Shape, op.inSize)
	}
	op.filters = wf.Shape[0]
	if op.p.Rank <= 0 || op.filters%op.p.Rank != 0 {
		return fmt.Errorf("SVDF: rank %d does not divide the %d filters", op.p.Rank, op.filters)
	}
	op.units = op.filters / op.p.Rank
	if len(wt.Shape) != 2 || wt.Shape[0] != op.filters {
		return fmt.Errorf("SVDF: time weights have shape %v, want [%d memory]", wt.Shape, op.filters)
	}
	op.memory = wt.Shape[1]
	if b := n.Inputs[svdfBias]; b != nil && (len(b.Shape) != 1 || b.Shape[0] != op.units) {
		return fmt.Errorf("SVDF: bias has shape %v, want [%d]", b.Shape, op.units)
	}
	if len(state.Shape) != 2 || state.Shape[0] != op.batch || state.Shape[1] != op.memory*op.filters {
		return fmt.Errorf("SVDF: state has shape %v, want [%d %d]", state.Shape, op.batch, op.memory*op.filters)
	}
	if !state.Variable {
		return fmt.Errorf("SVDF: the state (input %d) must be a variable tensor", svdfState)
	}
	return nil
}

// setKind picks the kernel from the input's and the weights' types and
// checks the other types against it.
func (op *svdfOp) setKind(n *kernel.Node) error {
	in, wf := n.Inputs[svdfInput], n.Inputs[svdfWeightsFeature]
	// want lists the types of the time weights, bias, state and output.
	var want [4]tensor.DType
	switch {
	case in.Type == tensor.Float32 && wf.Type == tensor.Float32:
		op.kind, want = svdfFloat, [4]tensor.DType{tensor.Float32, tensor.Float32, tensor.Float32, tensor.Float32}
	case in.Type == tensor.Float32 && (wf.Type == tensor.Int8 || wf.Type == tensor.Uint8):
		op.kind, want = svdfHybrid, [4]tensor.DType{wf.Type, tensor.Float32, tensor.Float32, tensor.Float32}
	case in.Type == tensor.Int8 && wf.Type == tensor.Int8:
		op.kind, want = svdfInteger, [4]tensor.DType{tensor.Int16, tensor.Int32, tensor.Int16, tensor.Int8}
	default:
		return kernel.Unsupported("SVDF: %s input with %s feature weights", in.Type, wf.Type)
	}
	names := [4]string{"time weights", "bias", "state", "output"}
	for i, t := range []*tensor.Tensor{n.Inputs[svdfWeightsTime], n.Inputs[svdfBias], n.Inputs[svdfState], n.Outputs[0]} {
		if t != nil && t.Type != want[i] {
			return kernel.Unsupported("SVDF: %s %s with %s input and %s feature weights", t.Type, names[i], in.Type, wf.Type)
		}
	}
	if op.kind == svdfInteger {
		return op.prepareInteger(n)
	}
	return nil
}

// prepareInteger computes the integer kernel's rescaling, which needs the
// input, weights, state and output quantized, and checks the activation.
func (op *svdfOp) prepareInteger(n *kernel.Node) error {
	in, wf, wt, state, out := n.Inputs[svdfInput], n.Inputs[svdfWeightsFeature], n.Inputs[svdfWeightsTime], n.Inputs[svdfState], n.Outputs[0]
	for i, t := range []*tensor.Tensor{in, wf, wt, state, out} {
		if !t.Quantized() {
			return fmt.Errorf("SVDF: integer SVDF needs quantization parameters on %s", [...]string{"the input", "the feature weights", "the time weights", "the state", "the output"}[i])
		}
	}
	if op.p.Activation != schema.ActivationFunctionTypeRELU {
		return kernel.Unsupported("SVDF: integer SVDF with activation %s (TFLite requires RELU)", schema.EnumNamesActivationFunctionType[op.p.Activation])
	}
	op.m1, op.shift1 = kernel.QuantizeMultiplier(float64(in.Scale()) * float64(wf.Scale()) / float64(state.Scale()))
	op.m2, op.shift2 = kernel.QuantizeMultiplier(float64(state.Scale()) * float64(wt.Scale()) / float64(out.Scale()))
	op.inZP, op.outZP = in.ZeroPoint(), out.ZeroPoint()
	return nil
}

// Eval runs one step, updating the state.
func (op *svdfOp) Eval(n *kernel.Node) error {
	if op.kind == svdfInteger {
		op.evalInteger(n)
		return nil
	}
	in := n.Inputs[svdfInput].Float32s()
	state := n.Inputs[svdfState].Float32s()
	shiftLeft(state)
	if op.kind == svdfHybrid {
		op.featureHybrid(n, in)
	} else {
		clear(op.scratch)
		for b := range op.batch {
			kernel.MatVecAccFloat(op.feature.f, op.filters, op.inSize, in[b*op.inSize:], 1, op.scratch[b*op.filters:])
		}
	}
	timeW := op.timeF
	if op.kind == svdfFloat {
		timeW = n.Inputs[svdfWeightsTime].Float32s()
	}
	var bias []float32
	if b := n.Inputs[svdfBias]; b != nil {
		bias = b.Float32s()
	}
	out := n.Outputs[0].Float32s()
	mem := op.memory
	for i, v := range op.scratch {
		state[i*mem+mem-1] = v
	}
	for b := range op.batch {
		for f := range op.filters {
			w, s := timeW[f*mem:(f+1)*mem], state[(b*op.filters+f)*mem:][:mem]
			var dot float32
			for j, x := range w {
				dot += float32(x * s[j])
			}
			op.scratch[b*op.filters+f] = dot
		}
	}
	for i := range out {
		var sum float32
		for _, v := range op.scratch[i*op.p.Rank : (i+1)*op.p.Rank] {
			sum += v
		}
		if bias != nil {
			sum += bias[i%op.units]
		}
		out[i] = sum
	}
	kernel.ActivateFloats(out, out, op.p.Activation)
	return nil
}

// featureHybrid puts the int8 feature weights times the input, quantized
// per batch row, in the scratch (zero for an all-zero input).
func (op *svdfOp) featureHybrid(n *kernel.Node, in []float32) {
	if !op.timeReady {
		wt := n.Inputs[svdfWeightsTime]
		scale := wt.Scale()
		for i, v := range wt.Int8s() {
			op.timeF[i] = float32(v) * scale
		}
		op.timeReady = true
	}
	if op.needRowSums {
		op.feature.sumRows()
		op.needRowSums = false
	}
	clear(op.scratch)
	for b := range op.batch {
		mulAccHybrid(&op.feature, in[b*op.inSize:(b+1)*op.inSize], op.p.AsymmetricQuantizeInputs, op.qx, op.acc, op.scratch[b*op.filters:])
	}
}

// shiftLeft moves the whole state one element to the left, as TFLite's
// std::copy does; the last slot of every filter's memory is then
// overwritten with the new activation.
func shiftLeft[T any](state []T) {
	if len(state) > 0 {
		copy(state, state[1:])
	}
}

// evalInteger is TFLite's EvalIntegerSVDF.
func (op *svdfOp) evalInteger(n *kernel.Node) {
	in, wf := n.Inputs[svdfInput].Int8s(), n.Inputs[svdfWeightsFeature].Int8s()
	wt, state := n.Inputs[svdfWeightsTime].Int16s(), n.Inputs[svdfState].Int16s()
	out := n.Outputs[0].Int8s()
	mem := op.memory
	shiftLeft(state)
	for b := range op.batch {
		x := in[b*op.inSize : (b+1)*op.inSize]
		for f := range op.filters {
			row := wf[f*op.inSize : (f+1)*op.inSize]
			var dot int32
			for i, v := range x {
				dot += int32(row[i]) * (int32(v) - op.inZP)
			}
			dot = kernel.MultiplyByQuantizedMultiplier(dot, op.m1, op.shift1)
			state[(b*op.filters+f)*mem+mem-1] = int16(kernel.Clamp(dot, -32768, 32767))
		}
	}
	for b := range op.batch {
		for f := range op.filters {
			w, s := wt[f*mem:(f+1)*mem], state[(b*op.filters+f)*mem:][:mem]
			var dot int32
			for j, x := range w {
				dot += int32(x) * int32(s[j])
			}
			op.scratchI[b*op.filters+f] = dot
		}
	}
	var bias []int32
	if b := n.Inputs[svdfBias]; b != nil {
		bias = b.Int32s()
	}
	for i := range out {
		var sum int32
		for _, v := range op.scratchI[i*op.p.Rank : (i+1)*op.p.Rank] {
			sum += v
		}
		if bias != nil {
			sum += bias[i%op.units]
		}
		v := kernel.MultiplyByQuantizedMultiplier(sum, op.m2, op.shift2) + op.outZP
		out[i] = int8(kernel.Clamp(v, -128, 127))
	}
}
