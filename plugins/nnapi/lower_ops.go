package nnapi

import (
	"fmt"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/nnapi/nn"
	"github.com/delego/delego/tensor"
)

// lowerNode lowers operator n into NNAPI operations, as TFLite's
// NNAPIDelegateKernel::Map does: the TFLite inputs first, then the
// operation's scalar parameters.
func (l *lowerer) lowerNode(n int) error {
	c := newNode(l.m, n, target{level: l.level})
	lower, ok := loweringOf(c.code)
	if !ok {
		return fmt.Errorf("%s: delego's nnapi delegate cannot lower it yet", c.label())
	}
	if err := lower(l, c); err != nil {
		return fmt.Errorf("%s: %w", c.label(), err)
	}
	return nil
}

type lowerFunc func(*lowerer, *node) error

func loweringOf(code schema.BuiltinOperator) (lowerFunc, bool) {
	f, ok := map[schema.BuiltinOperator]lowerFunc{
		schema.BuiltinOperatorCONV_2D:                 lowerConv,
		schema.BuiltinOperatorDEPTHWISE_CONV_2D:       lowerDepthwise,
		schema.BuiltinOperatorFULLY_CONNECTED:         lowerFullyConnected,
		schema.BuiltinOperatorADD:                     arith(nn.OpAdd),
		schema.BuiltinOperatorSUB:                     arith(nn.OpSub),
		schema.BuiltinOperatorMUL:                     arith(nn.OpMul),
		schema.BuiltinOperatorDIV:                     arith(nn.OpDiv),
		schema.BuiltinOperatorAVERAGE_POOL_2D:         pool(nn.OpAveragePool2D),
		schema.BuiltinOperatorMAX_POOL_2D:             pool(nn.OpMaxPool2D),
		schema.BuiltinOperatorL2_POOL_2D:              pool(nn.OpL2Pool2D),
		schema.BuiltinOperatorCONCATENATION:           lowerConcat,
		schema.BuiltinOperatorRESHAPE:                 lowerReshape,
		schema.BuiltinOperatorSQUEEZE:                 lowerSqueeze,
		schema.BuiltinOperatorSOFTMAX:                 lowerSoftmax,
		schema.BuiltinOperatorLOGISTIC:                unary(nn.OpLogistic),
		schema.BuiltinOperatorTANH:                    unary(nn.OpTanh),
		schema.BuiltinOperatorRELU:                    unary(nn.OpRelu),
		schema.BuiltinOperatorRELU6:                   unary(nn.OpRelu6),
		schema.BuiltinOperatorRELU_N1_TO_1:            unary(nn.OpRelu1),
		schema.BuiltinOperatorHARD_SWISH:              unary(nn.OpHardSwish),
		schema.BuiltinOperatorDEQUANTIZE:              unary(nn.OpDequantize),
		schema.BuiltinOperatorQUANTIZE:                lowerQuantize,
		schema.BuiltinOperatorPRELU:                   binaryPlain(nn.OpPrelu),
		schema.BuiltinOperatorLEAKY_RELU:              lowerLeakyRelu,
		schema.BuiltinOperatorPAD:                     lowerPad,
		schema.BuiltinOperatorPADV2:                   lowerPad,
		schema.BuiltinOperatorMEAN:                    lowerMean,
		schema.BuiltinOperatorSPLIT:                   lowerSplit,
		schema.BuiltinOperatorTRANSPOSE:               binaryPlain(nn.OpTranspose),
		schema.BuiltinOperatorSTRIDED_SLICE:           lowerStridedSlice,
		schema.BuiltinOperatorGATHER:                  lowerGather,
		schema.BuiltinOperatorARG_MAX:                 lowerArgMax,
		schema.BuiltinOperatorRESIZE_BILINEAR:         resize(nn.OpResizeBilinear),
		schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR: resize(nn.OpResizeNearestNeighbor),
	}[code]
	return f, ok
}

// operands returns the operands of tensors tis.
func (l *lowerer) operands(tis ...int) ([]uint32, error) {
	out := make([]uint32, len(tis))
	for i, ti := range tis {
		if ti < 0 {
			return nil, fmt.Errorf("input %d is omitted", i)
		}
		o, err := l.operandOf(ti)
		if err != nil {
			return nil, err
		}
		out[i] = o
	}
	return out, nil
}

