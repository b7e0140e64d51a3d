package xnnpack

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// opEntry is one op the binding handles: the versions and tensor types it
// declares (delegate.Support) and the lowering that checks the finer
// conditions and emits XNNPACK nodes. The declared support and Compile both
// come from this one table.
type opEntry struct {
	code     schema.BuiltinOperator
	versions tensor.VersionRange
	types    []tensor.DType
	lower    func(*opCtx) error
}

// opTable lists the ops, with the versions whose features the lowering
// handles (TFLite's op versioning: e.g. CONV_2D v2 is hybrid, v3 int8
// per-channel; the finer check refuses the variants of a declared version
// XNNPACK cannot run, such as hybrid weights).
func opTable() []opEntry {
	v := func(lo, hi int) tensor.VersionRange { return tensor.VersionRange{Min: lo, Max: hi} }
	f32 := []tensor.DType{tensor.Float32}
	f32q := []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int8}
	return []opEntry{
		{schema.BuiltinOperatorCONV_2D, v(1, 3), f32q, lowerConv2D},
		{schema.BuiltinOperatorDEPTHWISE_CONV_2D, v(1, 3), f32q, lowerDepthwiseConv2D},
		{schema.BuiltinOperatorFULLY_CONNECTED, v(1, 6), f32q, lowerFullyConnected},
		{schema.BuiltinOperatorADD, v(1, 2), f32q, lowerBinary(kAdd)},
		{schema.BuiltinOperatorSUB, v(1, 3), f32q, lowerBinary(kSubtract)},
		{schema.BuiltinOperatorMUL, v(1, 3), f32q, lowerBinary(kMultiply)},
		{schema.BuiltinOperatorDIV, v(1, 2), f32, lowerBinary(kDivide)},
		{schema.BuiltinOperatorMAXIMUM, v(1, 1), f32, lowerBinary(kMaximum)},
		{schema.BuiltinOperatorMINIMUM, v(1, 1), f32, lowerBinary(kMinimum)},
		{schema.BuiltinOperatorSQUARED_DIFFERENCE, v(1, 1), f32, lowerBinary(kSquaredDifference)},
		{schema.BuiltinOperatorAVERAGE_POOL_2D, v(1, 2), f32q, lowerPool(kAveragePool)},
		{schema.BuiltinOperatorMAX_POOL_2D, v(1, 2), f32q, lowerPool(kMaxPool)},
		{schema.BuiltinOperatorMEAN, v(1, 2), f32q, lowerMean},
		{schema.BuiltinOperatorSOFTMAX, v(1, 2), f32q, lowerSoftmax},
		{schema.BuiltinOperatorLOGISTIC, v(1, 2), f32q, lowerLogistic},
		{schema.BuiltinOperatorTANH, v(1, 1), f32, lowerTanh},
		{schema.BuiltinOperatorRELU, v(1, 2), f32q, lowerRelu(schema.ActivationFunctionTypeRELU)},
		{schema.BuiltinOperatorRELU6, v(1, 2), f32q, lowerRelu(schema.ActivationFunctionTypeRELU6)},
		{schema.BuiltinOperatorRELU_N1_TO_1, v(1, 1), f32q, lowerRelu(schema.ActivationFunctionTypeRELU_N1_TO_1)},
		{schema.BuiltinOperatorHARD_SWISH, v(1, 1), f32, lowerUnary(kHardSwish)},
		{schema.BuiltinOperatorLEAKY_RELU, v(1, 1), f32, lowerLeakyRelu},
		{schema.BuiltinOperatorPRELU, v(1, 1), f32, lowerPrelu},
		{schema.BuiltinOperatorABS, v(1, 1), f32, lowerUnary(kAbs)},
		{schema.BuiltinOperatorNEG, v(1, 1), f32, lowerUnary(kNegate)},
		{schema.BuiltinOperatorFLOOR, v(1, 1), f32, lowerUnary(kFloor)},
		{schema.BuiltinOperatorSQRT, v(1, 1), f32, lowerUnary(kSquareRoot)},
		{schema.BuiltinOperatorRESHAPE, v(1, 1), f32q, lowerReshape},
		{schema.BuiltinOperatorSQUEEZE, v(1, 1), f32q, lowerReshape},
		{schema.BuiltinOperatorEXPAND_DIMS, v(1, 1), f32q, lowerReshape},
		{schema.BuiltinOperatorCONCATENATION, v(1, 2), f32q, lowerConcat},
		{schema.BuiltinOperatorSPLIT, v(1, 2), f32q, lowerSplit},
		{schema.BuiltinOperatorSPLIT_V, v(1, 2), f32q, lowerSplit},
		{schema.BuiltinOperatorPAD, v(1, 2), f32q, lowerPad},
		{schema.BuiltinOperatorPADV2, v(1, 2), f32q, lowerPad},
		{schema.BuiltinOperatorRESIZE_BILINEAR, v(1, 3), f32q, lowerResizeBilinear},
		{schema.BuiltinOperatorDEPTH_TO_SPACE, v(1, 1), f32, lowerDepthToSpace},
		{schema.BuiltinOperatorTRANSPOSE, v(1, 4), f32q, lowerTranspose},
		{schema.BuiltinOperatorQUANTIZE, v(1, 1), f32q, lowerQuantize},
		{schema.BuiltinOperatorDEQUANTIZE, v(1, 2), f32q, lowerDequantize},
	}
}

// support is the declared support, from opTable.
func support() *delegate.Support {
	s := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}, Custom: map[string]delegate.OpSupport{}}
	for _, e := range opTable() {
		s.Builtins[e.code] = delegate.OpSupport{Versions: e.versions, Types: slices.Clone(e.types)}
	}
	return s
}

