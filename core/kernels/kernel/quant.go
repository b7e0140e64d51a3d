package kernel

import (
	"math"
	"math/bits"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds the fixed-point arithmetic that TensorFlow Lite's quantized
// kernels share (tensorflow/lite/kernels/internal/common.h,
// quantization_util.cc and kernel_util.cc in TF 2.9), written to give the
// same bits.

// QuantizeMultiplier splits a real multiplier into a Q31 fixed-point
// multiplier and a power-of-two exponent: real ≈ m * 2^(shift-31).
// Multipliers so small that every bit would be shifted out become (0, 0).
func QuantizeMultiplier(real float64) (multiplier int32, shift int) {
	return tensor.QuantizeMultiplier(real)
}

// SaturatingRoundingDoublingHighMul returns the high 32 bits of 2*a*b, rounded
// to nearest, saturating the single overflow case (MinInt32 * MinInt32).
func SaturatingRoundingDoublingHighMul(a, b int32) int32 {
	if a == b && a == math.MinInt32 {
		return math.MaxInt32
	}
	ab := int64(a) * int64(b)
	nudge := int64(1 << 30)
	if ab < 0 {
		nudge = 1 - (1 << 30)
	}
	return int32((ab + nudge) / (1 << 31))
}

// RoundingDivideByPOT divides x by 2^exponent, rounding half away from zero.
func RoundingDivideByPOT(x int32, exponent int) int32 {
	return FixedRoundingDivideByPOT(x, exponent)
}

// MultiplyByQuantizedMultiplier computes x * m * 2^(shift-31) with TFLite's
// double rounding (doubling high multiply, then rounding right shift).
func MultiplyByQuantizedMultiplier(x, m int32, shift int) int32 {
	left, right := 0, 0
	if shift > 0 {
		left = shift
	} else {
		right = -shift
	}
	return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x*(1<<left), m), right)
}

// MultiplyByQuantizedMultiplierSmallerThanOneExp is the variant for shift <= 0.
func MultiplyByQuantizedMultiplierSmallerThanOneExp(x, m int32, shift int) int32 {
	return RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m), -shift)
}

// MultiplyByQuantizedMultiplier64 is TFLite's int64-accumulator variant (used
// by 16x8 kernels): the multiplier is reduced to 16 bits, then one rounding shift.
func MultiplyByQuantizedMultiplier64(x int64, m int32, shift int) int32 {
	reduced := int32(0x7FFF)
	if m < 0x7FFF0000 {
		reduced = (m + (1 << 15)) >> 16
	}
	total := 15 - shift
	x = x*int64(reduced) + int64(1)<<(total-1)
	return int32(x >> total)
}

// ActivationRangeQuantized returns the clamp range of a fused activation on
// the quantized output t (CalculateActivationRangeQuantized in TFLite). As
// there, activations other than RELU, RELU6 and RELU_N1_TO_1 (NONE, and TANH
// or SIGN_BIT, which TFLite never fuses into these kernels) clamp only to the
// type's range.
func ActivationRangeQuantized(act schema.ActivationFunctionType, t *tensor.Tensor) (lo, hi int32, err error) {
	qmin, qmax, ok := tensor.QuantizedRange(t.Type)
	if !ok {
		return 0, 0, Unsupported("quantized activation on %s", t.Type)
	}
	scale, zp := t.Scale(), t.ZeroPoint()
	quantize := func(f float32) int32 { return zp + int32(math.Round(float64(f/scale))) }
	switch act {
	case schema.ActivationFunctionTypeRELU:
		return max(qmin, quantize(0)), qmax, nil
	case schema.ActivationFunctionTypeRELU6:
		return max(qmin, quantize(0)), min(qmax, quantize(6)), nil
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return max(qmin, quantize(-1)), min(qmax, quantize(1)), nil
	}
	return qmin, qmax, nil
}

