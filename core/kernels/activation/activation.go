package activation

import (
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file registers the activation family and implements the ReLU variants,
// LEAKY_RELU and HARD_SWISH; LOGISTIC and TANH are in logistic.go,
// SOFTMAX in softmax.go, LOG_SOFTMAX in logsoftmax.go, ELU and GELU in
// elu_gelu.go, LOCAL_RESPONSE_NORMALIZATION in lrn.go and PRELU in
// prelu.go. The family follows TensorFlow Lite 2.9's
// tensorflow/lite/kernels/activations.cc (and gelu.cc, local_response_norm.cc)
// with the kernels its builtin resolver picks on x86-64 (kGenericOptimized,
// without NEON), and registers the same version ranges.
//
// The float element-wise activations (the ReLU variants, LEAKY_RELU,
// HARD_SWISH, PRELU) run f32elem's assembly through float_elem.go, bit
// for bit as TFLite's formulas in Go, cut among the threads when large.
//
// Quantized element-wise activations of 8-bit tensors are evaluated through a
// 256-entry table built in Prepare with exactly TFLite's per-value arithmetic,
// so the table changes nothing but the speed.

// activationOps returns the registrations of this op family.
func activationOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorRELU, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newReluOp(actRelu)},
		{Code: schema.BuiltinOperatorRELU_N1_TO_1, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8}, New: newReluOp(actRelu1)},
		{Code: schema.BuiltinOperatorRELU6, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newReluOp(actRelu6)},
		{Code: schema.BuiltinOperatorLOGISTIC, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newLogisticOp},
		{Code: schema.BuiltinOperatorTANH, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newTanhOp},
		{Code: schema.BuiltinOperatorSOFTMAX, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newSoftmaxOp},
		{Code: schema.BuiltinOperatorLEAKY_RELU, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newLeakyReluOp},
		{Code: schema.BuiltinOperatorHARD_SWISH, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8}, New: newHardSwishOp},
		{Code: schema.BuiltinOperatorPRELU, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8}, New: newPreluOp},
		{Code: schema.BuiltinOperatorELU, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32, tensor.Int8}, New: newEluOp},
		{Code: schema.BuiltinOperatorGELU, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8}, New: newGeluOp},
		{Code: schema.BuiltinOperatorLOG_SOFTMAX, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32}, New: newLogSoftmaxOp},
		{Code: schema.BuiltinOperatorLOCAL_RESPONSE_NORMALIZATION, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newLRNOp},
	}
}

// actUnary checks a one-input, one-output node whose output has the input's
// type, gives the output the input's shape and returns both tensors.
func actUnary(n *kernel.Node, op string) (in, out *tensor.Tensor, err error) {
	if err := kernel.CheckArity(n, op, 1, 1); err != nil {
		return nil, nil, err
	}
	in, out = n.Inputs[0], n.Outputs[0]
	if in.Type != out.Type {
		return nil, nil, fmt.Errorf("%s: input type %s and output type %s differ", op, in.Type, out.Type)
	}
	out.Shape = append([]int(nil), in.Shape...)
	return in, out, nil
}

// actTypesIO starts the Prepare of an activation by the input type:
// FLOAT32 needs nothing more (isFloat); one of quantTypes needs a quantized
// input and output; any other type is unsupported.
func actTypesIO(op string, in, out *tensor.Tensor, quantTypes ...tensor.DType) (isFloat bool, err error) {
	if in.Type == tensor.Float32 {
		return true, nil
	}
	if !slices.Contains(quantTypes, in.Type) {
		return false, kernel.Unsupported("%s: input type %s", op, in.Type)
	}
	if err := kernel.CheckQuantized(in); err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	if err := kernel.CheckQuantized(out); err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	return false, nil
}

// The ReLU variants.
type actReluKind int

const (
	actRelu  actReluKind = iota // RELU: [0, inf)
	actRelu1                    // RELU_N1_TO_1: [-1, 1]
	actRelu6                    // RELU6: [0, 6]
)

var actReluNames = [...]string{"RELU", "RELU_N1_TO_1", "RELU6"}