// emit adds operation op reading the TFLite inputs ins then params, and
// writing the node's outputs.
func (l *lowerer) emit(c *node, op nn.OperationType, ins []int, params ...uint32) error {
	in, err := l.operands(ins...)
	if err != nil {
		return err
	}
	out, err := l.operands(c.outs...)
	if err != nil {
		return err
	}
	l.op(c.index, op, append(in, params...), out)
	return nil
}

// fuse is the node's fused activation as NNAPI's FuseCode.
func (l *lowerer) fuse(c *node) (uint32, error) {
	switch a := c.fused(); a {
	case schema.ActivationFunctionTypeNONE:
		return l.i32(nn.FuseNone), nil
	case schema.ActivationFunctionTypeRELU:
		return l.i32(nn.FuseRelu), nil
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return l.i32(nn.FuseRelu1), nil
	case schema.ActivationFunctionTypeRELU6:
		return l.i32(nn.FuseRelu6), nil
	default:
		return 0, fmt.Errorf("fused activation %s, which NNAPI does not fuse", a)
	}
}

func padding(p schema.Padding) int32 {
	if p == schema.PaddingVALID {
		return nn.PaddingValid
	}
	return nn.PaddingSame
}

// bias is the operand of a convolution's bias, input 2 of c, or a zero
// bias of units elements when the node has none (as TFLite adds one):
// FLOAT32 for float, else INT32 with scale input scale * filter scale (0
// for per-channel filters, whose bias scales NNAPI derives).
func (l *lowerer) bias(c *node, units int) (uint32, error) {
	in, err := l.operandOf(c.in(0))
	if err != nil {
		return 0, err
	}
	f, err := l.operandOf(c.in(1))
	if err != nil {
		return 0, err
	}
	filter := l.g.operands[f]
	scale := l.g.operands[in].Scale * filter.Scale
	if filter.Type == nn.TensorQuant8SymmPerChannel {
		scale = 0
	}
	if ti := c.in(2); ti >= 0 {
		b, err := l.operandOf(ti)
		if err != nil {
			return 0, err
		}
		if l.g.operands[b].Type == nn.TensorInt32 && filter.Type == nn.TensorQuant8SymmPerChannel {
			l.g.operands[b].Scale = 0
		}
		return b, nil
	}
	if l.g.operands[in].Type == nn.TensorFloat32 {
		return l.add(operand{Operand: nn.Operand{Type: nn.TensorFloat32, Dims: []uint32{uint32(units)}}, value: make([]byte, 4*units)}), nil
	}
	return l.add(operand{Operand: nn.Operand{Type: nn.TensorInt32, Dims: []uint32{uint32(units)}, Scale: scale}, value: make([]byte, 4*units)}), nil
}

// notHybrid refuses float inputs with quantized weights: TFLite adds a
// DEQUANTIZE for them, delego does not lower that form yet.
func notHybrid(c *node) error {
	if c.isHybrid() {
		return fmt.Errorf("float input with quantized weights: delego's nnapi delegate does not lower this hybrid form yet")
	}
	return nil
}

func lowerConv(l *lowerer, c *node) error {
	o, ok := c.options.(*schema.Conv2DOptionsT)
	if !ok {
		return fmt.Errorf("no Conv2DOptions")
	}
	if err := notHybrid(c); err != nil {
		return err
	}
	b, err := l.bias(c, c.tensor(c.in(1)).Shape[0])
	if err != nil {
		return err
	}
	fuse, err := l.fuse(c)
	if err != nil {
		return err
	}
	params := []uint32{b, l.i32(padding(o.Padding)), l.i32(o.StrideW), l.i32(o.StrideH), fuse}
	if o.DilationWFactor != 1 || o.DilationHFactor != 1 {
		params = append(params, l.boolean(false), l.i32(o.DilationWFactor), l.i32(o.DilationHFactor))
	}
	return l.emit(c, nn.OpConv2D, c.ins[:2], params...)
}

