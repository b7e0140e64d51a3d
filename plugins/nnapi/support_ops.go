package nnapi

import (
	"slices"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Each check returns "" when TFLite 2.9's NNAPI delegate takes the node,
// else the reason. The levels are Validate's kMinSdkVersionForNNAPI11 (28),
// ...NNAPI12 (29) and ...NNAPI13 (30).

const (
	level11 = 28 // NNAPI 1.1
	level12 = 29 // NNAPI 1.2
	level13 = 30 // NNAPI 1.3
)

func isFloat(t tensor.DType) bool     { return t == tensor.Float32 }
func isQuantized(t tensor.DType) bool { return t == tensor.Uint8 || t == tensor.Int8 }

func typeIn(t tensor.DType, ts ...tensor.DType) bool { return slices.Contains(ts, t) }

// first returns the first non-empty reason.
func first(reasons ...func() string) string {
	for _, r := range reasons {
		if why := r(); why != "" {
			return why
		}
	}
	return ""
}

// inputIs is EXPECT_INPUT_TYPE_IN on input 0.
func (c *node) inputIs(ts ...tensor.DType) string {
	if t := c.inType(0); !typeIn(t, ts...) {
		return c.refuse("input type %s; TFLite's NNAPI delegate takes %s", t, typeList(ts))
	}
	return ""
}

func typeList(ts []tensor.DType) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s
}

// int8Input is the level rule for int8 activations: NNAPI has signed
// 8-bit tensors from 1.3; before, TFLite converts them to uint8 for the
// ops NeedInt8Conversion lists, which is every op of this table that
// reaches here with one (the callers check the others).
func checkFloatOrQuant8(c *node) string {
	return c.inputIs(tensor.Float32, tensor.Uint8, tensor.Int8)
}

func checkFloatOnly(c *node) string { return c.inputIs(tensor.Float32) }

// fused is the node's fused activation, NONE without one.
func (c *node) fused() schema.ActivationFunctionType { return model.FusedActivation(c.options) }

// noActivationForInt32 is ADD's, SUB's and MUL's rule for int32 inputs.
func (c *node) noActivationForInt32() string {
	if c.inType(0) == tensor.Int32 && c.fused() != schema.ActivationFunctionTypeNONE {
		return c.refuse("int32 inputs with a fused activation (%s); NNAPI takes none", c.fused())
	}
	return ""
}

// checkAddMul is ADD and MUL: float or 8-bit, and int32 from 1.3 without a
// fused activation.
func checkAddMul(c *node) string {
	if c.inType(0) == tensor.Int32 {
		return first(func() string { return c.needs(level13, "int32") }, c.noActivationForInt32)
	}
	return checkFloatOrQuant8(c)
}

// checkSub is SUB: float from 1.1, 8-bit from 1.2, int32 from 1.3, inputs
// of rank 4 at most.
func checkSub(c *node) string {
	t := c.inType(0)
	var why string
	switch {
	case isFloat(t):
	case isQuantized(t):
		why = c.needs(level12, "quantized")
	case t == tensor.Int32:
		why = first(func() string { return c.needs(level13, "int32") }, c.noActivationForInt32)
	default:
		why = c.refuse("input type %s; NNAPI's SUB takes FLOAT32, UINT8, INT8 or INT32", t)
	}
	if why != "" {
		return why
	}
	if c.rank(c.in(0)) > 4 || c.rank(c.in(1)) > 4 {
		return c.refuse("inputs of rank above 4")
	}
	return ""
}

// weightsQuant describes a convolution's or FC's weights: per-channel when
// they carry several scales.
func (c *node) perChannelWeights() bool {
	_, _, n := c.quant(c.in(1))
	return n > 1
}

// isHybrid is IsHybridOperator: float input, quantized weights.
func (c *node) isHybrid() bool { return isFloat(c.inType(0)) && isQuantized(c.inType(1)) }