// bounds returns the activation's real range.
func (k actReluKind) bounds() (lo, hi float32) {
	switch k {
	case actRelu1:
		return -1, 1
	case actRelu6:
		return 0, 6
	}
	return 0, float32(math.Inf(1))
}

// reluOp implements RELU, RELU_N1_TO_1 and RELU6. Quantized inputs are
// requantized to the output scale and clamped to the quantized range of the
// activation (TFLite's QuantizedReluX).
type reluOp struct {
	kind actReluKind

	// Prepared for quantized types.
	multiplier int32
	shift      int
	inZP       int32
	outZP      int32
	qmin, qmax int32
	lut        [256]byte

	loop floatLoop
}

func newReluOp(kind actReluKind) func(kernel.OpInfo) (kernel.Op, error) {
	return func(kernel.OpInfo) (kernel.Op, error) { return &reluOp{kind: kind}, nil }
}

func (op *reluOp) Prepare(n *kernel.Node) error {
	name := actReluNames[op.kind]
	in, out, err := actUnary(n, name)
	if err != nil {
		return err
	}
	quantTypes := []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16}
	if op.kind == actRelu1 {
		quantTypes = quantTypes[:2]
	}
	if isFloat, err := actTypesIO(name, in, out, quantTypes...); isFloat || err != nil {
		return err
	}
	op.inZP, op.outZP = in.ZeroPoint(), out.ZeroPoint()
	if in.Type == tensor.Int16 && (op.inZP != 0 || op.outZP != 0) {
		return fmt.Errorf("%s: int16 tensors need zero points 0, got %d and %d", name, op.inZP, op.outZP)
	}
	// The ratio is computed in single precision, as TFLite does.
	op.multiplier, op.shift = kernel.QuantizeMultiplier(float64(in.Scale() / out.Scale()))
	tmin, tmax, _ := tensor.QuantizedRange(in.Type)
	lo, hi := op.kind.bounds()
	scale := out.Scale()
	op.qmin = max(tmin, op.outZP+kernel.CInt32(float64(kernel.Roundf(lo/scale))))
	op.qmax = tmax
	if !math.IsInf(float64(hi), 1) {
		op.qmax = min(tmax, op.outZP+kernel.CInt32(float64(kernel.Roundf(hi/scale))))
	}
	if in.Type != tensor.Int16 {
		kernel.LUT8(in.Type, &op.lut, op.quantize)
	}
	return nil
}

// quantize maps one quantized input value to its output value.
func (op *reluOp) quantize(v int32) int32 {
	r := op.outZP + kernel.MultiplyByQuantizedMultiplier(v-op.inZP, op.multiplier, op.shift)
	return kernel.Clamp(r, op.qmin, op.qmax)
}

func (op *reluOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	switch in.Type {
	case tensor.Float32:
		// RELU is `if !(v > 0) { v = 0 }`, RELU6 min(max(0, v), 6) and
		// RELU_N1_TO_1 max(min(v, 1), -1), with std::max and std::min.
		src, dst := in.Float32s(), out.Float32s()
		switch op.kind {
		case actRelu:
			op.loop.unary(n, f32elem.MaxMin, dst, src, 0, float32(math.Inf(1)), 0)
		case actRelu1:
			op.loop.unary(n, f32elem.Clamp, dst, src, -1, 1, 0)
		case actRelu6:
			op.loop.unary(n, f32elem.MaxMin, dst, src, 0, 6, 0)
		}
	case tensor.Uint8, tensor.Int8:
		kernel.ApplyLUT8(&op.lut, in.Data, out.Data)
	case tensor.Int16:
		src, dst := in.Int16s(), out.Int16s()
		dst = dst[:len(src)]
		for i, v := range src {
			dst[i] = int16(op.quantize(int32(v)))
		}
	default:
		return kernel.Unsupported("%s: input type %s", actReluNames[op.kind], in.Type)
	}
	return nil
}

// actMaxf and actMinf are std::max and std::min on floats: with a NaN operand
// they return the first one.
func actMaxf(a, b float32) float32 {
	if a < b {
		return b
	}
	return a
}