func lowerDepthwise(l *lowerer, c *node) error {
	o, ok := c.options.(*schema.DepthwiseConv2DOptionsT)
	if !ok {
		return fmt.Errorf("no DepthwiseConv2DOptions")
	}
	if err := notHybrid(c); err != nil {
		return err
	}
	shape := c.tensor(c.in(1)).Shape
	b, err := l.bias(c, shape[len(shape)-1])
	if err != nil {
		return err
	}
	fuse, err := l.fuse(c)
	if err != nil {
		return err
	}
	params := []uint32{b, l.i32(padding(o.Padding)), l.i32(o.StrideW), l.i32(o.StrideH), l.i32(o.DepthMultiplier), fuse}
	if o.DilationWFactor != 1 || o.DilationHFactor != 1 {
		params = append(params, l.boolean(false), l.i32(o.DilationWFactor), l.i32(o.DilationHFactor))
	}
	return l.emit(c, nn.OpDepthwiseConv2D, c.ins[:2], params...)
}

// lowerFullyConnected is FULLY_CONNECTED; with keep_num_dims (or any output
// that is not [batch, units]) NNAPI's 2-D result is reshaped to TFLite's.
func lowerFullyConnected(l *lowerer, c *node) error {
	o, _ := c.options.(*schema.FullyConnectedOptionsT)
	if o != nil && o.WeightsFormat != schema.FullyConnectedOptionsWeightsFormatDEFAULT {
		return fmt.Errorf("shuffled weights, which NNAPI does not take")
	}
	if err := notHybrid(c); err != nil {
		return err
	}
	if !c.isConst(c.in(1)) {
		return fmt.Errorf("non-constant weights: delego's nnapi delegate lowers constant weights only")
	}
	units := c.tensor(c.in(1)).Shape[0]
	b, err := l.bias(c, units)
	if err != nil {
		return err
	}
	fuse, err := l.fuse(c)
	if err != nil {
		return err
	}
	in, err := l.operands(c.in(0), c.in(1))
	if err != nil {
		return err
	}
	out, err := l.operandOf(c.outs[0])
	if err != nil {
		return err
	}
	outShape := c.tensor(c.outs[0]).Shape
	if len(outShape) == 2 {
		l.op(c.index, nn.OpFullyConnected, append(in, b, fuse), []uint32{out})
		return nil
	}
	n := 1
	for _, d := range outShape {
		n *= d
	}
	flat := l.g.operands[out].Operand
	flat.Dims = []uint32{uint32(n / units), uint32(units)}
	tmp := l.temp(flat)
	l.op(c.index, nn.OpFullyConnected, append(in, b, fuse), []uint32{tmp})
	l.op(c.index, nn.OpReshape, []uint32{tmp, l.i32s(int32s(outShape))}, []uint32{out})
	return nil
}

func int32s(s []int) []int32 {
	out := make([]int32, len(s))
	for i, v := range s {
		out[i] = int32(v)
	}
	return out
}

// arith is ADD, SUB, MUL, DIV: two inputs and the fused activation.
func arith(op nn.OperationType) lowerFunc {
	return func(l *lowerer, c *node) error {
		fuse, err := l.fuse(c)
		if err != nil {
			return err
		}
		return l.emit(c, op, c.ins[:2], fuse)
	}
}

// binaryPlain is an operation of the node's two inputs, nothing else.
func binaryPlain(op nn.OperationType) lowerFunc {
	return func(l *lowerer, c *node) error {
		if len(c.ins) < 2 {
			return fmt.Errorf("expects two inputs")
		}
		return l.emit(c, op, c.ins[:2])
	}
}

func unary(op nn.OperationType) lowerFunc {
	return func(l *lowerer, c *node) error { return l.emit(c, op, c.ins[:1]) }
}

func pool(op nn.OperationType) lowerFunc {
	return func(l *lowerer, c *node) error {
		o, ok := c.options.(*schema.Pool2DOptionsT)
		if !ok {
			return fmt.Errorf("no Pool2DOptions")
		}
		fuse, err := l.fuse(c)
		if err != nil {
			return err
		}
		return l.emit(c, op, c.ins[:1], l.i32(padding(o.Padding)), l.i32(o.StrideW), l.i32(o.StrideH),
			l.i32(o.FilterWidth), l.i32(o.FilterHeight), fuse)
	}
}

// axis normalises a possibly negative axis of a rank-r tensor.
func axis(a, r int) int32 {
	if a < 0 {
		a += r
	}
	return int32(a)
}

func lowerConcat(l *lowerer, c *node) error {
	o, _ := c.options.(*schema.ConcatenationOptionsT)
	a := 0
	if o != nil {
		a = int(o.Axis)
	}
	return l.emit(c, nn.OpConcatenation, c.ins, l.i32(axis(a, c.rank(c.outs[0]))))
}

