package quantize

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// QUANTIZE and DEQUANTIZE (TFLite 2.9 quantize.cc, dequantize.cc), with the
// kernels its builtin resolver picks on x86-64 and the same version ranges.
// They share the 8-bit tables and checks of kernel/lut.go.
//
// QUANTIZE takes FLOAT32 to UINT8, INT8 or INT16 (per-tensor output
// quantization only): round(x/scale) in double precision, half away from
// zero, plus the zero point, clamped. It also requantizes INT8/UINT8 to
// INT8/UINT8 and INT16 to INT8/INT16 with an integer multiplier for
// input_scale/output_scale. INT16 tensors need zero point 0.
//
// DEQUANTIZE takes UINT8, INT8, INT16 (zero point 0) and FLOAT16 to FLOAT32:
// scale*(q-zero_point) in double precision rounded to float; UINT8 and INT8
// may be per-channel, then the product is single precision. NumericVerify
// (numeric_verify.go) dequantizes the same way.

// Ops returns the family\'s registrations, with the versions TFLite 2.9
// registers.
func Ops() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorQUANTIZE, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: NewQuantizeOp},
		{Code: schema.BuiltinOperatorDEQUANTIZE, Versions: tensor.VersionRange{Min: 1, Max: 5}, Types: []tensor.DType{tensor.Float16, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newDequantizeOp},
		{Code: schema.BuiltinOperatorFAKE_QUANT, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32}, New: newFakeQuantOp},
		{Code: schema.BuiltinOperatorCUSTOM, Custom: numericVerifyName, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float16, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newNumericVerifyOp},
	}
}

type quantizeOp struct {
	// FLOAT32 input.
	scale float64
	outZP int32
	// Requantization.
	mult  int32
	shift int
	inZP  int32
	lut   [256]byte
}

func NewQuantizeOp(kernel.OpInfo) (kernel.Op, error) { return &quantizeOp{}, nil }

func (op *quantizeOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "QUANTIZE", 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if err := kernel.CheckQuantized(out); err != nil {
		return fmt.Errorf("QUANTIZE: %w", err)
	}
	if len(out.Quant.Scale) != 1 {
		return kernel.Unsupported("QUANTIZE: per-channel output quantization (%d scales)", len(out.Quant.Scale))
	}
	ok := false
	switch in.Type {
	case tensor.Float32:
		ok = out.Type == tensor.Uint8 || out.Type == tensor.Int8 || out.Type == tensor.Int16
	case tensor.Int16:
		ok = out.Type == tensor.Int8 || out.Type == tensor.Int16
	case tensor.Int8, tensor.Uint8:
		ok = out.Type == tensor.Uint8 || out.Type == tensor.Int8
	}
	if !ok {
		return kernel.Unsupported("QUANTIZE: input type %s with output type %s", in.Type, out.Type)
	}
	out.Shape = append([]int(nil), in.Shape...)
	op.outZP = out.ZeroPoint()
	op.scale = float64(out.Scale())
	if out.Type == tensor.Int16 && op.outZP != 0 {
		return fmt.Errorf("QUANTIZE: int16 output needs zero point 0, got %d", op.outZP)
	}
	if in.Type == tensor.Float32 {
		return nil
	}
	if err := kernel.CheckQuantized(in); err != nil {
		return fmt.Errorf("QUANTIZE: %w", err)
	}
	op.inZP = in.ZeroPoint()
	if in.Type == tensor.Int16 && op.inZP != 0 {
		return fmt.Errorf("QUANTIZE: int16 input needs zero point 0, got %d", op.inZP)
	}
	op.mult, op.shift = kernel.QuantizeMultiplier(float64(in.Scale()) / float64(out.Scale()))
	if in.Type != tensor.Int16 {
		lo, hi, _ := tensor.QuantizedRange(out.Type)
		kernel.LUT8(in.Type, &op.lut, func(v int32) int32 { return op.requantize(v, lo, hi) })
	}
	return nil
}

// requantize maps one input value to the output's quantization.
func (op *quantizeOp) requantize(v, lo, hi int32) int32 {
	return kernel.Clamp(kernel.MultiplyByQuantizedMultiplier(v-op.inZP, op.mult, op.shift)+op.outZP, lo, hi)
}

func (op *quantizeOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	switch in.Type {
	case tensor.Float32:
		src := in.Float32s()
		switch out.Type {
		case tensor.Uint8:
			actAffineQuantize(src, out.Uint8s(), op.scale, op.outZP, 0, math.MaxUint8)
		case tensor.Int8:
			actAffineQuantize(src, out.Int8s(), op.scale, op.outZP, math.MinInt8, math.MaxInt8)
		case tensor.Int16:
			actAffineQuantize(src, out.Int16s(), op.scale, op.outZP, math.MinInt16, math.MaxInt16)
		}
	case tensor.Uint8, tensor.Int8:
		kernel.ApplyLUT8(&op.lut, in.Data, out.Data)
	case tensor.Int16:
		src := in.Int16s()
		switch out.Type {
		case tensor.Int8:
			dst := out.Int8s()[:len(src)]
			for i, v := range src {
				dst[i] = int8(op.requantize(int32(v), math.MinInt8, math.MaxInt8))
			}
		case tensor.Int16:
			dst := out.Int16s()[:len(src)]
			for i, v := range src {
				dst[i] = int16(op.requantize(int32(v), math.MinInt16, math.MaxInt16))
			}
		}
	default:
		return kernel.Unsupported("QUANTIZE: input type %s", in.Type)
	}
	return nil
}