func actMinf(a, b float32) float32 {
	if b < a {
		return b
	}
	return a
}

// LeakyReluParams are LEAKY_RELU's options.
type LeakyReluParams struct {
	Alpha float32
}

// leakyReluOp implements LEAKY_RELU: x for x > 0 (x >= 0 when quantized),
// alpha*x otherwise. Quantized inputs use one multiplier for each branch.
type leakyReluOp struct {
	params LeakyReluParams

	inZP, outZP        int32
	multAlpha, multID  int32
	shiftAlpha, shiftI int
	lut                [256]byte
	loop               floatLoop
}

func newLeakyReluOp(info kernel.OpInfo) (kernel.Op, error) {
	var p LeakyReluParams
	if tbl, ok := info.Options(schema.BuiltinOptionsLeakyReluOptions); ok {
		var o schema.LeakyReluOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p.Alpha = o.Alpha()
	}
	return &leakyReluOp{params: p}, nil
}

func (op *leakyReluOp) Prepare(n *kernel.Node) error {
	in, out, err := actUnary(n, "LEAKY_RELU")
	if err != nil {
		return err
	}
	if isFloat, err := actTypesIO("LEAKY_RELU", in, out, tensor.Uint8, tensor.Int8, tensor.Int16); isFloat || err != nil {
		return err
	}
	op.inZP, op.outZP = in.ZeroPoint(), out.ZeroPoint()
	if in.Type == tensor.Int16 && (op.inZP != 0 || op.outZP != 0) {
		return fmt.Errorf("LEAKY_RELU: int16 tensors need zero points 0, got %d and %d", op.inZP, op.outZP)
	}
	// Single-precision products and ratios, as in TFLite.
	op.multAlpha, op.shiftAlpha = kernel.QuantizeMultiplier(float64(in.Scale() * op.params.Alpha / out.Scale()))
	op.multID, op.shiftI = kernel.QuantizeMultiplier(float64(in.Scale() / out.Scale()))
	if in.Type != tensor.Int16 {
		lo, hi, _ := tensor.QuantizedRange(in.Type)
		kernel.LUT8(in.Type, &op.lut, func(v int32) int32 { return op.quantize(v, lo, hi) })
	}
	return nil
}

// quantize maps one quantized input value to its output value in [lo, hi].
func (op *leakyReluOp) quantize(v, lo, hi int32) int32 {
	x := v - op.inZP
	var r int32
	if x >= 0 {
		r = op.outZP + kernel.MultiplyByQuantizedMultiplier(x, op.multID, op.shiftI)
	} else {
		r = op.outZP + kernel.MultiplyByQuantizedMultiplier(x, op.multAlpha, op.shiftAlpha)
	}
	return kernel.Clamp(r, lo, hi)
}

func (op *leakyReluOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	switch in.Type {
	case tensor.Float32:
		// `if !(v > 0) { v *= alpha }`
		op.loop.unary(n, f32elem.LeakyRelu, out.Float32s(), in.Float32s(), 0, 0, op.params.Alpha)
	case tensor.Uint8, tensor.Int8:
		kernel.ApplyLUT8(&op.lut, in.Data, out.Data)
	case tensor.Int16:
		src, dst := in.Int16s(), out.Int16s()
		dst = dst[:len(src)]
		for i, v := range src {
			dst[i] = int16(op.quantize(int32(v), math.MinInt16, math.MaxInt16))
		}
	default:
		return kernel.Unsupported("LEAKY_RELU: input type %s", in.Type)
	}
	return nil
}

// hardSwishOp implements HARD_SWISH, x*relu6(x+3)/6. The quantized version
// is TFLite's 16-bit fixed-point scheme: the input on a "hires" scale (times
// 2^7), a saturated "reluish" factor in [0, 1] and int16 multipliers.
type hardSwishOp struct {
	inZP, outZP int32
	outMult     int16
	outExp      int
	reluishMult int16
	reluishExp  int
	lut         [256]byte
	loop        floatLoop
}

