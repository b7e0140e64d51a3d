package elementwise

import (
	"errors"
	"math"
	"math/bits"

	"github.com/delego/delego/core/kernels/kernel"
)

// This file holds the quantized row kernels of the binary element-wise ops and
// the fixed-point helpers they need beyond kernel/quant.go (TFLite 2.9's common.h,
// quantization_util.cc and gemmlowp's fixedpoint.h), written to give the same
// bits on x86-64.

// quantizeSmallerThanOne is TFLite's QuantizeMultiplierSmallerThanOneExp: a
// multiplier in (0, 1) as a Q31 value and a shift <= 0. TFLite aborts
// outside that range; this returns an error.
func quantizeSmallerThanOne(real float64) (int32, int, error) {
	if !(real > 0 && real < 1) {
		return 0, 0, errors.New("rescaling multiplier outside (0, 1)")
	}
	m, s := kernel.QuantizeMultiplier(real)
	return m, s, nil
}

// rdbpX86 is gemmlowp's RoundingDivideByPOT as TFLite's x86-64 build runs it,
// including exponents above 31 (undefined in C++): the rounding mask is
// computed in 64 bits and truncated to all ones, while the arithmetic shift
// count wraps modulo 32.
func rdbpX86(x int32, exponent int) int32 {
	if exponent <= 31 {
		return kernel.RoundingDivideByPOT(x, exponent)
	}
	mask := int32(int64(1)<<(exponent&63) - 1)
	remainder := x & mask
	threshold := mask >> 1
	if x < 0 {
		threshold++
	}
	r := x >> (exponent & 31)
	if remainder > threshold {
		r++
	}
	return r
}

// mulSmallerThanOneX86 is MultiplyByQuantizedMultiplierSmallerThanOneExp
// with rdbpX86's handling of right shifts above 31.
func mulSmallerThanOneX86(x, m int32, shift int) int32 {
	return rdbpX86(kernel.SaturatingRoundingDoublingHighMul(x, m), -shift)
}

// mulByQuantizedX86 is MultiplyByQuantizedMultiplier with rdbpX86's handling
// of right shifts above 31.
func mulByQuantizedX86(x, m int32, shift int) int32 {
	if shift > 0 {
		return kernel.SaturatingRoundingDoublingHighMul(x*(int32(1)<<shift), m)
	}
	return rdbpX86(kernel.SaturatingRoundingDoublingHighMul(x, m), -shift)
}

// countLeadingSignBits is TFLite's CountLeadingSignBits on int32 (31 for 0).
func countLeadingSignBits(x int32) int {
	return bits.LeadingZeros32(uint32(x^(x>>31))) - 1
}

// mulShift is MultiplyByQuantizedMultiplierSmallerThanOneExp(x, m, -rshift)
// for a multiplier m in (0, 2^31) and 0 <= rshift <= 31, written to inline
// into the row loops: a rounding doubling high multiply (which cannot
// saturate as m is not MinInt32) and a rounding right shift. It has no
// branches: the signs it depends on are those of the data, which a branch
// predictor cannot learn.
func mulShift(x, m int32, rshift uint) int32 {
	ab := int64(x) * int64(m)
	nudge := 1<<30 + ab>>63&(1-1<<31) // 1 - 2^30 when ab < 0
	h := int32((ab + nudge) / (1 << 31))
	rshift &= 31 // it is; saying so spares the compiler's checks for larger shifts
	mask := int32(1)<<rshift - 1
	rem := h & mask
	thr := mask>>1 + int32(uint32(h)>>31)
	return h>>rshift + int32(uint32(thr-rem)>>31) // +1 when rem > thr
}

// setAddTables fills tab1 and tab2 for 8-bit ADD and SUB (INT8 when
// signed): the rescaled term of each input byte, as quantAddRow computes
// it, so that a row of two 8-bit tensors needs one multiply per element.
func (q *quantArith) setAddTables(signed bool) {
	q.tab1, q.tab2 = new([256]int32), new([256]int32)
	ls := uint(q.leftShift)
	for b := range 256 {
		v := int32(b)
		if signed {
			v = int32(int8(b))
		}
		q.tab1[b] = mulShift((q.in1Off+v)<<ls, q.in1Mul, uint(-q.in1Shift))
		q.tab2[b] = mulShift((q.in2Off+v)<<ls, q.in2Mul, uint(-q.in2Shift))
	}
}