// --- convolutions -----------------------------------------------------------

// convTypes checks an (input, filter, output) combination XNNPACK runs:
// all float, all uint8 (asymmetric), or int8 with int8 weights per tensor
// or per output channel. Hybrid ops (float data, integer weights) are not.
func convTypes(in, f, out *value) error {
	ok := false
	switch in.dtype {
	case dtF32:
		ok = f.dtype == dtF32 && out.dtype == dtF32
		if f.dtype != dtF32 {
			return fmt.Errorf("hybrid op (FLOAT32 data, %s weights)", f.dtype)
		}
	case dtQU8:
		ok = f.dtype == dtQU8 && out.dtype == dtQU8
	case dtQS8:
		ok = (f.dtype == dtQS8 || f.dtype == dtQCS8) && out.dtype == dtQS8
	}
	if !ok {
		return fmt.Errorf("input %s, weights %s, output %s: not a combination XNNPACK runs", in.dtype, f.dtype, out.dtype)
	}
	return nil
}

// requantScale checks XNNPACK's bound on input scale × weight scale /
// output scale (below 256) for quantized convolutions.
func requantScale(in, f, out *value) error {
	if in.dtype == dtF32 {
		return nil
	}
	scales := f.scales
	if scales == nil {
		scales = []float32{f.scale}
	}
	for i, s := range scales {
		if r := in.scale * s / out.scale; r >= 256 {
			return fmt.Errorf("requantization scale %g (channel %d) is 256 or more", r, i)
		}
	}
	return nil
}

// convOperands are a convolution's (or fully connected op's) data input,
// constant weights and output.
type convOperands struct {
	inID, fID, outID int
	in, f, out       *value
}

// convIO returns input 0 (data), input 1 (weights of dims dimensions, per
// channel quantized on perChannelDim) and output 0 of a convolution, checked
// by convTypes.
func (c *opCtx) convIO(dims, perChannelDim int) (x convOperands, err error) {
	if x.inID, x.in, err = c.data(c.in(0)); err != nil {
		return
	}
	if x.fID, x.f, err = c.weights(c.in(1), dims, perChannelDim); err != nil {
		return
	}
	if x.outID, x.out, err = c.data(c.out(0)); err != nil {
		return
	}
	err = convTypes(x.in, x.f, x.out)
	return
}

// convNode checks the fused activation, requantization scale and bias (input
// 2, for oc output channels) of a convolution and adds node n, which gives
// the kind and the geometry, over its operands.
func (c *opCtx) convNode(x convOperands, oc int, act schema.ActivationFunctionType, n node) error {
	lo, hi, err := actRange(act, x.out)
	if err != nil {
		return err
	}
	if err := requantScale(x.in, x.f, x.out); err != nil {
		return err
	}
	bID, err := c.bias(c.in(2), oc, x.in, x.f)
	if err != nil {
		return err
	}
	n.op, n.in, n.out, n.outMin, n.outMax = c.index, []int{x.inID, x.fID, bID}, []int{x.outID}, lo, hi
	c.l.node(n)
	return nil
}

// window2D returns the [top, right, bottom, left] padding of a kh×kw window
// (strides sh, sw; dilations dh, dw) over NHWC in that gives out (window).
func window2D(p schema.Padding, in, out *value, kh, kw, sh, sw, dh, dw int) ([4]int, error) {
	pt, pb, err := window(p, in.shape[1], kh, sh, dh, out.shape[1])
	if err != nil {
		return [4]int{}, fmt.Errorf("height: %w", err)
	}
	pl, pr, err := window(p, in.shape[2], kw, sw, dw, out.shape[2])
	if err != nil {
		return [4]int{}, fmt.Errorf("width: %w", err)
	}
	return [4]int{pt, pr, pb, pl}, nil
}

func lowerConv2D(c *opCtx) error {
	if err := c.arity(2, 3, 1); err != nil {
		return err
	}
	o := options[schema.Conv2DOptionsT](c)
	x, err := c.convIO(4, 0)
	if err != nil {
		return err
	}
	in, f, out := x.in, x.f, x.out
	if len(in.shape) != 4 || len(out.shape) != 4 {
		return fmt.Errorf("input %v and output %v must be 4-D", in.shape, out.shape)
	}
	oc, kh, kw, ic := f.shape[0], f.shape[1], f.shape[2], f.shape[3]
	if in.shape[3] != ic {
		return fmt.Errorf("grouped convolution (%d input channels, filter takes %d)", in.shape[3], ic)
	}
	if out.shape[0] != in.shape[0] || out.shape[3] != oc {
		return fmt.Errorf("%w: output %v for input %v and filter %v", errShape, out.shape, in.shape, f.shape)
	}
	sh, sw, dh, dw := int(o.StrideH), int(o.StrideW), int(o.DilationHFactor), int(o.DilationWFactor)
	pad, err := window2D(o.Padding, in, out, kh, kw, sh, sw, dh, dw)
	if err != nil {
		return err
	}
	return c.convNode(x, oc, o.FusedActivationFunction, node{kind: kConv2D,
		pad: pad, kernel: [2]int{kh, kw}, stride: [2]int{sh, sw}, dilation: [2]int{dh, dw},
		groups: 1, groupIn: ic, groupOut: oc})
}

