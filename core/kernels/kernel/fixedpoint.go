package kernel

import (
	"math"
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// This file implements gemmlowp's fixed-point arithmetic
// (gemmlowp/fixedpoint/fixedpoint.h, as vendored by TensorFlow Lite 2.9) for
// the scalar int16 and int32 raw types, bit for bit. TFLite's quantized
// LOGISTIC/TANH (int16), SOFTMAX reference paths and the integer LSTM build on
// these functions.
//
// A fixed-point value is its raw integer together with a number of integer
// bits I: with a raw type of B bits the value is raw * 2^-(B-1-I). gemmlowp
// carries I in the C++ type (FixedPoint<tRawType, tIntegerBits>); here it is
// an explicit int argument. Multiplying two values adds their integer bits
// (FixedMul), Rescale changes them with a saturating rounding shift, and
// adding or subtracting values with the same integer bits is plain (wrapping)
// integer addition or subtraction of the raws, as in gemmlowp.
//
// The transcendental functions expect and return values in the formats
// gemmlowp gives them; the integer-bits arguments must leave at least two
// fractional bits (I <= B-3), which every TFLite caller satisfies.

// FixedRaw is the raw storage type of a fixed-point value.
type FixedRaw interface{ ~int16 | ~int32 }

// fixedBits is the width of T in bits (16 or 32).
func fixedBits[T FixedRaw]() int {
	var z T
	return int(unsafe.Sizeof(z)) * 8
}

// fixedMin and fixedMax are the limits of T.
func fixedMin[T FixedRaw]() T {
	v := int64(-1) << (fixedBits[T]() - 1)
	return T(v)
}

func fixedMax[T FixedRaw]() T {
	v := int64(1)<<(fixedBits[T]()-1) - 1
	return T(v)
}

// fixedSaturate clamps v to the range of T.
func fixedSaturate[T FixedRaw](v int64) T {
	lo, hi := int64(fixedMin[T]()), int64(fixedMax[T]())
	return T(min(max(v, lo), hi))
}

// FixedMul is gemmlowp's SaturatingRoundingDoublingHighMul: the high half of
// 2*a*b rounded to nearest (ties away from zero), saturating the one overflow
// case (min*min). As a fixed-point product its integer bits are the sum of the
// operands' integer bits.
func FixedMul[T FixedRaw](a, b T) T {
	// Sizeof is a constant in each instantiation; calling no other generic
	// helper keeps this cheap enough to inline into the row loops.
	n := unsafe.Sizeof(a) * 8
	minv := T(-1) << (n - 1)
	if a == minv && b == minv {
		return ^minv
	}
	ab := int64(a) * int64(b)
	nudge := int64(1) << (n - 2)
	if ab < 0 {
		nudge = 1 - nudge
	}
	return T((ab + nudge) / (int64(1) << (n - 1)))
}

// FixedRoundingDivideByPOT divides x by 2^exponent (0 <= exponent < bits),
// rounding to nearest with ties away from zero.
func FixedRoundingDivideByPOT[T FixedRaw](x T, exponent int) T {
	mask := T(1)<<exponent - 1
	remainder := x & mask
	threshold := mask >> 1
	if x < 0 {
		threshold++
	}
	r := x >> exponent
	if remainder > threshold {
		r++
	}
	return r
}

// FixedSaturatingRoundingMulByPOT multiplies x by 2^exponent: a saturating
// left shift when exponent > 0, a rounding right shift when it is negative
// (gemmlowp's SaturatingRoundingMultiplyByPOT).
func FixedSaturatingRoundingMulByPOT[T FixedRaw](x T, exponent int) T {
	switch {
	case exponent == 0:
		return x
	case exponent < 0:
		return FixedRoundingDivideByPOT(x, -exponent)
	}
	n := fixedBits[T]()
	if exponent >= n-1 {
		// Every non-zero value saturates.
		switch {
		case x > 0:
			return fixedMax[T]()
		case x < 0:
			return fixedMin[T]()
		}
		return 0
	}
	return fixedSatShiftLeft(x, exponent)
}

// fixedSatShiftLeft is x * 2^k for 0 < k < bits-1, saturating: the positive
// case of FixedSaturatingRoundingMulByPOT, small enough to inline where k is
// a constant.
func fixedSatShiftLeft[T FixedRaw](x T, k int) T {
	n := int(unsafe.Sizeof(x)) * 8
	threshold := int64(1)<<(n-1-k) - 1
	minv := T(-1) << (n - 1)
	switch {
	case int64(x) > threshold:
		return ^minv
	case int64(x) < -threshold:
		return minv
	}
	return x << k
}

// FixedRescale converts x from srcIntBits to dstIntBits integer bits with a
// saturating rounding shift (gemmlowp's Rescale).
func FixedRescale[T FixedRaw](x T, srcIntBits, dstIntBits int) T {
	return FixedSaturatingRoundingMulByPOT(x, srcIntBits-dstIntBits)
}

// FixedRoundingHalfSum is (a+b)/2 rounded to nearest, ties away from zero.
func FixedRoundingHalfSum[T FixedRaw](a, b T) T {
	sum := int64(a) + int64(b)
	sign := int64(1)
	if sum < 0 {
		sign = -1
	}
	return T((sum + sign) / 2)
}

// FixedSaturatingAdd adds a and b, saturating to the range of T.
func FixedSaturatingAdd[T FixedRaw](a, b T) T {
	return fixedSaturate[T](int64(a) + int64(b))
}

// FixedSaturatingSub subtracts b from a, saturating to the range of T.
func FixedSaturatingSub[T FixedRaw](a, b T) T {
	return fixedSaturate[T](int64(a) - int64(b))
}

// fixedAddSaturatingIf16Bit adds with saturation for int16 and wrapping for
// int32, as gemmlowp's AddSaturatingIf16Bit.
func fixedAddSaturatingIf16Bit[T FixedRaw](a, b T) T {
	if fixedBits[T]() == 16 {
		return FixedSaturatingAdd(a, b)
	}
	return a + b
}

// FixedOne is the raw value of 1.0 with intBits integer bits; with no integer
// bits 1.0 is not representable and the largest value stands in for it.
func FixedOne[T FixedRaw](intBits int) T {
	if intBits == 0 {
		return fixedMax[T]()
	}
	return T(1) << (fixedBits[T]() - 1 - intBits)
}

// FixedConstantPOT is the raw value of 2^exponent with intBits integer bits.
func FixedConstantPOT[T FixedRaw](intBits, exponent int) T {
	return T(1) << (fixedBits[T]() - 1 - intBits + exponent)
}

// FixedConstant converts a constant given as an int32 raw value to the raw
// value of the same fixed-point number in T (gemmlowp's
// RescaleConstantInitializer: a rounding shift for int16).
func FixedConstant[T FixedRaw](raw32 int32) T {
	return T(FixedRoundingDivideByPOT(raw32, 32-fixedBits[T]()))
}

// FixedExpOnIntervalNegQuarterTo0 is exp(a) for a in [-1/4, 0), input and
// result with no integer bits (gemmlowp's
// exp_on_interval_between_negative_one_quarter_and_0_excl).
func FixedExpOnIntervalNegQuarterTo0[T FixedRaw](a T) T {
	constantTerm := FixedConstant[T](1895147668) // exp(-1/8)
	oneThird := FixedConstant[T](715827883)      // 1/3
	// Taylor expansion around -1/8: x = a + 1/8.
	x := a + FixedConstantPOT[T](0, -3)
	x2 := FixedMul(x, x)
	x3 := FixedMul(x2, x)
	x4 := FixedMul(x2, x2)
	x4Over4 := FixedSaturatingRoundingMulByPOT(x4, -2)
	poly := FixedSaturatingRoundingMulByPOT(FixedMul(x4Over4+x3, oneThird)+x2, -1)
	return fixedAddSaturatingIf16Bit(constantTerm, FixedMul(constantTerm, x+poly))
}

// fixedExpBarrel holds exp(-2^k) as Q0.31 raw values for k = -2..4, the
// factors of gemmlowp's exp barrel shifter.
var fixedExpBarrel = [...]struct {
	exponent int
	factor   int32
}{
	{-2, 1672461947},
	{-1, 1302514674},
	{0, 790015084},
	{1, 290630308},
	{2, 39332535},
	{3, 720401},
	{4, 242},
}

// FixedExpOnNegativeValues is exp(a) for a <= 0 given with intBits integer
// bits; the result has no integer bits (gemmlowp's exp_on_negative_values).
func FixedExpOnNegativeValues[T FixedRaw](a T, intBits int) T {
	fracBits := fixedBits[T]() - 1 - intBits
	oneQuarter := FixedConstantPOT[T](intBits, -2)
	mask := oneQuarter - 1
	aModQuarterMinusQuarter := (a & mask) - oneQuarter
	result := FixedExpOnIntervalNegQuarterTo0(FixedRescale(aModQuarterMinusQuarter, intBits, 0))
	remainder := aModQuarterMinusQuarter - a
	for _, b := range fixedExpBarrel {
		if intBits > b.exponent && remainder&(T(1)<<(fracBits+b.exponent)) != 0 {
			result = FixedMul(result, FixedConstant[T](b.factor))
		}
	}
	if intBits > 5 {
		// Below -32 the result is zero.
		clamp := FixedConstant[T](-(int32(1) << (36 - intBits)))
		if a < clamp {
			result = 0
		}
	}
	if a == 0 {
		result = FixedOne[T](0)
	}
	return result
}

// fixedNewtonReciprocal runs gemmlowp's Newton-Raphson division: for a in
// [0, 1) (no integer bits) it returns about 2/(1+a) with 2 integer bits.
func fixedNewtonReciprocal[T FixedRaw](a T) T {
	halfDenominator := FixedRoundingHalfSum(a, FixedOne[T](0))
	c48Over17 := FixedConstant[T](1515870810)     // 48/17, 2 integer bits
	cNeg32Over17 := FixedConstant[T](-1010580540) // -32/17, 2 integer bits
	x := c48Over17 + FixedMul(halfDenominator, cNeg32Over17)
	one := FixedOne[T](2)
	for range 3 {
		halfDenominatorTimesX := FixedMul(halfDenominator, x)
		oneMinus := one - halfDenominatorTimesX
		x += fixedSatShiftLeft(FixedMul(x, oneMinus), 2) // Rescale from 4 to 2 integer bits
	}
	return x
}

// FixedOneOverOnePlusX is 1/(1+a) for a in [0, 1), input and result with no
// integer bits (gemmlowp's one_over_one_plus_x_for_x_in_0_1).
func FixedOneOverOnePlusX[T FixedRaw](a T) T {
	x := fixedNewtonReciprocal(a)
	// Halving reinterprets the 2-integer-bit x as 1 integer bit; then
	// Rescale from 1 to 0 integer bits.
	return fixedSatShiftLeft(x, 1)
}

// FixedOneMinusXOverOnePlusX is (1-a)/(1+a) for a in [0, 1), input and result
// with no integer bits (gemmlowp's one_minus_x_over_one_plus_x_for_x_in_0_1).
func FixedOneMinusXOverOnePlusX[T FixedRaw](a T) T {
	x := fixedNewtonReciprocal(a)
	return FixedRescale(x-FixedOne[T](2), 2, 0)
}

// FixedTanh is tanh(a) for a given with intBits integer bits; the result has
// no integer bits (gemmlowp's tanh).
func FixedTanh[T FixedRaw](a T, intBits int) T {
	if a == 0 {
		return 0
	}
	n := a
	if a > 0 {
		n = -a
	}
	// exp(2n) reinterprets n with one more integer bit.
	t := FixedOneMinusXOverOnePlusX(FixedExpOnNegativeValues(n, intBits+1))
	if a < 0 {
		return -t
	}
	return t
}

// FixedLogistic is 1/(1+exp(-a)) for a given with intBits integer bits; the
// result has no integer bits (gemmlowp's logistic).
func FixedLogistic[T FixedRaw](a T, intBits int) T {
	if a == 0 {
		return FixedConstant[T](1 << 30) // 1/2
	}
	abs := a
	if a < 0 {
		abs = -a
	}
	pos := FixedOneOverOnePlusX(FixedExpOnNegativeValues(-abs, intBits))
	if a > 0 {
		return pos
	}
	return FixedOne[T](0) - pos
}

// FixedGetReciprocal is TFLite's GetReciprocal: for x > 0 with intBits
// integer bits it returns the reciprocal of x normalized to (1/2, 1] as a
// Q0.31 raw value, and the power of two it was scaled by:
// 1/x = raw * 2^-(31+numBitsOverUnit).
func FixedGetReciprocal(x int32, intBits int) (raw int32, numBitsOverUnit int) {
	headroomPlusOne := bits.LeadingZeros32(uint32(x))
	numBitsOverUnit = intBits - headroomPlusOne
	shiftedSumMinusOne := int32(uint32(x)<<headroomPlusOne - uint32(1)<<31)
	return FixedOneOverOnePlusX(shiftedSumMinusOne), numBitsOverUnit
}

// fixedFloat is the real value of a raw fixed-point value (for tests and
// diagnostics).
func fixedFloat[T FixedRaw](raw T, intBits int) float64 {
	return math.Ldexp(float64(raw), intBits+1-fixedBits[T]())
}

// FixedMemo is a fixed-point function of one int16, remembered entry by
// entry as each argument first comes: the integer LSTM's logistic and tanh
// cost tens of multiplies each, and an LSTM asks them for the same few
// thousand arguments at every step. Entries are atomic, so interpreters on
// many goroutines may share one (through the model's store).
type FixedMemo struct {
	f   func(int16) int16
	tab [1 << 16]atomic.Uint32 // 0: not yet computed; else 1<<16 | the value's bits
}

// fixedMemoKey names a fixedMemo in the model's store.
type fixedMemoKey struct {
	tanh    bool // else logistic
	intBits int
}

// NewFixedMemo returns the memo of FixedTanh or FixedLogistic on int16
// arguments with intBits integer bits, from n's store.
func NewFixedMemo(n *Node, tanh bool, intBits int) *FixedMemo {
	return n.Derived(fixedMemoKey{tanh, intBits}, func() any {
		if tanh {
			return &FixedMemo{f: func(a int16) int16 { return FixedTanh(a, intBits) }}
		}
		return &FixedMemo{f: func(a int16) int16 { return FixedLogistic(a, intBits) }}
	}).(*FixedMemo)
}

// At returns f(a).
func (m *FixedMemo) At(a int16) int16 {
	e := &m.tab[uint16(a)]
	if v := e.Load(); v != 0 {
		return int16(v)
	}
	v := m.f(a)
	e.Store(1<<16 | uint32(uint16(v)))
	return v
}