// quantAddRow is the 8-bit (left shift 20) and general int16 (left shift 15)
// ADD or SUB: both inputs rescaled to a common scale, summed, rescaled to the
// output and clamped (TFLite's AddElementwise / SubElementwise).
func quantAddRow[T int8 | uint8 | int16](q *quantArith, sub bool, z, x, y []T) {
	if q.tab1 != nil {
		if !addRow8(q, sub, z, x, y) {
			quantAddRowTables(q, sub, z, x, y)
		}
		return
	}
	ls := uint(q.leftShift)
	o1, m1, r1 := q.in1Off, q.in1Mul, uint(-q.in1Shift)
	o2, m2, r2 := q.in2Off, q.in2Mul, uint(-q.in2Shift)
	oo, mo, ro := q.outOff, q.outMul, uint(-q.outShift)
	lo, hi := q.lo, q.hi
	sgn := int32(1) // s1 - s2 is s1 + (-1)*s2 in wrapping int32
	if sub {
		sgn = -1
	}
	switch {
	case len(x) == len(z) && len(y) == len(z):
		y = y[:len(z)]
		x = x[:len(z)]
		for i := range z {
			s1 := mulShift((o1+int32(x[i]))<<ls, m1, r1)
			s2 := mulShift((o2+int32(y[i]))<<ls, m2, r2)
			r := mulShift(s1+sgn*s2, mo, ro) + oo
			z[i] = T(min(hi, max(lo, r)))
		}
	case len(x) == 1:
		s1 := mulShift((o1+int32(x[0]))<<ls, m1, r1)
		y = y[:len(z)]
		for i := range z {
			s2 := mulShift((o2+int32(y[i]))<<ls, m2, r2)
			r := mulShift(s1+sgn*s2, mo, ro) + oo
			z[i] = T(min(hi, max(lo, r)))
		}
	default:
		s2 := mulShift((o2+int32(y[0]))<<ls, m2, r2)
		x = x[:len(z)]
		for i := range z {
			s1 := mulShift((o1+int32(x[i]))<<ls, m1, r1)
			r := mulShift(s1+sgn*s2, mo, ro) + oo
			z[i] = T(min(hi, max(lo, r)))
		}
	}
}

// quantAddRowTables is quantAddRow for 8-bit inputs, each input's rescaled
// term looked up in q's tables (setAddTables).
func quantAddRowTables[T int8 | uint8 | int16](q *quantArith, sub bool, z, x, y []T) {
	t1, t2 := q.tab1, q.tab2
	oo, mo, ro := q.outOff, q.outMul, uint(-q.outShift)
	lo, hi := q.lo, q.hi
	sgn := int32(1)
	if sub {
		sgn = -1
	}
	switch {
	case len(x) == len(z) && len(y) == len(z):
		y = y[:len(z)]
		x = x[:len(z)]
		for i := range z {
			r := mulShift(t1[uint8(x[i])]+sgn*t2[uint8(y[i])], mo, ro) + oo
			z[i] = T(min(hi, max(lo, r)))
		}
	case len(x) == 1:
		s1 := t1[uint8(x[0])]
		y = y[:len(z)]
		for i := range z {
			r := mulShift(s1+sgn*t2[uint8(y[i])], mo, ro) + oo
			z[i] = T(min(hi, max(lo, r)))
		}
	default:
		s2 := sgn * t2[uint8(y[0])]
		x = x[:len(z)]
		for i := range z {
			r := mulShift(t1[uint8(x[i])]+s2, mo, ro) + oo
			z[i] = T(min(hi, max(lo, r)))
		}
	}
}

// quantMulRow is the uint8/int8/int16 MUL: the product of the offset inputs
// rescaled by one multiplier (TFLite's MulElementwise), 8-bit rows of equal
// length in assembly where the CPU has a row kernel (mulRow8).
func quantMulRow[T int8 | uint8 | int16](q *quantArith, z, x, y []T) {
	if !mulRow8(q, z, x, y) {
		quantMulRowGo(q, z, x, y)
	}
}