// restrictedScales is ExpectIsRestrictedScalesCompliant, NNAPI 1.0-1.1's
// rule for uint8 convolutions: input scale * filter scale < output scale.
func (c *node) restrictedScales() string {
	if c.t.level >= level12 || c.inType(0) != tensor.Uint8 {
		return ""
	}
	in, _, _ := c.quant(c.in(0))
	f, _, _ := c.quant(c.in(1))
	out, _, _ := c.quant(c.outs[0])
	if !(in*f < out) {
		return c.refuse("input scale * filter scale >= output scale, which NNAPI 1.0 and 1.1 do not take (from feature level 29 they do)")
	}
	return ""
}

// convCommon are CONV_2D's and FULLY_CONNECTED's rules before NNAPI 1.2: no
// hybrid, float or uint8 input (int8 is "int8" from 29), per-tensor
// weights (per-channel from 29).
func (c *node) convCommon() string {
	if c.isHybrid() {
		if why := c.needs(level12, "hybrid: float input, quantized weights"); why != "" {
			return why
		}
	}
	if c.inType(0) == tensor.Int8 {
		if why := c.needs(level12, "int8"); why != "" {
			return why
		}
	}
	if !typeIn(c.inType(0), tensor.Float32, tensor.Uint8, tensor.Int8) {
		return c.refuse("input type %s; TFLite's NNAPI delegate takes FLOAT32, UINT8 or INT8", c.inType(0))
	}
	if c.perChannelWeights() {
		form := "per-channel"
		if c.inType(1) == tensor.Int8 {
			form = "int8 per-channel"
		}
		if why := c.needs(level12, form); why != "" {
			return why
		}
	}
	return c.restrictedScales()
}

// checkConv is CONV_2D: convCommon, a bias (TFLite's NNAPI delegate does
// not take CONV_2D without one), dilation from 1.2.
func checkConv(c *node) string {
	if why := c.convCommon(); why != "" {
		return why
	}
	if len(c.ins) != 3 || c.in(2) < 0 {
		return c.refuse("no bias; TFLite's NNAPI delegate does not take CONV_2D with an omitted bias")
	}
	if o, ok := c.options.(*schema.Conv2DOptionsT); ok && (o.DilationWFactor != 1 || o.DilationHFactor != 1) {
		return c.needs(level12, "dilated")
	}
	return ""
}

// checkDepthwise is DEPTHWISE_CONV_2D: before 1.2 float or uint8 input, the
// restricted scales and no dilation.
func checkDepthwise(c *node) string {
	if c.t.level >= level12 {
		return checkFloatOrQuant8(c)
	}
	if c.inType(0) == tensor.Int8 || c.perChannelWeights() {
		form := "per-channel"
		if c.inType(0) == tensor.Int8 {
			form = "int8"
		}
		return c.needs(level12, form)
	}
	if why := c.inputIs(tensor.Float32, tensor.Uint8); why != "" {
		return why
	}
	if why := c.restrictedScales(); why != "" {
		return why
	}
	if o, ok := c.options.(*schema.DepthwiseConv2DOptionsT); ok && (o.DilationWFactor != 1 || o.DilationHFactor != 1) {
		return c.needs(level12, "dilated")
	}
	return ""
}

// checkFullyConnected is FULLY_CONNECTED: no int16 output, convCommon,
// keep_num_dims from 1.3.
func checkFullyConnected(c *node) string {
	if c.outType(0) == tensor.Int16 {
		return c.refuse("int16 output, which TFLite's NNAPI delegate does not take")
	}
	if why := c.convCommon(); why != "" {
		return why
	}
	if o, ok := c.options.(*schema.FullyConnectedOptionsT); ok && o.KeepNumDims {
		return c.needs(level13, "keep_num_dims")
	}
	return ""
}

// checkAvgPool is AVERAGE_POOL_2D: float or 8-bit; a quantized window of
// more than 256 elements only on a named accelerator (it overflows NNAPI's
// reference CPU path).
func checkAvgPool(c *node) string {
	if why := checkFloatOrQuant8(c); why != "" {
		return why
	}
	if o, ok := c.options.(*schema.Pool2DOptionsT); ok && isQuantized(c.inType(0)) && !c.t.acceleratorNamed &&
		o.FilterWidth*o.FilterHeight > 256 {
		return c.refuse("a quantized %dx%d window overflows NNAPI's reference CPU path; TFLite takes it only when accelerator_name names a device", o.FilterWidth, o.FilterHeight)
	}
	return ""
}