func lowerDepthwiseConv2D(c *opCtx) error {
	if err := c.arity(2, 3, 1); err != nil {
		return err
	}
	o := options[schema.DepthwiseConv2DOptionsT](c)
	x, err := c.convIO(4, 3)
	if err != nil {
		return err
	}
	in, f, out := x.in, x.f, x.out
	if len(in.shape) != 4 || len(out.shape) != 4 {
		return fmt.Errorf("input %v and output %v must be 4-D", in.shape, out.shape)
	}
	if f.shape[0] != 1 {
		return fmt.Errorf("filter shape %v, want [1, h, w, channels]", f.shape)
	}
	ic, oc := in.shape[3], f.shape[3]
	if oc%ic != 0 || out.shape[3] != oc || out.shape[0] != in.shape[0] {
		return fmt.Errorf("%w: output %v for input %v and filter %v", errShape, out.shape, in.shape, f.shape)
	}
	if m := int(o.DepthMultiplier); m != 0 && m != oc/ic {
		return fmt.Errorf("depth_multiplier %d, the shapes give %d", m, oc/ic)
	}
	kh, kw := f.shape[1], f.shape[2]
	sh, sw, dh, dw := int(o.StrideH), int(o.StrideW), int(o.DilationHFactor), int(o.DilationWFactor)
	pad, err := window2D(o.Padding, in, out, kh, kw, sh, sw, dh, dw)
	if err != nil {
		return err
	}
	return c.convNode(x, oc, o.FusedActivationFunction, node{kind: kDepthwiseConv2D,
		pad: pad, kernel: [2]int{kh, kw}, stride: [2]int{sh, sw}, dilation: [2]int{dh, dw},
		depthMul: oc / ic, channels: ic})
}

func lowerFullyConnected(c *opCtx) error {
	if err := c.arity(2, 3, 1); err != nil {
		return err
	}
	o := options[schema.FullyConnectedOptionsT](c)
	if o.WeightsFormat != schema.FullyConnectedOptionsWeightsFormatDEFAULT {
		return fmt.Errorf("weights format %s", schema.EnumNamesFullyConnectedOptionsWeightsFormat[o.WeightsFormat])
	}
	x, err := c.convIO(2, -1)
	if err != nil {
		return err
	}
	in, f, out := x.in, x.f, x.out
	oc, ic := f.shape[0], f.shape[1]
	n := tensor.NumElements(in.shape)
	if n%ic != 0 {
		return fmt.Errorf("%w: input %v is not a whole number of rows of %d", errShape, in.shape, ic)
	}
	want := []int{n / ic, oc}
	if o.KeepNumDims {
		if in.shape[len(in.shape)-1] != ic {
			return fmt.Errorf("%w: keep_num_dims with input %v and weights %v", errShape, in.shape, f.shape)
		}
		want = append(slices.Clone(in.shape[:len(in.shape)-1]), oc)
	}
	if !slices.Equal(out.shape, want) {
		return fmt.Errorf("%w: output %v, the op gives %v", errShape, out.shape, want)
	}
	return c.convNode(x, oc, o.FusedActivationFunction, node{kind: kFullyConnected})
}

// --- element-wise -------------------------------------------------------------

func lowerBinary(k kind) func(*opCtx) error {
	return func(c *opCtx) error {
		if err := c.arity(2, 2, 1); err != nil {
			return err
		}
		aID, a, err := c.data(c.in(0))
		if err != nil {
			return err
		}
		bID, b, err := c.data(c.in(1))
		if err != nil {
			return err
		}
		outID, out, err := c.data(c.out(0))
		if err != nil {
			return err
		}
		if a.dtype != out.dtype || b.dtype != out.dtype {
			return fmt.Errorf("inputs %s and %s, output %s", a.dtype, b.dtype, out.dtype)
		}
		if want, err := tensor.BroadcastShape(a.shape, b.shape); err != nil || !slices.Equal(want, out.shape) {
			return fmt.Errorf("%w: %v and %v give output %v", errShape, a.shape, b.shape, out.shape)
		}
		lo, hi, err := actRange(model.FusedActivation(c.options), out)
		if err != nil {
			return err
		}
		if out.dtype != dtF32 {
			inRange := func(r, lo, hi float32) bool { return r >= lo && r < hi }
			switch k {
			case kAdd, kSubtract:
				for _, in := range []*value{a, b} {
					if r := in.scale / out.scale; !inRange(r, 0x1p-10, 0x1p+8) {
						return fmt.Errorf("input/output scale ratio %g outside XNNPACK's [2^-10, 2^8)", r)
					}
				}
			case kMultiply:
				if r := a.scale * b.scale / out.scale; !inRange(r, 0x1p-16, 0x1p+8) {
					return fmt.Errorf("product/output scale ratio %g outside XNNPACK's [2^-16, 2^8)", r)
				}
			}
		}
		c.l.node(node{kind: k, op: c.index, in: []int{aID, bID}, out: []int{outID}, outMin: lo, outMax: hi})
		return nil
	}
}

// options returns the op's options of type T, or T's defaults when the
// model gives none.
func options[T any](c *opCtx) *T {
	if o, ok := c.options.(*T); ok && o != nil {
		return o
	}
	return new(T)
}

// io checks the op's arity (lo to hi inputs, one output) and returns its
// first input and its output (dataIO).
func (c *opCtx) io(lo, hi int) (inID, outID int, in, out *value, err error) {
	if err = c.arity(lo, hi, 1); err != nil {
		return
	}
	return c.dataIO()
}

// dataIO returns the activation values of input 0 and output 0.
func (c *opCtx) dataIO() (inID, outID int, in, out *value, err error) {
	if inID, in, err = c.data(c.in(0)); err != nil {
		return
	}
	outID, out, err = c.data(c.out(0))
	return
}

