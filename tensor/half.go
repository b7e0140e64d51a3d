package tensor

import "math"

// Float16ToFloat32 widens an IEEE 754 binary16 value (FLOAT16's element)
// to float32, exactly.
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp, frac := uint32(h>>10)&0x1f, uint32(h)&0x3ff
	switch {
	case exp == 0x1f: // infinity, NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	}
	v := float32(frac) / (1 << 24) // zero or subnormal: frac * 2^-24
	if sign != 0 {
		v = -v
	}
	return v
}

// Float32ToFloat16 rounds f to the nearest IEEE 754 binary16 value, ties
// to even; overflow gives infinity, NaN stays NaN.
func Float32ToFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // infinity or NaN
		if mant != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp-127 > 15: // beyond the largest finite half
		return sign | 0x7c00
	case exp-127 >= -14: // a normal half: 10 of 23 mantissa bits, rounded
		h := uint32(exp-127+15)<<10 | mant>>13
		return sign | uint16(roundEven(h, mant&0x1fff, 0x1000))
	case exp-127 >= -25: // a subnormal half (or zero after rounding)
		m := mant | 0x800000 // the implicit bit
		shift := uint(-14-(exp-127)) + 13
		rest := m & (1<<shift - 1)
		return sign | uint16(roundEven(m>>shift, rest, 1<<(shift-1)))
	}
	return sign // too small even for a subnormal: a signed zero
}

// roundEven rounds the truncated value h up when the dropped bits rest are
// more than half (or exactly half and h is odd). A carry out of the
// mantissa rolls into the exponent, as it should.
func roundEven(h, rest, half uint32) uint32 {
	if rest > half || rest == half && h&1 == 1 {
		h++
	}
	return h
}