// checkL2Pool is L2_POOL_2D: float; a fused activation from 1.2.
func checkL2Pool(c *node) string {
	if why := checkFloatOnly(c); why != "" {
		return why
	}
	if c.fused() != schema.ActivationFunctionTypeNONE {
		return c.needs(level12, "fused activation")
	}
	return ""
}

// checkConcat is CONCATENATION: no fused activation, rank 4 at most, float
// or 8-bit (FLOAT16 too); before 1.2, uint8 inputs of one scale and zero
// point.
func checkConcat(c *node) string {
	if c.fused() != schema.ActivationFunctionTypeNONE {
		return c.refuse("a fused activation (%s), which NNAPI's CONCATENATION does not take", c.fused())
	}
	if c.rank(c.in(0)) > 4 {
		return c.refuse("inputs of rank %d; NNAPI takes 4 at most", c.rank(c.in(0)))
	}
	if why := c.inputIs(tensor.Float16, tensor.Float32, tensor.Uint8, tensor.Int8); why != "" {
		return why
	}
	if c.inType(0) == tensor.Uint8 && c.t.level < level12 {
		s0, z0, _ := c.quant(c.in(0))
		for _, ti := range c.ins[1:] {
			if s, z, _ := c.quant(ti); s != s0 || z != z0 {
				return c.needs(level12, "uint8 inputs of different scales or zero points")
			}
		}
	}
	return ""
}

// checkReshape is RESHAPE: float or 8-bit, a constant shape input when
// there is one, and never a scalar result.
func checkReshape(c *node) string {
	if why := checkFloatOrQuant8(c); why != "" {
		return why
	}
	if len(c.ins) >= 2 && c.in(1) >= 0 && !c.isConst(c.in(1)) {
		return c.refuse("the shape input is not constant")
	}
	if c.rank(c.outs[0]) == 0 {
		return c.refuse("a scalar result, which NNAPI's RESHAPE does not make")
	}
	return ""
}

// checkSqueeze is SQUEEZE: at 1.1 exactly, explicit squeeze_dims.
func checkSqueeze(c *node) string {
	if o, ok := c.options.(*schema.SqueezeOptionsT); c.t.level == level11 && (!ok || len(o.SqueezeDims) == 0) {
		return c.needs(level12, "without squeeze_dims")
	}
	return ""
}

// checkSoftmax is SOFTMAX: float or 8-bit, rank 4 at most (2 or 4 before
// 1.2).
func checkSoftmax(c *node) string {
	if why := checkFloatOrQuant8(c); why != "" {
		return why
	}
	r := c.rank(c.in(0))
	if r > 4 {
		return c.refuse("input of rank %d; NNAPI takes 4 at most", r)
	}
	if r != 2 && r != 4 {
		return c.needs(level12, "rank 1 or 3")
	}
	return ""
}

// checkTanh is TANH: float, quantized from 1.2.
func checkTanh(c *node) string {
	t := c.inType(0)
	if isQuantized(t) {
		return c.needs(level12, "quantized")
	}
	return c.inputIs(tensor.Float32)
}

// checkLeakyRelu is LEAKY_RELU (NNAPI's PRELU with a constant alpha).
// delego lowers the float form only.
func checkLeakyRelu(c *node) string {
	if why := c.inputIs(tensor.Float32, tensor.Uint8, tensor.Int8); why != "" {
		return why
	}
	if c.inType(0) != tensor.Float32 {
		return c.refuse("quantized LEAKY_RELU: TFLite's NNAPI delegate takes it; delego lowers only the FLOAT32 form yet")
	}
	return ""
}

func checkPrelu(c *node) string { return c.inputIs(tensor.Float32, tensor.Uint8, tensor.Int8) }

// checkHardSwish is HARD_SWISH: float or 8-bit. NNAPI has HARD_SWISH from
// 1.3; before, TFLite builds it of several NNAPI operations, which delego
// does not (yet): it needs level 30 here.
func checkHardSwish(c *node) string {
	if why := checkFloatOrQuant8(c); why != "" {
		return why
	}
	return c.needs(level13, "as NNAPI's own op; TFLite decomposes it before, delego does not")
}