// unary lowers a one-input op whose output has the input's shape.
func (c *opCtx) unary(types ...dtype) (inID, outID int, in, out *value, err error) {
	if inID, outID, in, out, err = c.io(1, 1); err != nil {
		return
	}
	if !slices.Equal(in.shape, out.shape) {
		err = fmt.Errorf("%w: input %v, output %v", errShape, in.shape, out.shape)
		return
	}
	if !slices.Contains(types, in.dtype) {
		err = fmt.Errorf("%s data", in.dtype)
		return
	}
	if in.dtype != out.dtype {
		err = fmt.Errorf("input %s, output %s", in.dtype, out.dtype)
	}
	return
}

func lowerUnary(k kind) func(*opCtx) error {
	return func(c *opCtx) error {
		inID, outID, _, _, err := c.unary(dtF32)
		if err != nil {
			return err
		}
		c.l.node(node{kind: k, op: c.index, in: []int{inID}, out: []int{outID}})
		return nil
	}
}

func lowerRelu(act schema.ActivationFunctionType) func(*opCtx) error {
	return func(c *opCtx) error {
		inID, outID, in, out, err := c.unary(dtF32, dtQU8, dtQS8)
		if err != nil {
			return err
		}
		if err := sameQuant(in, out); err != nil {
			return err
		}
		lo, hi, err := actRange(act, out)
		if err != nil {
			return err
		}
		c.l.node(node{kind: kClamp, op: c.index, in: []int{inID}, out: []int{outID}, outMin: lo, outMax: hi})
		return nil
	}
}

func lowerLeakyRelu(c *opCtx) error {
	inID, outID, _, _, err := c.unary(dtF32)
	if err != nil {
		return err
	}
	o := options[schema.LeakyReluOptionsT](c)
	if math.IsNaN(float64(o.Alpha)) || math.IsInf(float64(o.Alpha), 0) {
		return fmt.Errorf("alpha %g", o.Alpha)
	}
	c.l.node(node{kind: kLeakyReLU, op: c.index, in: []int{inID}, out: []int{outID}, fval: o.Alpha})
	return nil
}

func lowerPrelu(c *opCtx) error {
	inID, outID, in, out, err := c.io(2, 2)
	if err != nil {
		return err
	}
	if in.dtype != dtF32 || out.dtype != dtF32 {
		return fmt.Errorf("%s data", in.dtype)
	}
	if len(in.shape) != 4 || !slices.Equal(in.shape, out.shape) {
		return fmt.Errorf("input %v and output %v: XNNPACK's PReLU takes 4-D data", in.shape, out.shape)
	}
	at := c.tensor(c.in(1))
	data := c.static(c.in(1))
	if data == nil || at.Type != tensor.Float32 {
		return fmt.Errorf("alpha %q is not a constant FLOAT32 tensor", at.Name)
	}
	ch := in.shape[3]
	shape := at.Shape
	for len(shape) > 1 && shape[0] == 1 {
		shape = shape[1:]
	}
	if len(shape) != 1 || shape[0] != ch || len(data) != 4*ch {
		return fmt.Errorf("alpha of shape %v: XNNPACK takes one slope per channel (%d)", at.Shape, ch)
	}
	sID := c.l.add(value{tensor: c.in(1), dtype: dtF32, shape: []int{ch}, static: data})
	c.l.node(node{kind: kPReLU, op: c.index, in: []int{inID, sID}, out: []int{outID}})
	return nil
}

// probQuant reports whether quantized out has the quantization of
// XNNPACK's quantized probabilities (sigmoid, softmax): scale 1/256 and
// zero point zp (0 for uint8, -128 for int8).
func probQuant(out *value) (zp int32, ok bool) {
	if out.dtype == dtQS8 {
		zp = -128
	}
	return zp, out.scale == 1.0/256 && out.zp == zp
}

func lowerLogistic(c *opCtx) error {
	inID, outID, _, out, err := c.unary(dtF32, dtQU8, dtQS8)
	if err != nil {
		return err
	}
	if out.dtype != dtF32 {
		if zp, ok := probQuant(out); !ok {
			return fmt.Errorf("output quantization (scale %g, zero point %d), XNNPACK takes 1/256 and %d", out.scale, out.zp, zp)
		}
	}
	c.l.node(node{kind: kSigmoid, op: c.index, in: []int{inID}, out: []int{outID}})
	return nil
}

// lowerTanh builds tanh(x) = 2·sigmoid(2x) − 1 from XNNPACK nodes: this
// XNNPACK has no tanh node. 2x and 2s are exact (x + x); the result is
// within about 2e-7 (absolute) of tanh.
func lowerTanh(c *opCtx) error {
	inID, outID, in, _, err := c.unary(dtF32)
	if err != nil {
		return err
	}
	inf := float32(math.Inf(1))
	l := c.l
	x2 := l.temp(dtF32, in.shape, 0, 0)
	s := l.temp(dtF32, in.shape, 0, 0)
	s2 := l.temp(dtF32, in.shape, 0, 0)
	minusOne := make([]byte, 4)
	binary.LittleEndian.PutUint32(minusOne, math.Float32bits(-1))
	m1 := l.add(value{tensor: -1, dtype: dtF32, shape: []int{1}, static: minusOne})
	l.node(node{kind: kAdd, op: c.index, in: []int{inID, inID}, out: []int{x2}, outMin: -inf, outMax: inf})
	l.node(node{kind: kSigmoid, op: c.index, in: []int{x2}, out: []int{s}})
	l.node(node{kind: kAdd, op: c.index, in: []int{s, s}, out: []int{s2}, outMin: -inf, outMax: inf})
	l.node(node{kind: kAdd, op: c.index, in: []int{s2, m1}, out: []int{outID}, outMin: -inf, outMax: inf})
	return nil
}

