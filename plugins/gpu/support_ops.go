package gpu

import (
	"fmt"
	"slices"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Each check returns "" when TFLite's GPU delegate takes the node, else the
// reason in plain words (checkNode puts the op's name in front).

// --- shared conditions ---------------------------------------------------

// checkActivation is IsActivationSupported: every fused activation the
// schema has except SIGN_BIT.
func checkActivation(a schema.ActivationFunctionType) string {
	if a == schema.ActivationFunctionTypeSIGN_BIT {
		return "the fused activation SIGN_BIT is not supported"
	}
	return ""
}

// fusedActivation is the node's fused activation; NONE when its options
// carry none.
func (c *nodeCtx) fusedActivation() schema.ActivationFunctionType {
	return model.FusedActivation(c.options)
}

// ioCounts is CheckInputsOutputs: exactly runtime non-constant inputs and
// outputs outputs.
func (c *nodeCtx) ioCounts(runtime, outputs int) string {
	if n := c.runtimeInputs(); n != runtime {
		return fmt.Sprintf("expects %d non-constant input(s), the node has %d", runtime, n)
	}
	if len(c.outs) != outputs {
		return fmt.Sprintf("expects %d output(s), the node has %d", outputs, len(c.outs))
	}
	return ""
}

// constant requires input i to be present and constant; what names it.
func (c *nodeCtx) constant(i int, what string) string {
	ti := c.in(i)
	if ti < 0 {
		return fmt.Sprintf("the %s (input %d) is missing", what, i)
	}
	if !c.isConst(ti) {
		return fmt.Sprintf("the %s is not constant (%s)", what, c.desc(ti))
	}
	return ""
}

func positive(what string, h, w int32) string {
	if h <= 0 || w <= 0 {
		return fmt.Sprintf("%s %dx%d: both must be positive", what, h, w)
	}
	return ""
}

func first(reasons ...func() string) string {
	for _, r := range reasons {
		if why := r(); why != "" {
			return why
		}
	}
	return ""
}

// --- element-wise ----------------------------------------------------------

// checkAddMul is ADD's and MUL's IsSupported (two inputs; broadcasting
// across ranks only in the forms the GPU kernels implement; for MUL, inputs
// of equal rank where neither is at least the other in every dimension are
// refused) plus the parser's operand rules.
func checkAddMul(c *nodeCtx) string {
	if len(c.ins) != 2 {
		return fmt.Sprintf("takes two input tensors, the node has %d", len(c.ins))
	}
	return first(c.rankBroadcast, c.operands, func() string { return checkActivation(c.fusedActivation()) })
}

// checkTwoOperand is SUB, DIV, MAXIMUM, MINIMUM: two non-constant inputs, or
// one and one constant; a supported fused activation; and (the parser) not
// the same tensor twice.
func checkTwoOperand(c *nodeCtx) string {
	rt, ct := c.runtimeInputs(), c.constInputs()
	if len(c.outs) != 1 || !(rt == 2 && ct == 0 || rt == 1 && ct == 1) {
		return fmt.Sprintf("takes two operands, at most one of them constant; the node has %d non-constant and %d constant input(s)", rt, ct)
	}
	if c.in(0) == c.in(1) {
		return fmt.Sprintf("reads %s twice, which TFLite's GPU delegate does not support for this op", c.desc(c.in(0)))
	}
	return first(c.rankBroadcast, c.operands, func() string { return checkActivation(c.fusedActivation()) })
}

// rankBroadcast is CheckAddMulBroadcastCompatibility (TFLite's default,
// without enhanced broadcast): inputs of different ranks, both above 1,
// broadcast only a 3-D tensor against a 4-D one of batch 1, or a [1,1]
// tensor against a 4-D one of batch 1.
func (c *nodeCtx) rankBroadcast() string {
	a, b := c.shape(c.in(0)), c.shape(c.in(1))
	if len(a) <= 1 || len(b) <= 1 || len(a) == len(b) {
		return ""
	}
	long, short := a, b
	if len(b) > len(a) {
		long, short = b, a
	}
	switch {
	case len(long) == 4 && len(short) == 3 && long[0] == 1:
		return ""
	case len(long) == 4 && len(short) == 2 && long[0] == 1 && short[0] == 1 && short[1] == 1:
		return ""
	}
	return fmt.Sprintf("broadcasts %s against %s, which TFLite's GPU delegate does not", dims(a), dims(b))
}

// operands are the parser's rules for two operands of equal rank and for a
// constant operand: TFLite binds the larger runtime input first and its
// kernels broadcast only the second, so one input must be at least the
// other in every dimension (MUL's
// IsSupported says this for MUL; for the other ops TFLite only finds out at
// compile time); both inputs constant is refused; and a constant operand
// must be a scalar, a vector over the channels, or at most 3-D (or 4-D of
// batch 1).
func (c *nodeCtx) operands() string {
	x, y := c.in(0), c.in(1)
	if c.isConst(x) && c.isConst(y) {
		return "both inputs are constant; TFLite's GPU delegate needs a non-constant one"
	}
	if x == y {
		return ""
	}
	for _, ti := range []int{x, y} {
		if c.isConst(ti) {
			if why := c.constOperand(ti); why != "" {
				return why
			}
		}
	}
	a, b := c.shape(x), c.shape(y)
	if len(a) != len(b) {
		return ""
	}
	aSmaller, bSmaller := false, false
	for i := range a {
		aSmaller = aSmaller || a[i] < b[i]
		bSmaller = bSmaller || b[i] < a[i]
	}
	if aSmaller && bSmaller {
		return fmt.Sprintf("broadcasts %s against %s, which TFLite's GPU delegate does not", dims(a), dims(b))
	}
	return ""
}

// constOperand is ParseInputsWithConstTensor's reading of a constant
// operand: a single value, a vector over the last dimension, a 2-D or 3-D
// tensor, or a 4-D one of batch 1.
func (c *nodeCtx) constOperand(ti int) string {
	s := c.shape(ti)
	n := 1
	for _, d := range s {
		n *= d
	}
	linear := true
	for _, d := range s[:max(len(s)-1, 0)] {
		linear = linear && d == 1
	}
	if len(s) == 0 || n == 1 || linear || len(s) <= 3 || s[0] == 1 {
		return ""
	}
	return fmt.Sprintf("the constant operand %s has shape %s; TFLite's GPU delegate takes a scalar, a per-channel vector or a tensor of batch 1", c.desc(ti), dims(s))
}

// checkUnary is LOGISTIC and TANH: one non-constant input, one output.
func checkUnary(c *nodeCtx) string {
	if c.constInputs() != 0 {
		return "its input is constant"
	}
	return c.ioCounts(1, 1)
}

// checkOneRuntimeInput is RESHAPE, HARD_SWISH, RESIZE_NEAREST_NEIGHBOR and
// TRANSPOSE: one non-constant input (the new shape, size or permutation
// constant) and one output.
func checkOneRuntimeInput(c *nodeCtx) string {
	if c.runtimeInputs() > 1 {
		return fmt.Sprintf("%s is not constant; TFLite's GPU delegate takes one non-constant input", c.desc(c.nonConstInput(1)))
	}
	return c.ioCounts(1, 1)
}

// nonConstInput returns the first non-constant input at or after i.
func (c *nodeCtx) nonConstInput(i int) int {
	for _, ti := range c.ins[i:] {
		if ti >= 0 && !c.isConst(ti) {
			return ti
		}
	}
	return -1
}

// --- convolutions ----------------------------------------------------------

// convIO is CheckConvoultionInputOutput: at most two non-constant inputs
// (data, and weights given at run time), one output, and the weights
// present.
func (c *nodeCtx) convIO(weights int) string {
	if n := c.runtimeInputs(); n > 2 {
		return fmt.Sprintf("expects 1 or 2 non-constant inputs, the node has %d", n)
	}
	if len(c.outs) != 1 {
		return fmt.Sprintf("expects 1 output, the node has %d", len(c.outs))
	}
	if c.in(weights) < 0 {
		return "the weights are missing"
	}
	return ""
}

// checkConv2D is CONV_2D's IsSupported (inputs, strides, dilations, fused
// activation) and the parser's rule for weights given at run time: they must
// not make a grouped convolution.
func checkConv2D(c *nodeCtx) string {
	o, _ := c.options.(*schema.Conv2DOptionsT)
	if o == nil {
		o = &schema.Conv2DOptionsT{}
	}
	return first(
		func() string { return c.convIO(1) },
		func() string { return positive("strides", o.StrideH, o.StrideW) },
		func() string { return positive("dilations", o.DilationHFactor, o.DilationWFactor) },
		func() string { return checkActivation(o.FusedActivationFunction) },
		c.runtimeConvWeights,
	)
}

// runtimeConvWeights: constant weights may be grouped; weights given at run
// time must have the input's channel count.
func (c *nodeCtx) runtimeConvWeights() string {
	w := c.in(1)
	if c.isConst(w) {
		return ""
	}
	in, ws := c.shape(c.in(0)), c.shape(w)
	if len(in) == 0 || len(ws) == 0 || in[len(in)-1] != ws[len(ws)-1] {
		return fmt.Sprintf("the weights are not constant (%s) and their input channels differ from the input's (a grouped convolution needs constant weights)", c.desc(w))
	}
	return ""
}

// checkDepthwiseConv2D is CheckDepthwiseConvGpuDelegateCompatibility.
func checkDepthwiseConv2D(c *nodeCtx) string {
	o, _ := c.options.(*schema.DepthwiseConv2DOptionsT)
	if o == nil {
		o = &schema.DepthwiseConv2DOptionsT{}
	}
	return first(
		func() string { return c.convIO(1) },
		func() string { return positive("strides", o.StrideH, o.StrideW) },
		func() string { return positive("dilations", o.DilationHFactor, o.DilationWFactor) },
		func() string { return checkActivation(o.FusedActivationFunction) },
		func() string { return c.depthwiseShapes(int(o.DepthMultiplier)) },
	)
}

func (c *nodeCtx) depthwiseShapes(mult int) string {
	in, f, out := c.shape(c.in(0)), c.shape(c.in(1)), c.shape(c.outs[0])
	switch {
	case len(in) != 4 || len(f) != 4 || len(out) != 4:
		return fmt.Sprintf("input %s, filter %s and output %s must all be 4-D", dims(in), dims(f), dims(out))
	case in[0] != out[0]:
		return fmt.Sprintf("input batch %d differs from output batch %d", in[0], out[0])
	case f[3] != out[3]:
		return fmt.Sprintf("filter channels %d differ from output channels %d", f[3], out[3])
	case out[3] != in[3]*mult:
		return fmt.Sprintf("output channels %d are not input channels %d times the depth multiplier %d", out[3], in[3], mult)
	case mult != 1 && in[3] != 1:
		return fmt.Sprintf("depth multiplier %d with %d input channels (TFLite's GPU delegate takes a multiplier other than 1 only for one input channel)", mult, in[3])
	}
	if b := c.in(2); b >= 0 && elements(c.shape(b)) != out[3] {
		return fmt.Sprintf("bias %s has %d values for %d output channels", c.desc(b), elements(c.shape(b)), out[3])
	}
	return ""
}

func elements(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// checkFullyConnected is FULLY_CONNECTED's IsSupported.
func checkFullyConnected(c *nodeCtx) string {
	o, _ := c.options.(*schema.FullyConnectedOptionsT)
	if o == nil {
		o = &schema.FullyConnectedOptionsT{}
	}
	switch {
	case o.WeightsFormat != schema.FullyConnectedOptionsWeightsFormatDEFAULT:
		return fmt.Sprintf("the weights format %s is not supported", o.WeightsFormat)
	case c.runtimeInputs() > 2:
		return fmt.Sprintf("expects at most 2 non-constant inputs, the node has %d", c.runtimeInputs())
	case c.in(0) >= 0 && c.isConst(c.in(0)):
		return fmt.Sprintf("the input is constant (%s)", c.desc(c.in(0)))
	case o.KeepNumDims && len(c.outs) > 0 && len(c.shape(c.in(0))) != len(c.shape(c.outs[0])):
		return fmt.Sprintf("keep_num_dims with input %s and output %s of different ranks", dims(c.shape(c.in(0))), dims(c.shape(c.outs[0])))
	}
	return checkActivation(o.FusedActivationFunction)
}

// checkTransposeConv is TRANSPOSE_CONV's IsSupported: inputs (output shape,
// weights, data, optional bias) and positive strides.
func checkTransposeConv(c *nodeCtx) string {
	o, _ := c.options.(*schema.TransposeConvOptionsT)
	if o == nil {
		o = &schema.TransposeConvOptionsT{}
	}
	return first(
		func() string { return c.convIO(1) },
		func() string { return c.constant(0, "output shape") },
		func() string { return positive("strides", o.StrideH, o.StrideW) },
	)
}

// --- pooling, concatenation, softmax ---------------------------------------

// checkPool is CheckPooling2DGpuDelegateCompatibility.
func checkPool(c *nodeCtx) string {
	o, _ := c.options.(*schema.Pool2DOptionsT)
	if o == nil {
		o = &schema.Pool2DOptionsT{}
	}
	return first(
		func() string { return c.ioCounts(1, 1) },
		func() string { return positive("filter", o.FilterHeight, o.FilterWidth) },
		func() string { return positive("strides", o.StrideH, o.StrideW) },
		func() string { return checkActivation(o.FusedActivationFunction) },
	)
}

// checkConcat: the parser fuses the activation.
func checkConcat(c *nodeCtx) string { return checkActivation(c.fusedActivation()) }

// checkSoftmax is SOFTMAX's IsSupported: beta 1.
func checkSoftmax(c *nodeCtx) string {
	beta := float32(0) // TFLite's zeroed default when the options are absent
	if o, ok := c.options.(*schema.SoftmaxOptionsT); ok {
		beta = o.Beta
	}
	if beta != 1 {
		return fmt.Sprintf("beta %g; TFLite's GPU delegate takes beta 1 only", beta)
	}
	return ""
}

// --- shape ops ---------------------------------------------------------------

// checkPad is PAD's IsSupported: one non-constant input, and a constant
// paddings tensor of shape 4x2 or 3x2.
func checkPad(c *nodeCtx) string {
	if why := first(func() string { return c.constant(1, "paddings tensor") }, func() string { return c.ioCounts(1, 1) }); why != "" {
		return why
	}
	p := c.shape(c.in(1))
	if len(p) != 2 || (p[0] != 3 && p[0] != 4) || p[1] != 2 {
		return fmt.Sprintf("paddings of shape %s; TFLite's GPU delegate takes 4x2 or 3x2", dims(p))
	}
	return ""
}

// checkResizeBilinear is RESIZE_BILINEAR's IsSupported.
func checkResizeBilinear(c *nodeCtx) string {
	if why := checkOneRuntimeInput(c); why != "" {
		return why
	}
	if o, ok := c.options.(*schema.ResizeBilinearOptionsT); ok && o.AlignCorners && o.HalfPixelCenters {
		return "align_corners and half_pixel_centers are both set"
	}
	return ""
}

// checkMean is MEAN's IsSupported: one non-constant input and constant
// INT32 axes.
func checkMean(c *nodeCtx) string {
	if why := c.constant(1, "axes tensor"); why != "" {
		return why
	}
	if t := c.tensor(c.in(1)).Type; t != tensor.Int32 {
		return fmt.Sprintf("the axes %s are %s; TFLite's GPU delegate takes INT32 axes", c.desc(c.in(1)), t)
	}
	return c.ioCounts(1, 1)
}

// checkSplit: TFLite's IsSupported accepts SPLIT; its parser reads the
// axis (input 0) as constant data.
func checkSplit(c *nodeCtx) string {
	if why := c.constant(0, "axis"); why != "" {
		return why
	}
	return c.ioCounts(1, len(c.outs))
}

// checkSlice is SLICE's IsSupported (3 inputs, a 3-D or 4-D input) and the
// parser's constant begin and size.
func checkSlice(c *nodeCtx) string {
	if len(c.ins) < 3 {
		return fmt.Sprintf("takes 3 inputs, the node has %d", len(c.ins))
	}
	return first(
		c.rank3or4,
		func() string { return c.constant(1, "begin tensor") },
		func() string { return c.constant(2, "size tensor") },
	)
}

func (c *nodeCtx) rank3or4() string {
	if r := len(c.shape(c.in(0))); r != 3 && r != 4 {
		return fmt.Sprintf("the input %s is %d-D; TFLite's GPU delegate slices 3-D or 4-D tensors only", c.desc(c.in(0)), r)
	}
	return ""
}

// checkStridedSlice is STRIDED_SLICE's IsSupported (no ellipsis, new-axis or
// shrink-axis mask; 4 inputs; a 3-D or 4-D input) and the parser's constant
// begin, end and strides.
func checkStridedSlice(c *nodeCtx) string {
	o, _ := c.options.(*schema.StridedSliceOptionsT)
	if o == nil {
		o = &schema.StridedSliceOptionsT{}
	}
	switch {
	case o.EllipsisMask != 0:
		return "ellipsis_mask is not supported"
	case o.NewAxisMask != 0:
		return "new_axis_mask is not supported"
	case o.ShrinkAxisMask != 0:
		return "shrink_axis_mask is not supported"
	case len(c.ins) < 4:
		return fmt.Sprintf("takes 4 inputs, the node has %d", len(c.ins))
	}
	return first(
		c.rank3or4,
		func() string { return c.constant(1, "begin tensor") },
		func() string { return c.constant(2, "end tensor") },
		func() string { return c.constant(3, "strides tensor") },
	)
}

// --- quantization ------------------------------------------------------------

// checkDequantize: a DEQUANTIZE of constant FLOAT16 weights is always taken
// (TFLite's FP16 partition helper folds it into its consumer); any other
// only with quantized inference, one input and output, not of INT16.
func checkDequantize(c *nodeCtx) string {
	in := c.in(0)
	if len(c.ins) != 1 || len(c.outs) != 1 || in < 0 {
		return fmt.Sprintf("expects 1 input and 1 output, the node has %d and %d", len(c.ins), len(c.outs))
	}
	t := c.tensor(in).Type
	if t == tensor.Float16 && c.isConst(in) {
		return ""
	}
	if !c.opts.quantized {
		return fmt.Sprintf("dequantizes %s (%s, not constant FLOAT16 weights) and quantized inference is off", c.desc(in), t)
	}
	if t == tensor.Int16 {
		return fmt.Sprintf("dequantizes %s of INT16, which TFLite's GPU delegate does not", c.desc(in))
	}
	return ""
}

// checkQuantize: only with quantized inference; one non-constant input,
// one output.
func checkQuantize(c *nodeCtx) string {
	if !c.opts.quantized {
		return "quantized inference is off (TFLite's GPU delegate takes QUANTIZE only with it)"
	}
	return c.ioCounts(1, 1)
}

// checkPRelu: TFLite's PReLU parser reads alpha as a constant, either one
// value per channel or one per element of the input's HWC (from its Parse:
// a run-time alpha would fail the delegate's compile).
func checkPRelu(c *nodeCtx) string {
	if why := c.ioCounts(1, 1); why != "" {
		return why
	}
	if why := c.constant(1, "alpha"); why != "" {
		return why
	}
	in, alpha := c.shape(c.in(0)), c.shape(c.in(1))
	channels := 1
	if len(in) > 0 {
		channels = in[len(in)-1]
	}
	hwc := in[max(len(in)-3, 0):]
	if n := tensor.NumElements(alpha); len(alpha) > 0 && n == channels && alpha[len(alpha)-1] == channels ||
		slices.Equal(trimOnes(alpha), trimOnes(hwc)) {
		return ""
	}
	return fmt.Sprintf("alpha of shape %v is neither per channel (%d) nor the input's HWC %v", alpha, channels, hwc)
}

// trimOnes drops leading dimensions of 1.
func trimOnes(shape []int) []int {
	for len(shape) > 1 && shape[0] == 1 {
		shape = shape[1:]
	}
	return shape
}