// checkPad is PAD and PADV2: float or 8-bit, no empty input, a padding
// value from 1.2, and before it float inputs only.
func checkPad(c *node) string {
	if why := checkFloatOrQuant8(c); why != "" {
		return why
	}
	if slices.Contains(c.tensor(c.in(0)).Shape, 0) {
		return c.refuse("an input with no elements, which NNAPI's pad ops do not take")
	}
	if len(c.ins) < 2 {
		return c.refuse("no paddings input")
	}
	if len(c.ins) == 3 {
		return c.needs(level12, "with a padding value")
	}
	if c.inType(0) != tensor.Float32 {
		return c.needs(level12, "quantized")
	}
	return ""
}

// resizeCommon is what RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR share: a
// constant size input and, up to 1.2, neither align_corners nor
// half_pixel_centers.
func (c *node) resizeCommon(align, halfPixel bool) string {
	if len(c.ins) < 2 {
		return c.refuse("expects 2 inputs")
	}
	if !c.isConst(c.in(1)) {
		return c.refuse("the size input is not constant")
	}
	if align {
		return c.needs(level13, "align_corners")
	}
	if halfPixel {
		return c.needs(level13, "half_pixel_centers")
	}
	return ""
}

// checkResizeBilinear is RESIZE_BILINEAR: rank-4 float or 8-bit input (float
// only, and a square output, before 1.2).
func checkResizeBilinear(c *node) string {
	if c.rank(c.in(0)) != 4 {
		return c.refuse("input of rank %d; NNAPI takes rank 4", c.rank(c.in(0)))
	}
	if why := checkFloatOrQuant8(c); why != "" {
		return why
	}
	o, _ := c.options.(*schema.ResizeBilinearOptionsT)
	if o == nil {
		o = &schema.ResizeBilinearOptionsT{}
	}
	if why := c.resizeCommon(o.AlignCorners, o.HalfPixelCenters); why != "" {
		return why
	}
	if c.inType(0) != tensor.Float32 {
		if why := c.needs(level12, "quantized"); why != "" {
			return why
		}
	}
	if s := c.tensor(c.outs[0]).Shape; len(s) == 4 && s[1] != s[2] {
		return c.needs(level12, "non-square output")
	}
	return ""
}

func checkResizeNearest(c *node) string {
	if why := checkFloatOrQuant8(c); why != "" {
		return why
	}
	o, _ := c.options.(*schema.ResizeNearestNeighborOptionsT)
	if o == nil {
		o = &schema.ResizeNearestNeighborOptionsT{}
	}
	return c.resizeCommon(o.AlignCorners, o.HalfPixelCenters)
}

// checkMean is MEAN: float (quantized from 1.2), never a scalar result,
// input and output of one quantization.
func checkMean(c *node) string {
	t := c.inType(0)
	switch {
	case isQuantized(t):
		if why := c.needs(level12, "quantized"); why != "" {
			return why
		}
	case !isFloat(t):
		return c.refuse("input type %s; NNAPI's MEAN takes FLOAT32 (and quantized from 29)", t)
	}
	if c.rank(c.outs[0]) == 0 {
		return c.refuse("a scalar result, which NNAPI's MEAN does not make")
	}
	si, zi, _ := c.quant(c.in(0))
	so, zo, _ := c.quant(c.outs[0])
	if si != so || zi != zo {
		return c.refuse("input and output quantized differently; NNAPI requires the same scale and zero point")
	}
	if !c.isConst(c.in(1)) {
		return c.refuse("the axes input is not constant")
	}
	return ""
}

func checkTranspose(c *node) string {
	if len(c.ins) < 2 || !c.isConst(c.in(1)) {
		return c.refuse("the permutation is not constant (dynamically-sized tensors are not supported)")
	}
	return ""
}