func lowerSoftmax(c *opCtx) error {
	inID, outID, in, out, err := c.unary(dtF32, dtQU8, dtQS8)
	if err != nil {
		return err
	}
	if beta := options[schema.SoftmaxOptionsT](c).Beta; beta != 1 {
		return fmt.Errorf("beta %g; XNNPACK's softmax has beta 1", beta)
	}
	if in.dtype == dtF32 {
		c.l.node(node{kind: kSoftmax, op: c.index, in: []int{inID}, out: []int{outID}})
		return nil
	}
	// This XNNPACK's softmax node is float only: dequantize, softmax in
	// float, quantize (converts), as TFLite's own quantized softmax
	// computes its probabilities in float.
	if zp, ok := probQuant(out); !ok {
		return fmt.Errorf("output quantization (scale %g, zero point %d), want 1/256 and %d", out.scale, out.zp, zp)
	}
	l := c.l
	fin := l.temp(dtF32, in.shape, 0, 0)
	fout := l.temp(dtF32, in.shape, 0, 0)
	l.node(node{kind: kConvert, op: c.index, in: []int{inID}, out: []int{fin}})
	l.node(node{kind: kSoftmax, op: c.index, in: []int{fin}, out: []int{fout}})
	l.node(node{kind: kConvert, op: c.index, in: []int{fout}, out: []int{outID}})
	return nil
}

// --- pooling ------------------------------------------------------------------

func lowerPool(k kind) func(*opCtx) error {
	return func(c *opCtx) error {
		inID, outID, in, out, err := c.poolIO()
		if err != nil {
			return err
		}
		o := options[schema.Pool2DOptionsT](c)
		if err := sameQuant(in, out); err != nil {
			return err
		}
		kh, kw, sh, sw := int(o.FilterHeight), int(o.FilterWidth), int(o.StrideH), int(o.StrideW)
		pad, err := window2D(o.Padding, in, out, kh, kw, sh, sw, 1, 1)
		if err != nil {
			return err
		}
		lo, hi, err := actRange(o.FusedActivationFunction, out)
		if err != nil {
			return err
		}
		n := node{op: c.index, in: []int{inID}, out: []int{outID}, outMin: lo, outMax: hi,
			pad: pad, kernel: [2]int{kh, kw}, stride: [2]int{sh, sw}, dilation: [2]int{1, 1}}
		switch {
		case kh*kw == 1:
			// XNNPACK refuses 1x1 pooling windows; with stride 1 the op is
			// its fused activation.
			if sh != 1 || sw != 1 {
				return fmt.Errorf("1x1 window with stride %dx%d", sh, sw)
			}
			n.kind = kClamp
		case k == kAveragePool && in.dtype != dtF32:
			// This XNNPACK's average pooling node is float only; a window
			// over the whole input is its global average pooling, which
			// takes quantized data.
			if kh != in.shape[1] || kw != in.shape[2] || out.shape[1] != 1 || out.shape[2] != 1 || pad != [4]int{} {
				return fmt.Errorf("quantized average pooling other than over the whole input")
			}
			n.kind = kGlobalAveragePool
		default:
			n.kind = k
		}
		c.l.node(n)
		return nil
	}
}

// poolIO checks the 4-D input and output of a pooling op.
func (c *opCtx) poolIO() (inID, outID int, in, out *value, err error) {
	if inID, outID, in, out, err = c.io(1, 1); err != nil {
		return
	}
	if len(in.shape) != 4 || len(out.shape) != 4 || in.shape[0] != out.shape[0] || in.shape[3] != out.shape[3] {
		err = fmt.Errorf("%w: input %v, output %v", errShape, in.shape, out.shape)
	}
	return
}

func lowerMean(c *opCtx) error {
	inID, outID, in, out, err := c.io(2, 2)
	if err != nil {
		return err
	}
	axes, err := c.intTensor(c.in(1), "axes")
	if err != nil {
		return err
	}
	if len(in.shape) != 4 {
		return fmt.Errorf("input %v: XNNPACK averages 4-D data over height and width only", in.shape)
	}
	var h, w bool
	for _, a := range axes {
		if a < 0 {
			a += 4
		}
		switch a {
		case 1:
			h = true
		case 2:
			w = true
		default:
			return fmt.Errorf("axes %v: XNNPACK averages over height and width (axes 1 and 2) only", axes)
		}
	}
	if !h || !w {
		return fmt.Errorf("axes %v: XNNPACK averages over height and width (axes 1 and 2) only", axes)
	}
	if in.dtype != out.dtype {
		return fmt.Errorf("input %s, output %s", in.dtype, out.dtype)
	}
	if in.dtype != dtF32 {
		if r := in.scale / out.scale; r < 0x1p-8 || r >= 0x1p+8 {
			return fmt.Errorf("input/output scale ratio %g outside XNNPACK's [2^-8, 2^8)", r)
		}
	}
	keep := options[schema.ReducerOptionsT](c).KeepDims
	pooled := []int{in.shape[0], 1, 1, in.shape[3]}
	want := pooled
	if !keep {
		want = []int{in.shape[0], in.shape[3]}
	}
	if !slices.Equal(out.shape, want) {
		return fmt.Errorf("%w: output %v, want %v", errShape, out.shape, want)
	}
	inf := float32(math.Inf(1))
	gap := node{kind: kGlobalAveragePool, op: c.index, in: []int{inID}, out: []int{outID}, outMin: -inf, outMax: inf}
	if keep {
		c.l.node(gap)
		return nil
	}
	t := c.l.temp(out.dtype, pooled, out.scale, out.zp)
	gap.out = []int{t}
	c.l.node(gap)
	c.l.node(node{kind: kReshape, op: c.index, in: []int{t}, out: []int{outID}, shape: slices.Clone(out.shape)})
	return nil
}