// lowerReshape takes the new shape from the output tensor, whose shape the
// partition fixes.
func lowerReshape(l *lowerer, c *node) error {
	return l.emit(c, nn.OpReshape, c.ins[:1], l.i32s(int32s(c.tensor(c.outs[0]).Shape)))
}

func lowerSqueeze(l *lowerer, c *node) error {
	in := c.tensor(c.in(0)).Shape
	var sq []int32
	if o, ok := c.options.(*schema.SqueezeOptionsT); ok && len(o.SqueezeDims) > 0 {
		for _, d := range o.SqueezeDims {
			sq = append(sq, axis(int(d), len(in)))
		}
	} else {
		for i, d := range in {
			if d == 1 {
				sq = append(sq, int32(i))
			}
		}
	}
	return l.emit(c, nn.OpSqueeze, c.ins[:1], l.i32s(sq))
}

func lowerSoftmax(l *lowerer, c *node) error {
	beta := float32(1)
	if o, ok := c.options.(*schema.SoftmaxOptionsT); ok {
		beta = o.Beta
	}
	return l.emit(c, nn.OpSoftmax, c.ins[:1], l.f32(beta))
}

// lowerQuantize is QUANTIZE; NNAPI quantizes from float only, so a
// quantized input is dequantized first (as TFLite does).
func lowerQuantize(l *lowerer, c *node) error {
	if !isQuantized(c.inType(0)) {
		return l.emit(c, nn.OpQuantize, c.ins[:1])
	}
	in, err := l.operandOf(c.in(0))
	if err != nil {
		return err
	}
	out, err := l.operandOf(c.outs[0])
	if err != nil {
		return err
	}
	tmp := l.temp(nn.Operand{Type: nn.TensorFloat32, Dims: l.g.operands[in].Dims})
	l.op(c.index, nn.OpDequantize, []uint32{in}, []uint32{tmp})
	l.op(c.index, nn.OpQuantize, []uint32{tmp}, []uint32{out})
	return nil
}

// lowerLeakyRelu is LEAKY_RELU as NNAPI's PRELU with a constant alpha.
func lowerLeakyRelu(l *lowerer, c *node) error {
	if c.inType(0) != tensor.Float32 {
		return fmt.Errorf("quantized LEAKY_RELU: delego lowers only the FLOAT32 form yet")
	}
	o, _ := c.options.(*schema.LeakyReluOptionsT)
	alpha := float32(0)
	if o != nil {
		alpha = o.Alpha
	}
	in, err := l.operandOf(c.in(0))
	if err != nil {
		return err
	}
	out, err := l.operandOf(c.outs[0])
	if err != nil {
		return err
	}
	s := l.f32(alpha)
	l.g.operands[s].Type, l.g.operands[s].Dims = nn.TensorFloat32, []uint32{1}
	l.op(c.index, nn.OpPrelu, []uint32{in, s}, []uint32{out})
	return nil
}

// lowerPad is PAD (and PADV2 with its padding value as a scalar: FLOAT32
// for float, INT32 in the input's quantization for 8-bit).
func lowerPad(l *lowerer, c *node) error {
	pads, err := l.constInt32s(c.in(1))
	if err != nil {
		return fmt.Errorf("paddings: %w", err)
	}
	p := l.i32s(pads)
	l.g.operands[p].Dims = []uint32{uint32(len(pads) / 2), 2}
	if len(c.ins) < 3 || c.in(2) < 0 {
		return l.emit(c, nn.OpPad, c.ins[:1], p)
	}
	ti := c.in(2)
	if !c.isConst(ti) {
		return fmt.Errorf("the padding value is not constant")
	}
	b := c.m.Buffer(c.tensor(ti).Buffer)
	var v uint32
	switch c.tensor(ti).Type {
	case tensor.Float32:
		o, _ := l.operandOf(ti)
		v = l.f32(l.float32Of(o))
	case tensor.Uint8:
		v = l.i32(int32(b[0]))
	case tensor.Int8:
		x := int32(int8(b[0]))
		if !l.signedInt8() {
			x += 128
		}
		v = l.i32(x)
	default:
		return fmt.Errorf("padding value of type %s", c.tensor(ti).Type)
	}
	return l.emit(c, nn.OpPadV2, c.ins[:1], p, v)
}