// checkSplit is SPLIT: float, uint8 or int32 input (int8 from 1.3) and a
// constant int32 axis.
func checkSplit(c *node) string {
	t := c.inType(1)
	switch {
	case t == tensor.Int8:
		if why := c.needs(level13, "int8"); why != "" {
			return why
		}
	case !typeIn(t, tensor.Float32, tensor.Uint8, tensor.Int32):
		return c.refuse("input type %s; NNAPI's SPLIT takes FLOAT32, UINT8, INT32 (and INT8 from 30)", t)
	}
	if c.inType(0) != tensor.Int32 || !c.isConst(c.in(0)) {
		return c.refuse("the axis is not a constant INT32")
	}
	return ""
}

func checkGather(c *node) string {
	if why := c.inputIs(tensor.Float32, tensor.Float16, tensor.Int32, tensor.Uint8, tensor.Int8); why != "" {
		return why
	}
	if c.inType(1) != tensor.Int32 {
		return c.refuse("positions of type %s; NNAPI takes INT32", c.inType(1))
	}
	if c.rank(c.in(1)) == 0 {
		return c.refuse("scalar positions, which NNAPI does not take")
	}
	return ""
}

func checkArgMax(c *node) string {
	if why := c.inputIs(tensor.Float16, tensor.Float32, tensor.Int32, tensor.Uint8, tensor.Int8); why != "" {
		return why
	}
	if c.inType(1) != tensor.Int32 || !c.isConst(c.in(1)) {
		return c.refuse("the axis is not a constant INT32")
	}
	if c.outType(0) != tensor.Int32 {
		return c.refuse("output type %s; NNAPI's ARGMAX makes INT32", c.outType(0))
	}
	return ""
}

// checkQuantize is QUANTIZE: float or quantized input with a positive
// scale; a uint8 output (int8 from 1.3) with a positive scale.
func checkQuantize(c *node) string {
	t := c.inType(0)
	if !isFloat(t) && !isQuantized(t) {
		return c.refuse("input type %s; NNAPI quantizes FLOAT32 (and requantizes 8-bit)", t)
	}
	if s, _, _ := c.quant(c.in(0)); isQuantized(t) && !(s > 0) {
		return c.refuse("input scale %g; it must be above 0", s)
	}
	switch o := c.outType(0); o {
	case tensor.Uint8:
	case tensor.Int8:
		if why := c.needs(level13, "int8 output"); why != "" {
			return why
		}
	default:
		return c.refuse("output type %s; NNAPI's QUANTIZE makes UINT8 (and INT8 from 30)", o)
	}
	if s, _, _ := c.quant(c.outs[0]); !(s > 0) {
		return c.refuse("output scale %g; it must be above 0", s)
	}
	return ""
}

// checkDequantize is DEQUANTIZE: uint8 input (int8 from 1.2, symmetric only
// at 1.2); a non-constant FLOAT16 input from 1.3.
func checkDequantize(c *node) string {
	t := c.inType(0)
	if t == tensor.Float16 && !c.isConst(c.in(0)) {
		return c.needs(level13, "float16")
	}
	switch t {
	case tensor.Uint8:
	case tensor.Int8:
		if why := c.needs(level12, "int8"); why != "" {
			return why
		}
		if _, zp, _ := c.quant(c.in(0)); c.t.level == level12 && zp != 0 {
			return c.needs(level13, "asymmetric int8")
		}
	default:
		return c.refuse("input type %s; NNAPI dequantizes UINT8 (and INT8 from 29)", t)
	}
	return ""
}

// checkSequenceLSTM is UNIDIRECTIONAL_SEQUENCE_LSTM: float (NNAPI's
// operation takes TENSOR_FLOAT32 or FLOAT16 only, so a quantized LSTM stays
// on the CPU), not hybrid, 20 or 24 inputs. delego does not lower it yet
// (the reason says so at lowering).
func checkSequenceLSTM(c *node) string {
	if t := c.inType(0); !isFloat(t) {
		return c.refuse("input type %s; NNAPI's UNIDIRECTIONAL_SEQUENCE_LSTM takes FLOAT32", t)
	}
	if len(c.ins) > 2 && isQuantized(c.inType(2)) {
		return c.refuse("hybrid (float input, quantized weights), which NNAPI does not take")
	}
	if len(c.ins) != 20 && len(c.ins) != 24 {
		return c.refuse("%d inputs; NNAPI takes the forms of 20 or 24", len(c.ins))
	}
	return ""
}