// --- data movement --------------------------------------------------------------

func lowerReshape(c *opCtx) error {
	if len(c.op.Inputs()) < 1 || len(c.op.Inputs()) > 2 || len(c.op.Outputs()) != 1 || c.in(0) < 0 {
		return fmt.Errorf("%d inputs and %d outputs", len(c.op.Inputs()), len(c.op.Outputs()))
	}
	if s := c.in(1); s >= 0 && c.static(s) == nil {
		return fmt.Errorf("shape or axis tensor %q is not constant", c.tensor(s).Name)
	}
	inID, outID, in, out, err := c.dataIO()
	if err != nil {
		return err
	}
	if tensor.NumElements(in.shape) != tensor.NumElements(out.shape) {
		return fmt.Errorf("%w: input %v, output %v", errShape, in.shape, out.shape)
	}
	if err := sameQuant(in, out); err != nil {
		return err
	}
	c.l.node(node{kind: kReshape, op: c.index, in: []int{inID}, out: []int{outID}, shape: slices.Clone(out.shape)})
	return nil
}

func lowerPad(c *opCtx) error {
	if err := c.arity(2, 3, 1); err != nil {
		return err
	}
	if c.code == schema.BuiltinOperatorPAD && len(c.op.Inputs()) != 2 {
		return fmt.Errorf("%d inputs, want 2", len(c.op.Inputs()))
	}
	inID, outID, in, out, err := c.dataIO()
	if err != nil {
		return err
	}
	if err := sameQuant(in, out); err != nil {
		return err
	}
	pads, err := c.intTensor(c.in(1), "paddings")
	if err != nil {
		return err
	}
	r := len(in.shape)
	if pt := c.tensor(c.in(1)); len(pt.Shape) != 2 || pt.Shape[0] != r || pt.Shape[1] != 2 {
		return fmt.Errorf("paddings of shape %v for %d-D input", pt.Shape, r)
	}
	pre, post := make([]int, r), make([]int, r)
	for i := 0; i < r; i++ {
		pre[i], post[i] = pads[2*i], pads[2*i+1]
		if pre[i] < 0 || post[i] < 0 {
			return fmt.Errorf("negative paddings %v", pads)
		}
		if out.shape[i] != in.shape[i]+pre[i]+post[i] {
			return fmt.Errorf("%w: output %v for input %v and paddings %v", errShape, out.shape, in.shape, pads)
		}
	}
	var padValue float32
	if ci := c.in(2); ci >= 0 {
		cID, cv, err := c.data(ci)
		if err != nil {
			return err
		}
		if cv.static == nil || tensor.NumElements(cv.shape) != 1 {
			return fmt.Errorf("constant_values must be one constant value")
		}
		if err := sameQuant(cv, out); err != nil {
			return fmt.Errorf("constant_values: %w", err)
		}
		b := c.l.p.values[cID].static
		switch cv.dtype {
		case dtF32:
			padValue = math.Float32frombits(binary.LittleEndian.Uint32(b))
		case dtQU8:
			padValue = float32(float64(int32(b[0])-cv.zp) * float64(cv.scale))
		case dtQS8:
			padValue = float32(float64(int32(int8(b[0]))-cv.zp) * float64(cv.scale))
		}
	}
	c.l.node(node{kind: kPad, op: c.index, in: []int{inID}, out: []int{outID}, pre: pre, post: post, fval: padValue})
	return nil
}

func lowerResizeBilinear(c *opCtx) error {
	inID, outID, in, out, err := c.io(2, 2)
	if err != nil {
		return err
	}
	if err := sameQuant(in, out); err != nil {
		return err
	}
	size, err := c.intTensor(c.in(1), "size")
	if err != nil {
		return err
	}
	if len(in.shape) != 4 || len(out.shape) != 4 || len(size) != 2 ||
		out.shape[0] != in.shape[0] || out.shape[3] != in.shape[3] || out.shape[1] != size[0] || out.shape[2] != size[1] {
		return fmt.Errorf("%w: input %v, size %v, output %v", errShape, in.shape, size, out.shape)
	}
	o := options[schema.ResizeBilinearOptionsT](c)
	var flags uint32
	switch {
	case o.AlignCorners && o.HalfPixelCenters:
		return fmt.Errorf("align_corners with half_pixel_centers")
	case o.AlignCorners:
		flags = flagAlignCorners
	case !o.HalfPixelCenters:
		flags = flagTensorFlowLegacy
	}
	c.l.node(node{kind: kResizeBilinear, op: c.index, in: []int{inID}, out: []int{outID},
		newH: size[0], newW: size[1], flags: flags})
	return nil
}

func lowerDepthToSpace(c *opCtx) error {
	inID, outID, in, out, err := c.io(1, 1)
	if err != nil {
		return err
	}
	if in.dtype != dtF32 || out.dtype != dtF32 {
		return fmt.Errorf("%s data", in.dtype)
	}
	b := int(options[schema.DepthToSpaceOptionsT](c).BlockSize)
	if b < 2 {
		return fmt.Errorf("block size %d", b)
	}
	if len(in.shape) != 4 || in.shape[3]%(b*b) != 0 ||
		!slices.Equal(out.shape, []int{in.shape[0], in.shape[1] * b, in.shape[2] * b, in.shape[3] / (b * b)}) {
		return fmt.Errorf("%w: input %v, block %d, output %v", errShape, in.shape, b, out.shape)
	}
	c.l.node(node{kind: kDepthToSpace, op: c.index, in: []int{inID}, out: []int{outID}, block: b})
	return nil
}