// ActivationRangeFloat returns the clamp range of a fused activation on
// floats (TFLite's CalculateActivationRange): finite bounds, so an infinite
// result clamps to ±MaxFloat32 as in TFLite; activations other than RELU,
// RELU6 and RELU_N1_TO_1 do not clamp.
func ActivationRangeFloat(act schema.ActivationFunctionType) (lo, hi float32) {
	switch act {
	case schema.ActivationFunctionTypeRELU:
		return 0, math.MaxFloat32
	case schema.ActivationFunctionTypeRELU6:
		return 0, 6
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return -1, 1
	}
	return -math.MaxFloat32, math.MaxFloat32
}

// ClampF32 limits v to [lo, hi] as TFLite's ActivationFunctionWithMinMax does.
func ClampF32(v, lo, hi float32) float32 { return min(max(v, lo), hi) }

// ComputeOutSize is the spatial output size of a window op with the
// schema's padding (tensor.WindowOutSize); 0 when the padding is unknown.
func ComputeOutSize(padding schema.Padding, in, filter, stride, dilation int) int {
	if padding != schema.PaddingSAME && padding != schema.PaddingVALID {
		return 0
	}
	return tensor.WindowOutSize(padding == schema.PaddingSAME, in, filter, stride, dilation)
}

// InvSqrtQuantizedMultiplierExp returns 1/sqrt(input) as a Q31 multiplier and
// a shift (TFLite's GetInvSqrtQuantizedMultiplierExp in common.h); the shift
// is multiplied by reverseShift (-1 turns a right shift into a left shift).
func InvSqrtQuantizedMultiplierExp(input int32, reverseShift int) (multiplier int32, shift int) {
	if input <= 1 {
		return math.MaxInt32, 0
	}
	shift = 11
	for input >= 1<<29 {
		input /= 4
		shift++
	}
	maxLeftShiftBits := bits.LeadingZeros32(uint32(input)) - 1
	leftShiftBitPairs := maxLeftShiftBits/2 - 1
	shift -= leftShiftBitPairs
	input <<= 2 * leftShiftBitPairs
	// Newton-Raphson in Q3.28 starting from x = 1.
	fixedInput := input >> 1
	halfInput := FixedSaturatingRoundingMulByPOT(fixedInput, -1)
	const halfThree = int32(1<<28 + 1<<27)
	x := int32(1 << 28)
	for range 5 {
		x3 := FixedSaturatingRoundingMulByPOT(
			SaturatingRoundingDoublingHighMul(SaturatingRoundingDoublingHighMul(x, x), x), 6)
		x = FixedSaturatingRoundingMulByPOT(
			SaturatingRoundingDoublingHighMul(halfThree, x)-SaturatingRoundingDoublingHighMul(halfInput, x3), 3)
	}
	x = SaturatingRoundingDoublingHighMul(x, 1518500250) // * sqrt(2)/2
	multiplier = x
	if shift < 0 {
		multiplier <<= -shift
		shift = 0
	}
	return multiplier, shift * reverseShift
}

// CheckedLog2 returns log2(x) rounded to an integer and whether x is a power
// of two to within TFLite's tolerance (CheckedLog2 in quantization_util.cc,
// computed in float32 as there).
func CheckedLog2(x float32) (int, bool) {
	log2 := float32(math.Log(float64(x))) * float32(1/float32(math.Log(2)))
	rounded := float32(math.Round(float64(log2)))
	frac := log2 - rounded
	return int(rounded), math.Abs(float64(frac)) < 1e-3
}

// SymmetricQuantize quantizes v to [-127, 127] with scale max|v|/127 and
// returns that scale (1 for an all-zero input).
func SymmetricQuantize(v []float32, q []int8) float32 {
	lo, hi := float32(0), float32(0)
	if len(v) > 0 {
		lo, hi = v[0], v[0]
	}
	for _, x := range v {
		lo = min(lo, x)
		hi = max(hi, x)
	}
	r := max(float32(math.Abs(float64(lo))), float32(math.Abs(float64(hi))))
	if r == 0 {
		clear(q[:len(v)])
		return 1
	}
	inv := 127 / r
	for i, x := range v {
		qv := int32(math.Round(float64(x * inv)))
		q[i] = int8(min(127, max(-127, qv)))
	}
	return r / 127
}