// quantMulRowGo is quantMulRow in Go.
func quantMulRowGo[T int8 | uint8 | int16](q *quantArith, z, x, y []T) {
	o1, o2, oo := q.in1Off, q.in2Off, q.outOff
	m, ls, rs := q.outMul, uint(max(q.outShift, 0)), uint(max(-q.outShift, 0))
	lo, hi := q.lo, q.hi
	switch {
	case len(x) == len(z) && len(y) == len(z):
		y = y[:len(z)]
		x = x[:len(z)]
		for i := range z {
			r := oo + mulShift(((o1+int32(x[i]))*(o2+int32(y[i])))<<ls, m, rs)
			z[i] = T(min(hi, max(lo, r)))
		}
	case len(x) == 1:
		a := o1 + int32(x[0])
		y = y[:len(z)]
		for i := range z {
			r := oo + mulShift((a*(o2+int32(y[i])))<<ls, m, rs)
			z[i] = T(min(hi, max(lo, r)))
		}
	default:
		b := o2 + int32(y[0])
		x = x[:len(z)]
		for i := range z {
			r := oo + mulShift(((o1+int32(x[i]))*b)<<ls, m, rs)
			z[i] = T(min(hi, max(lo, r)))
		}
	}
}

// quantDivRow is the uint8 DIV (TFLite's DivElementwise): the quotient by a
// fixed-point reciprocal of the divisor. A zero divisor gives what TFLite's
// x86 build gives (it only logs an error for a raw 0 in the divisor).
func quantDivRow[T int8 | uint8 | int16](q *quantArith, z, x, y []T) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		v1, v2 := q.in1Off+int32(xi), q.in2Off+int32(yi)
		if v2 < 0 {
			v1, v2 = -v1, -v2
		}
		inv, recipShift := kernel.FixedGetReciprocal(v2, 31)
		headroom := countLeadingSignBits(v1)
		unscaled := kernel.SaturatingRoundingDoublingHighMul(v1*(int32(1)<<headroom), inv)
		total := q.outShift - recipShift - headroom
		r := q.outOff + mulSmallerThanOneX86(unscaled, q.outMul, total)
		z[i] = T(min(q.hi, max(q.lo, r)))
	}
}

// quantSqDiffRow is the int8 SQUARED_DIFFERENCE: inputs rescaled with a left
// shift of 7, the difference squared and rescaled to the output.
func quantSqDiffRow[T int8 | uint8 | int16](q *quantArith, z, x, y []T) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		s1 := kernel.MultiplyByQuantizedMultiplierSmallerThanOneExp((q.in1Off+int32(xi))*(1<<7), q.in1Mul, q.in1Shift)
		s2 := kernel.MultiplyByQuantizedMultiplierSmallerThanOneExp((q.in2Off+int32(yi))*(1<<7), q.in2Mul, q.in2Shift)
		d := s1 - s2
		r := kernel.MultiplyByQuantizedMultiplierSmallerThanOneExp(d*d, q.outMul, q.outShift) + q.outOff
		z[i] = T(min(q.hi, max(q.lo, r)))
	}
}

// addPotInt16 is the power-of-two-scale int16 ADD (no broadcasting): the
// input with the smaller scale is rounding-shifted right and added with int16
// saturation.
func addPotInt16(q *quantArith, a, b, z []int16) {
	keep, shift, rs := a, b, -q.in2Shift
	if q.in1Shift != 0 {
		keep, shift, rs = b, a, -q.in1Shift
	}
	for i := range z {
		s := int32(keep[i]) + kernel.RoundingDivideByPOT(int32(shift[i]), rs)
		s = min(math.MaxInt16, max(math.MinInt16, s))
		z[i] = int16(min(q.hi, max(q.lo, s)))
	}
}

// subPotInt16Row is the power-of-two-scale int16 SUB.
func subPotInt16Row(q *quantArith, z, x, y []int16) {
	for i := range z {
		xi, yi := bcastAt(x, y, i)
		r := kernel.RoundingDivideByPOT(int32(xi), -q.in1Shift) - kernel.RoundingDivideByPOT(int32(yi), -q.in2Shift)
		z[i] = int16(min(q.hi, max(q.lo, r)))
	}
}

// mulInt16To8 is MUL of int16 inputs into an int8 or uint8 output: the Q0.15
// product rounding-shifted right by 8 and offset by the output zero point.
func mulInt16To8[T int8 | uint8](q *quantArith, a, b []int16, z []T) {
	lo, hi := int16(q.lo-q.outOff), int16(q.hi-q.outOff)
	for i := range z {
		p := int16(kernel.RoundingDivideByPOT(int32(kernel.FixedMul(a[i], b[i])), 8))
		p = max(lo, min(hi, p))
		z[i] = T(q.outOff + int32(p))
	}
}