// lowerConcat copies each input into its slot of the output with XNNPACK's
// strided copy operators: this XNNPACK has no concatenate node.
func lowerConcat(c *opCtx) error {
	if len(c.op.Inputs()) < 1 || len(c.op.Outputs()) != 1 {
		return fmt.Errorf("%d inputs and %d outputs", len(c.op.Inputs()), len(c.op.Outputs()))
	}
	o := options[schema.ConcatenationOptionsT](c)
	if o.FusedActivationFunction != schema.ActivationFunctionTypeNONE {
		return fmt.Errorf("fused activation %s", schema.EnumNamesActivationFunctionType[o.FusedActivationFunction])
	}
	outID, out, err := c.data(c.out(0))
	if err != nil {
		return err
	}
	r := len(out.shape)
	axis := int(o.Axis)
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return fmt.Errorf("axis %d for %d-D output", o.Axis, r)
	}
	outer, inner := tensor.NumElements(out.shape[:axis]), tensor.NumElements(out.shape[axis+1:])
	elem := out.dtype.size()
	n := node{kind: kConcat, op: c.index, out: []int{outID}}
	offset := 0
	for i := range c.op.Inputs() {
		if c.in(i) < 0 {
			return fmt.Errorf("input %d is missing", i)
		}
		inID, in, err := c.data(c.in(i))
		if err != nil {
			return err
		}
		if err := sameQuant(in, out); err != nil {
			return fmt.Errorf("input %d: %w", i, err)
		}
		if len(in.shape) != r {
			return fmt.Errorf("%w: input %d %v, output %v", errShape, i, in.shape, out.shape)
		}
		for d := range in.shape {
			if d != axis && in.shape[d] != out.shape[d] {
				return fmt.Errorf("%w: input %d %v, output %v", errShape, i, in.shape, out.shape)
			}
		}
		ch := in.shape[axis] * inner
		n.in = append(n.in, inID)
		n.prims = append(n.prims, prim{elem: elem, batch: outer, channels: ch, inStride: ch,
			outStride: out.shape[axis] * inner, in: inID, out: outID, outOff: offset * inner * elem})
		offset += in.shape[axis]
	}
	if offset != out.shape[axis] {
		return fmt.Errorf("%w: inputs give %d along axis %d, output has %d", errShape, offset, axis, out.shape[axis])
	}
	c.l.node(n)
	return nil
}

// lowerSplit copies each slice of the input into its output with
// XNNPACK's strided copy operators (SPLIT: equal slices; SPLIT_V: sizes
// given, one of them possibly -1). Like TFLite, it moves bytes and leaves
// quantization alone.
func lowerSplit(c *opCtx) error {
	var dataIn, axisIn int
	var sizes []int
	switch c.code {
	case schema.BuiltinOperatorSPLIT:
		if err := c.arity(2, 2, len(c.op.Outputs())); err != nil {
			return err
		}
		axisIn, dataIn = c.in(0), c.in(1)
	default:
		if err := c.arity(3, 3, len(c.op.Outputs())); err != nil {
			return err
		}
		dataIn, axisIn = c.in(0), c.in(2)
		var err error
		if sizes, err = c.intTensor(c.in(1), "size_splits"); err != nil {
			return err
		}
	}
	n := len(c.op.Outputs())
	if n == 0 {
		return fmt.Errorf("no outputs")
	}
	inID, in, err := c.data(dataIn)
	if err != nil {
		return err
	}
	axes, err := c.intTensor(axisIn, "axis")
	if err != nil {
		return err
	}
	r := len(in.shape)
	if len(axes) != 1 || axes[0] < -r || axes[0] >= r {
		return fmt.Errorf("axis %v for %d-D input", axes, r)
	}
	axis := axes[0]
	if axis < 0 {
		axis += r
	}
	total := in.shape[axis]
	if sizes == nil {
		if total%n != 0 {
			return fmt.Errorf("%w: %d does not split in %d", errShape, total, n)
		}
		for range n {
			sizes = append(sizes, total/n)
		}
	}
	if len(sizes) != n {
		return fmt.Errorf("%d sizes for %d outputs", len(sizes), n)
	}
	if i := slices.Index(sizes, -1); i >= 0 {
		rest := total
		for j, s := range sizes {
			if j != i {
				rest -= s
			}
		}
		sizes = slices.Clone(sizes)
		sizes[i] = rest
	}
	outer, inner := tensor.NumElements(in.shape[:axis]), tensor.NumElements(in.shape[axis+1:])
	elem := in.dtype.size()
	nd := node{kind: kConcat, op: c.index, in: []int{inID}}
	offset := 0
	for i := range n {
		outID, out, err := c.data(c.out(i))
		if err != nil {
			return err
		}
		want := slices.Clone(in.shape)
		want[axis] = sizes[i]
		if out.dtype != in.dtype || !slices.Equal(out.shape, want) || sizes[i] <= 0 {
			return fmt.Errorf("%w: output %d is %s %v, want %s %v", errShape, i, out.dtype, out.shape, in.dtype, want)
		}
		ch := sizes[i] * inner
		nd.out = append(nd.out, outID)
		nd.prims = append(nd.prims, prim{elem: elem, batch: outer, channels: ch, inStride: total * inner,
			outStride: ch, in: inID, out: outID, inOff: offset * inner * elem})
		offset += sizes[i]
	}
	if offset != total {
		return fmt.Errorf("%w: sizes %v do not add up to %d", errShape, sizes, total)
	}
	c.l.node(nd)
	return nil
}