// AsymmetricQuantize is TFLite's AsymmetricQuantizeFloats: the range
// [min(0,lo), max(0,hi)] of v mapped onto [-128, 127] with a nudged zero
// point; it returns the scale and zero point. The float32 conversion of x*inv
// keeps compilers that fuse multiply-adds (arm64) from fusing zp + x*inv, so
// every architecture gives amd64's bits.
func AsymmetricQuantize(v []float32, q []int8) (scale float32, zeroPoint int32) {
	const qmin, qmax = -128.0, 127.0
	var lo, hi float32
	if len(v) > 0 {
		lo, hi = v[0], v[0]
	}
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	rmin, rmax := math.Min(0, float64(lo)), math.Max(0, float64(hi))
	if rmin == rmax {
		clear(q[:len(v)])
		return 1, 0
	}
	s := (rmax - rmin) / (qmax - qmin)
	zpFromMin := qmin - rmin/s
	zpFromMax := qmax - rmax/s
	zpFromMinErr := math.Abs(qmin) + math.Abs(rmin/s)
	zpFromMaxErr := math.Abs(qmax) + math.Abs(rmax/s)
	zpDouble := zpFromMax
	if zpFromMinErr < zpFromMaxErr {
		zpDouble = zpFromMin
	}
	switch {
	case zpDouble <= qmin:
		zeroPoint = qmin
	case zpDouble >= qmax:
		zeroPoint = qmax
	default:
		zeroPoint = int32(math.Round(zpDouble))
	}
	scale = float32(s)
	inv := 1 / scale
	zpf := float32(zeroPoint)
	for i, x := range v {
		r := int32(math.Round(float64(zpf + float32(x*inv))))
		q[i] = int8(min(max(r, -128), 127))
	}
	return scale, zeroPoint
}

type Int8or16 interface{ ~uint8 | ~int8 | ~int16 }

func TypeRange[T Int8or16]() (lo, hi int32) {
	var z T
	switch any(z).(type) {
	case uint8:
		return 0, math.MaxUint8
	case int8:
		return math.MinInt8, math.MaxInt8
	}
	return math.MinInt16, math.MaxInt16
}

// Roundf rounds half away from zero in float32, as std::round(float).
func Roundf(x float32) float32 { return float32(math.Round(float64(x))) }

// CInt32 converts a double to int32 as x86-64's truncating conversion does:
// NaN and values outside the int32 range become math.MinInt32 (the
// "integer indefinite" value C++ code gets from static_cast<int32_t>).
func CInt32(x float64) int32 {
	if x != x || x >= 1<<31 || x <= -(1<<31)-1 {
		return math.MinInt32
	}
	return int32(x)
}

// ActivateFloats applies the fused activation act to src into dst, as
// TFLite's ApplyActivationToVector: RELU, RELU_N1_TO_1 and RELU6 clamp,
// TANH takes the hyperbolic tangent, SIGN_BIT gives 1 for a set sign bit
// and 0 otherwise; with no activation dst is left untouched. src and dst
// may be the same slice.
func ActivateFloats(src, dst []float32, act schema.ActivationFunctionType) {
	switch act {
	case schema.ActivationFunctionTypeRELU:
		for i, x := range src {
			dst[i] = max(x, 0)
		}
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		for i, x := range src {
			dst[i] = max(min(x, 1), -1)
		}
	case schema.ActivationFunctionTypeRELU6:
		for i, x := range src {
			dst[i] = max(min(x, 6), 0)
		}
	case schema.ActivationFunctionTypeTANH:
		for i, x := range src {
			dst[i] = float32(math.Tanh(float64(x)))
		}
	case schema.ActivationFunctionTypeSIGN_BIT:
		for i, x := range src {
			dst[i] = 0
			if math.Signbit(float64(x)) {
				dst[i] = 1
			}
		}
	}
}