// float32Of reads a constant FLOAT32 operand's first value.
func (l *lowerer) float32Of(o uint32) float32 {
	b := l.g.operands[o].value
	if len(b) < 4 {
		return 0
	}
	return float32frombits(b)
}

func lowerMean(l *lowerer, c *node) error {
	axes, err := l.constInt32s(c.in(1))
	if err != nil {
		return fmt.Errorf("axes: %w", err)
	}
	r := c.rank(c.in(0))
	for i := range axes {
		axes[i] = axis(int(axes[i]), r)
	}
	keep := int32(0)
	if o, ok := c.options.(*schema.ReducerOptionsT); ok && o.KeepDims {
		keep = 1
	}
	return l.emit(c, nn.OpMean, c.ins[:1], l.i32s(axes), l.i32(keep))
}

// lowerSplit is SPLIT: TFLite's inputs are (axis, input).
func lowerSplit(l *lowerer, c *node) error {
	ax, err := l.constInt32s(c.in(0))
	if err != nil || len(ax) != 1 {
		return fmt.Errorf("the axis is not one constant INT32")
	}
	return l.emit(c, nn.OpSplit, []int{c.in(1)}, l.i32(axis(int(ax[0]), c.rank(c.in(1)))), l.i32(int32(len(c.outs))))
}

func lowerStridedSlice(l *lowerer, c *node) error {
	o, _ := c.options.(*schema.StridedSliceOptionsT)
	if o == nil {
		o = &schema.StridedSliceOptionsT{}
	}
	if o.EllipsisMask != 0 || o.NewAxisMask != 0 {
		return fmt.Errorf("ellipsis_mask or new_axis_mask, which NNAPI's STRIDED_SLICE does not take")
	}
	for i := 1; i < 4; i++ {
		if !c.isConst(c.in(i)) {
			return fmt.Errorf("begin, end and strides must be constant")
		}
	}
	return l.emit(c, nn.OpStridedSlice, c.ins[:4], l.i32(o.BeginMask), l.i32(o.EndMask), l.i32(o.ShrinkAxisMask))
}

// lowerGather is GATHER: NNAPI's inputs are (input, axis, indices).
func lowerGather(l *lowerer, c *node) error {
	a := 0
	if o, ok := c.options.(*schema.GatherOptionsT); ok {
		if o.BatchDims != 0 {
			return fmt.Errorf("batch_dims %d, which NNAPI's GATHER does not take", o.BatchDims)
		}
		a = int(o.Axis)
	}
	in, err := l.operands(c.in(0), c.in(1))
	if err != nil {
		return err
	}
	out, err := l.operands(c.outs...)
	if err != nil {
		return err
	}
	l.op(c.index, nn.OpGather, []uint32{in[0], l.i32(axis(a, c.rank(c.in(0)))), in[1]}, out)
	return nil
}

func lowerArgMax(l *lowerer, c *node) error {
	ax, err := l.constInt32s(c.in(1))
	if err != nil || len(ax) != 1 {
		return fmt.Errorf("the axis is not one constant")
	}
	return l.emit(c, nn.OpArgMax, c.ins[:1], l.i32(axis(int(ax[0]), c.rank(c.in(0)))))
}

// resize is RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR: output width and
// height as scalars, then (from 1.2) the NHWC flag and (from 1.3) the
// corner flags.
func resize(op nn.OperationType) lowerFunc {
	return func(l *lowerer, c *node) error {
		out := c.tensor(c.outs[0]).Shape
		if len(out) != 4 {
			return fmt.Errorf("output of rank %d", len(out))
		}
		var align, half bool
		switch o := c.options.(type) {
		case *schema.ResizeBilinearOptionsT:
			align, half = o.AlignCorners, o.HalfPixelCenters
		case *schema.ResizeNearestNeighborOptionsT:
			align, half = o.AlignCorners, o.HalfPixelCenters
		}
		params := []uint32{l.i32(int32(out[2])), l.i32(int32(out[1]))}
		if op == nn.OpResizeNearestNeighbor || align || half {
			params = append(params, l.boolean(false))
		}
		if align || half {
			params = append(params, l.boolean(align), l.boolean(half))
		}
		return l.emit(c, op, c.ins[:1], params...)
	}
}