// lowerTranspose runs a transpose as a sequence of XNNPACK channel shuffles
// (this XNNPACK has no transpose): each shuffle swaps two adjacent blocks
// of dimensions, [outer, X, Y] -> [outer, Y, X], which is a shuffle of
// groups X of Y channels over a batch of outer rows. A permutation of r
// dimensions takes at most r-1 of them, after dimensions of size 1 are
// dropped and dimensions that stay together are merged.
func lowerTranspose(c *opCtx) error {
	inID, outID, in, out, err := c.io(2, 2)
	if err != nil {
		return err
	}
	if err := sameQuant(in, out); err != nil {
		return err
	}
	perm, err := c.intTensor(c.in(1), "perm")
	if err != nil {
		return err
	}
	r := len(in.shape)
	if len(perm) != r {
		return fmt.Errorf("perm %v for %d-D input", perm, r)
	}
	seen := make([]bool, r)
	want := make([]int, r)
	for i, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return fmt.Errorf("perm %v is not a permutation", perm)
		}
		seen[p] = true
		want[i] = in.shape[p]
	}
	if !slices.Equal(want, out.shape) {
		return fmt.Errorf("%w: input %v, perm %v, output %v", errShape, in.shape, perm, out.shape)
	}
	steps := rotations(in.shape, perm)
	elem := in.dtype.size()
	n := node{kind: kTranspose, op: c.index, in: []int{inID}, out: []int{outID}}
	if len(steps) == 0 {
		// The permutation only moves dimensions of size 1: a copy.
		total := tensor.NumElements(in.shape)
		n.prims = []prim{{elem: elem, batch: 1, channels: total, inStride: total, outStride: total, in: inID, out: outID}}
		c.l.node(n)
		return nil
	}
	src := inID
	for i, s := range steps {
		dst := outID
		if i < len(steps)-1 {
			dst = c.l.temp(in.dtype, in.shape, in.scale, in.zp)
		}
		ch := s.groups * s.groupCh
		n.prims = append(n.prims, prim{shuffle: true, elem: elem, batch: s.batch, groups: s.groups, groupCh: s.groupCh,
			inStride: ch, outStride: ch, in: src, out: dst})
		src = dst
	}
	c.l.node(n)
	return nil
}

// rotation is one block swap of a transpose: a batch of rows, each holding
// groups blocks of groupCh elements, becomes groupCh blocks of groups.
type rotation struct{ batch, groups, groupCh int }

// rotations decomposes a transpose of shape by perm into block swaps.
func rotations(shape, perm []int) []rotation {
	// Drop size-1 dimensions: they do not move data.
	var dims, p []int
	keep := map[int]int{}
	for d, n := range shape {
		if n != 1 {
			keep[d] = len(dims)
			dims = append(dims, n)
		}
	}
	for _, d := range perm {
		if j, ok := keep[d]; ok {
			p = append(p, j)
		}
	}
	// Merge input dimensions that stay adjacent and in order in the output.
	for i := 0; i+1 < len(p); {
		if p[i+1] == p[i]+1 {
			d := p[i]
			dims[d] *= dims[d+1]
			dims = slices.Delete(dims, d+1, d+2)
			p = slices.Delete(p, i+1, i+2)
			for k := range p {
				if p[k] > d {
					p[k]--
				}
			}
			continue
		}
		i++
	}
	// cur lists the input dimensions in their current memory order.
	cur := make([]int, len(dims))
	for i := range cur {
		cur[i] = i
	}
	var out []rotation
	for k := range p {
		j := slices.Index(cur, p[k])
		if j == k {
			continue
		}
		size := func(ds []int) int {
			n := 1
			for _, d := range ds {
				n *= dims[d]
			}
			return n
		}
		out = append(out, rotation{batch: size(cur[:k]), groups: size(cur[k:j]), groupCh: size(cur[j:])})
		cur = slices.Concat(cur[:k], cur[j:], cur[k:j])
	}
	return out
}

// --- quantization ------------------------------------------------------------

func lowerQuantize(c *opCtx) error {
	inID, outID, in, out, err := c.io(1, 1)
	if err != nil {
		return err
	}
	if !slices.Equal(in.shape, out.shape) {
		return fmt.Errorf("%w: input %v, output %v", errShape, in.shape, out.shape)
	}
	if out.dtype == dtF32 {
		return fmt.Errorf("FLOAT32 output")
	}
	if in.dtype == dtF32 {
		c.l.node(node{kind: kConvert, op: c.index, in: []int{inID}, out: []int{outID}})
		return nil
	}
	// Requantization: this XNNPACK converts between integer and float
	// only, so go through float.
	f := c.l.temp(dtF32, in.shape, 0, 0)
	c.l.node(node{kind: kConvert, op: c.index, in: []int{inID}, out: []int{f}})
	c.l.node(node{kind: kConvert, op: c.index, in: []int{f}, out: []int{outID}})
	return nil
}

func lowerDequantize(c *opCtx) error {
	inID, outID, in, out, err := c.io(1, 1)
	if err != nil {
		return err
	}
	if !slices.Equal(in.shape, out.shape) {
		return fmt.Errorf("%w: input %v, output %v", errShape, in.shape, out.shape)
	}
	if in.dtype == dtF32 || out.dtype != dtF32 {
		return fmt.Errorf("input %s, output %s", in.dtype, out.dtype)
	}
	c.l.node(node{kind: kConvert, op: c.index, in: []int{inID}, out: []int{outID}})
	return nil
}