func newHardSwishOp(kernel.OpInfo) (kernel.Op, error) { return &hardSwishOp{}, nil }

// actDownScaleMultiplier rounds a Q31 multiplier to Q15
// (TFLite's DownScaleInt32ToInt16Multiplier).
func actDownScaleMultiplier(m int32) int16 {
	const rounding = 1 << 15
	if m >= math.MaxInt32-rounding {
		return math.MaxInt16
	}
	return int16((m + rounding) >> 16)
}

func (op *hardSwishOp) Prepare(n *kernel.Node) error {
	in, out, err := actUnary(n, "HARD_SWISH")
	if err != nil {
		return err
	}
	if isFloat, err := actTypesIO("HARD_SWISH", in, out, tensor.Uint8, tensor.Int8); isFloat || err != nil {
		return err
	}
	op.inZP, op.outZP = in.ZeroPoint(), out.ZeroPoint()
	hiresInputScale := (1.0 / 128.0) * in.Scale()
	const reluishScale = float32(3.0 / 32768.0)
	outMultiplier := hiresInputScale / out.Scale()
	m, e := kernel.QuantizeMultiplier(float64(outMultiplier))
	op.outMult, op.outExp = actDownScaleMultiplier(m), e
	if op.outExp > 0 {
		return fmt.Errorf("HARD_SWISH: output multiplier %g is too large (input scale %g, output scale %g)",
			outMultiplier, in.Scale(), out.Scale())
	}
	m, e = kernel.QuantizeMultiplier(float64(hiresInputScale / reluishScale))
	op.reluishMult, op.reluishExp = actDownScaleMultiplier(m), e
	lo, hi, _ := tensor.QuantizedRange(in.Type)
	kernel.LUT8(in.Type, &op.lut, func(v int32) int32 { return op.quantize(v, lo, hi) })
	return nil
}

// actSatShiftLeft16 is value*2^amount saturated to int16.
func actSatShiftLeft16(v int16, amount int) int16 {
	return int16(min(max(int64(v)*(int64(1)<<amount), math.MinInt16), math.MaxInt16))
}

// actSatDoublingHighMul16 is the high half of 2*a*b truncated toward zero
// (ARM's SQDMULH), saturating min*min.
func actSatDoublingHighMul16(a, b int16) int16 {
	if a == b && a == math.MinInt16 {
		return math.MaxInt16
	}
	return int16((int32(a) * int32(b)) / (1 << 15))
}

// quantize is TFLite's reference quantized HardSwish for one value, with its
// int16 intermediate types.
func (op *hardSwishOp) quantize(v, lo, hi int32) int32 {
	x := int16(v - op.inZP)
	hires := x * (1 << 7)
	preshift := kernel.FixedMul(hires, op.outMult)
	reluish := hires
	if op.reluishExp > 0 {
		reluish = actSatShiftLeft16(reluish, op.reluishExp-1)
	}
	reluish = kernel.FixedMul(reluish, op.reluishMult)
	if op.reluishExp > 0 {
		reluish = actSatShiftLeft16(reluish, 1)
	}
	if op.reluishExp < 0 {
		reluish = kernel.FixedRoundingDivideByPOT(reluish, -op.reluishExp)
	}
	reluish = int16((int32(reluish) + (1 << 15)) >> 1)
	pre := actSatDoublingHighMul16(reluish, preshift)
	o := kernel.FixedRoundingDivideByPOT(pre, -op.outExp)
	o += int16(op.outZP)
	return kernel.Clamp(int32(o), lo, hi)
}

func (op *hardSwishOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	switch in.Type {
	case tensor.Float32:
		// x * min(6, max(0, x+3)) * float32(1.0/6.0)
		op.loop.unary(n, f32elem.HardSwish, out.Float32s(), in.Float32s(), 0, 0, 0)
	case tensor.Uint8, tensor.Int8:
		kernel.ApplyLUT8(&op.lut, in.Data, out.Data)
	default:
		return kernel.Unsupported("HARD_SWISH: input type %s", in.Type)
	}
	return nil
}
