package kernels

import (
	"math"
)

// This file holds the parts of gemmlowp's fixed-point library
// (fixedpoint/fixedpoint.h) that TensorFlow Lite 2.9's integer LSTM uses,
// written to give the same bits: the 16-bit FixedPoint<int16_t, N> logistic
// and tanh, and the 32-bit inverse square root of common.h.
//
// A 16-bit fixed-point value with n integer bits holds real = raw / 2^(15-n).
// gemmlowp's int16 arithmetic computes in int and truncates back to int16 on
// every store, so plain additions here wrap exactly like the C++ code.
//
// The helpers are general (not LSTM specific); they may overlap with the
// activation family's fixed-point code and can be merged with it.

// FixedPointSRDHM16 is gemmlowp's SaturatingRoundingDoublingHighMul for
// int16: the high 16 bits of 2*a*b, rounded, saturating MinInt16*MinInt16.
func FixedPointSRDHM16(a, b int16) int16 {
	if a == math.MinInt16 && b == math.MinInt16 {
		return math.MaxInt16
	}
	ab := int32(a) * int32(b)
	nudge := int32(1 << 14)
	if ab < 0 {
		nudge = 1 - (1 << 14)
	}
	return int16((ab + nudge) / (1 << 15))
}

// FixedPointRoundingDivideByPOT16 is gemmlowp's RoundingDivideByPOT for
// int16: x / 2^exponent rounded to nearest, ties away from zero.
func FixedPointRoundingDivideByPOT16(x int16, exponent int) int16 {
	mask := int16(int32(1)<<exponent - 1)
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

// FixedPointSaturatingMulByPOT16 multiplies x by 2^exponent: a saturating
// left shift for exponent > 0, a rounding right shift for exponent < 0
// (gemmlowp's SaturatingRoundingMultiplyByPOT for int16).
func FixedPointSaturatingMulByPOT16(x int16, exponent int) int16 {
	switch {
	case exponent > 0:
		threshold := int16(int32(1)<<(15-exponent) - 1)
		if x > threshold {
			return math.MaxInt16
		}
		if x < -threshold {
			return math.MinInt16
		}
		return int16(int32(x) << exponent)
	case exponent < 0:
		return FixedPointRoundingDivideByPOT16(x, -exponent)
	}
	return x
}

// fixedPointConst16 turns one of gemmlowp's int32 fixed-point constants into
// its int16 form (RescaleConstantInitializer: a rounding shift by 16).
func fixedPointConst16(v int32) int16 { return int16(RoundingDivideByPOT(v, 16)) }

// fixedPointRoundingHalfSum16 is gemmlowp's RoundingHalfSum for int16.
func fixedPointRoundingHalfSum16(a, b int16) int16 {
	sum := int32(a) + int32(b)
	sign := int32(1)
	if sum < 0 {
		sign = -1
	}
	return int16((sum + sign) / 2)
}

// fixedPointSaturatingAdd16 adds with int16 saturation.
func fixedPointSaturatingAdd16(a, b int16) int16 {
	return int16(min(max(int32(a)+int32(b), math.MinInt16), math.MaxInt16))
}

// gemmlowp's int32 constants of exp_on_negative_values' barrel shifter:
// exp(-2^k) for k = -2..4 in Q0.31.
var fixedPointExpBarrel = [...]struct {
	exponent   int
	multiplier int32
}{{-2, 1672461947}, {-1, 1302514674}, {0, 790015084}, {1, 290630308}, {2, 39332535}, {3, 720401}, {4, 242}}

// fixedPointExpOnIntervalNegQuarter16 returns exp(a) in Q0.15 for a in
// [-1/4, 0) given in Q0.15.
func fixedPointExpOnIntervalNegQuarter16(a int16) int16 {
	constantTerm := fixedPointConst16(1895147668) // exp(-1/8)
	oneThird := fixedPointConst16(715827883)
	x := a + 1<<12 // a + 1/8
	x2 := FixedPointSRDHM16(x, x)
	x3 := FixedPointSRDHM16(x2, x)
	x4 := FixedPointSRDHM16(x2, x2)
	x4Over4 := FixedPointSaturatingMulByPOT16(x4, -2)
	poly := FixedPointSaturatingMulByPOT16(FixedPointSRDHM16(x4Over4+x3, oneThird)+x2, -1)
	return fixedPointSaturatingAdd16(constantTerm, FixedPointSRDHM16(constantTerm, x+poly))
}

// FixedPointExpOnNegativeValues16 returns exp(a) in Q0.15 for a <= 0 given
// as a 16-bit fixed-point value with integerBits integer bits.
func FixedPointExpOnNegativeValues16(a int16, integerBits int) int16 {
	fracBits := 15 - integerBits
	oneQuarter := int16(1) << (fracBits - 2)
	mask := oneQuarter - 1
	aModQuarterMinusQuarter := (a & mask) - oneQuarter
	result := fixedPointExpOnIntervalNegQuarter16(
		FixedPointSaturatingMulByPOT16(aModQuarterMinusQuarter, integerBits))
	remainder := aModQuarterMinusQuarter - a
	for _, b := range fixedPointExpBarrel {
		if integerBits > b.exponent {
			shift := fracBits + b.exponent
			if remainder&(int16(1)<<shift) != 0 {
				result = FixedPointSRDHM16(result, fixedPointConst16(b.multiplier))
			}
		}
	}
	if integerBits > 5 {
		clamp := fixedPointConst16(-(int32(1) << (36 - integerBits))) // -32
		if a < clamp {
			result = 0
		}
	}
	if a == 0 {
		result = math.MaxInt16
	}
	return result
}

// fixedPointNewtonRecip16 runs gemmlowp's Newton-Raphson iteration for
// 1/(1+a), a in (0, 1) in Q0.15, and returns x in Q2.13 (x ≈ 2/(1+a)).
func fixedPointNewtonRecip16(a int16) int16 {
	halfDenominator := fixedPointRoundingHalfSum16(a, math.MaxInt16)
	const48Over17 := fixedPointConst16(1515870810)
	constNeg32Over17 := fixedPointConst16(-1010580540)
	x := const48Over17 + FixedPointSRDHM16(halfDenominator, constNeg32Over17)
	const oneQ2 = int16(1 << 13)
	for range 3 {
		halfDenominatorTimesX := FixedPointSRDHM16(halfDenominator, x)
		oneMinus := oneQ2 - halfDenominatorTimesX
		x += FixedPointSaturatingMulByPOT16(FixedPointSRDHM16(x, oneMinus), 2)
	}
	return x
}

// FixedPointTanh16 is gemmlowp's tanh on FixedPoint<int16_t, integerBits>,
// returning Q0.15.
func FixedPointTanh16(a int16, integerBits int) int16 {
	if a == 0 {
		return 0
	}
	n := -a // -|a|; wraps like the C++ code for MinInt16
	if a < 0 {
		n = a
	}
	// -tanh(n) = (1 - exp(2n)) / (1 + exp(2n)); 2n keeps the raw value with
	// one more integer bit.
	x := fixedPointNewtonRecip16(FixedPointExpOnNegativeValues16(n, integerBits+1))
	t := FixedPointSaturatingMulByPOT16(x-1<<13, 2)
	if a < 0 {
		return -t
	}
	return t
}

// FixedPointLogistic16 is gemmlowp's logistic on FixedPoint<int16_t,
// integerBits>, returning Q0.15.
func FixedPointLogistic16(a int16, integerBits int) int16 {
	if a == 0 {
		return 1 << 14
	}
	abs := -a
	if a > 0 {
		abs = a
	}
	x := fixedPointNewtonRecip16(FixedPointExpOnNegativeValues16(-abs, integerBits))
	pos := FixedPointSaturatingMulByPOT16(x, 1) // x/2 in Q1 rescaled to Q0
	if a > 0 {
		return pos
	}
	return math.MaxInt16 - pos
}