// actAffineQuantize quantizes floats: round(x/scale) + zp, clamped to
// [lo, hi]. Out-of-range quotients wrap as x86-64's conversion makes them.
func actAffineQuantize[T uint8 | int8 | int16](src []float32, dst []T, scale float64, zp, lo, hi int32) {
	dst = dst[:len(src)]
	for i, v := range src {
		q := kernel.CInt32(math.Round(float64(v)/scale)) + zp
		dst[i] = T(kernel.Clamp(q, lo, hi))
	}
}

type dequantizeOp struct {
	perChannel bool
	scale      float64
	zp         int32
	// Per-channel parameters along axis.
	scales []float32
	zps    []int32
	axis   int
}

func newDequantizeOp(kernel.OpInfo) (kernel.Op, error) { return &dequantizeOp{}, nil }

func (op *dequantizeOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "DEQUANTIZE", 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	switch in.Type {
	case tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Float16:
	default:
		return kernel.Unsupported("DEQUANTIZE: input type %s", in.Type)
	}
	if out.Type != tensor.Float32 {
		return fmt.Errorf("DEQUANTIZE: output type must be FLOAT32, got %s", out.Type)
	}
	out.Shape = append([]int(nil), in.Shape...)
	if in.Type == tensor.Float16 {
		op.perChannel = false
		return nil
	}
	if err := kernel.CheckQuantized(in); err != nil {
		return fmt.Errorf("DEQUANTIZE: %w", err)
	}
	if in.Type == tensor.Int16 && in.ZeroPoint() != 0 {
		return fmt.Errorf("DEQUANTIZE: int16 input needs zero point 0, got %d", in.ZeroPoint())
	}
	return op.setParams("DEQUANTIZE", in)
}

// setParams takes op's parameters from in's quantization: per channel when
// it has more than one scale (UINT8 and INT8 only), else its scale and zero
// point (0 and 0 when it has none).
func (op *dequantizeOp) setParams(name string, in *tensor.Tensor) error {
	q := in.Quant
	op.perChannel = false
	if !q.PerChannel() {
		op.scale, op.zp = float64(in.Scale()), in.ZeroPoint()
		return nil
	}
	if in.Type != tensor.Uint8 && in.Type != tensor.Int8 {
		return kernel.Unsupported("%s: per-channel input of type %s", name, in.Type)
	}
	if q.Axis < 0 || q.Axis >= len(in.Shape) {
		return fmt.Errorf("%s: quantized dimension %d out of range for rank %d", name, q.Axis, len(in.Shape))
	}
	if in.Shape[q.Axis] != len(q.Scale) || len(q.ZeroPoint) != len(q.Scale) {
		return fmt.Errorf("%s: %d scales and %d zero points for dimension %d of size %d",
			name, len(q.Scale), len(q.ZeroPoint), q.Axis, in.Shape[q.Axis])
	}
	op.perChannel, op.axis = true, q.Axis
	op.scales = append(op.scales[:0], q.Scale...)
	op.zps = op.zps[:0]
	for _, z := range q.ZeroPoint {
		op.zps = append(op.zps, int32(z))
	}
	return nil
}

func (op *dequantizeOp) Eval(n *kernel.Node) error {
	op.dequantize(n.Inputs[0], n.Outputs[0].Float32s())
	return nil
}

// dequantize writes in's values, dequantized with op's parameters, to dst.
func (op *dequantizeOp) dequantize(in *tensor.Tensor, dst []float32) {
	if !op.perChannel {
		dequantizeTensor(in, dst, op.scale, op.zp)
		return
	}
	switch in.Type {
	case tensor.Uint8:
		perChannelDequantize(op, in.Shape, in.Uint8s(), dst)
	case tensor.Int8:
		perChannelDequantize(op, in.Shape, in.Int8s(), dst)
	}
}

// dequantizeTensor dequantizes a UINT8, INT8 or INT16 tensor with one scale
// and zero point into dst, as scale*(q-zp) in double precision rounded to
// float, or widens a FLOAT16 one (scale and zp unused).
func dequantizeTensor(in *tensor.Tensor, dst []float32, scale float64, zp int32) {
	switch in.Type {
	case tensor.Float16:
		src := tensor.View[uint16](in.Data)
		dst = dst[:len(src)]
		for i, h := range src {
			dst[i] = tensor.Float16ToFloat32(h)
		}
	case tensor.Uint8:
		affineDequantize(in.Uint8s(), dst, scale, zp)
	case tensor.Int8:
		affineDequantize(in.Int8s(), dst, scale, zp)
	case tensor.Int16:
		affineDequantize(in.Int16s(), dst, scale, zp)
	}
}

func affineDequantize[T uint8 | int8 | int16](src []T, dst []float32, scale float64, zp int32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = float32(scale * float64(int32(v)-zp))
	}
}

// perChannelDequantize dequantizes src into dst with op's per-channel
// parameters along op.axis, in single precision.
func perChannelDequantize[T uint8 | int8](op *dequantizeOp, shape []int, src []T, dst []float32) {
	channels := shape[op.axis]
	inner := tensor.NumElements(shape[op.axis+1:])
	if channels*inner == 0 {
		return
	}
	for i := 0; i < len(src); {
		for c := range channels {
			s, z := op.scales[c], op.zps[c]
			for end := i + inner; i < end; i++ {
				dst[i] = s * float32(int32(src[i])-z)
			}
		}
	}
}
