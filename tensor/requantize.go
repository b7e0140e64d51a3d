package tensor

import (
	"fmt"
	"math"
)

// Requantize8 is the table that takes an 8-bit value (UINT8 or INT8, as a
// raw byte) from one per-tensor quantization to another, as TFLite's
// QUANTIZE requantizes INT8/UINT8 to INT8/UINT8: the difference from the
// input's zero point times the multiplier for inScale/outScale in Q31
// fixed point, rounded twice as TFLite rounds it (doubling high multiply,
// then a rounding shift), plus the output's zero point, clamped to the
// output type. Index the table with the input byte; each entry is the
// output byte.
func Requantize8(in DType, inScale float32, inZP int32, out DType, outScale float32, outZP int32) (*[256]byte, error) {
	lo, hi, ok := QuantizedRange(out)
	if (in != Uint8 && in != Int8) || (out != Uint8 && out != Int8) || !ok {
		return nil, fmt.Errorf("requantize %s to %s: only UINT8 and INT8 values requantize", in, out)
	}
	if !(inScale > 0) || !(outScale > 0) || math.IsInf(float64(inScale), 0) || math.IsInf(float64(outScale), 0) {
		return nil, fmt.Errorf("requantize with scales %v and %v: both must be finite and above 0", inScale, outScale)
	}
	mult, shift := QuantizeMultiplier(float64(inScale) / float64(outScale))
	var lut [256]byte
	for raw := range 256 {
		v := int32(raw)
		if in == Int8 {
			v = int32(int8(raw))
		}
		q := min(max(multiplyByQuantizedMultiplier(v-inZP, mult, shift)+outZP, lo), hi)
		lut[raw] = byte(q)
	}
	return &lut, nil
}

// QuantizeMultiplier is TFLite's QuantizeMultiplier: real ≈ m * 2^(shift-31),
// m in Q31 fixed point (0, 0 for 0 and for reals too small to show).
func QuantizeMultiplier(real float64) (int32, int) {
	if real == 0 {
		return 0, 0
	}
	q, exp := math.Frexp(real)
	fixed := int64(math.Round(q * (1 << 31)))
	if fixed == 1<<31 {
		fixed /= 2
		exp++
	}
	if exp < -31 {
		return 0, 0
	}
	return int32(fixed), exp
}

// multiplyByQuantizedMultiplier is TFLite's MultiplyByQuantizedMultiplier:
// x * m * 2^(shift-31), a saturating rounding doubling high multiply, then
// a shift right rounding half away from zero.
func multiplyByQuantizedMultiplier(x, m int32, shift int) int32 {
	left, right := max(shift, 0), max(-shift, 0)
	a := int64(x) << left
	if a > math.MaxInt32 || a < math.MinInt32 {
		a = int64(int32(a)) // TFLite's int32 multiply wraps
	}
	ab := a * int64(m)
	var high int32
	switch {
	case int32(a) == math.MinInt32 && m == math.MinInt32:
		high = math.MaxInt32
	default:
		nudge := int64(1 << 30)
		if ab < 0 {
			nudge = 1 - (1 << 30)
		}
		high = int32((ab + nudge) / (1 << 31))
	}
	if right == 0 {
		return high
	}
	mask := int32(1)<<right - 1
	rem, threshold := high&mask, mask>>1
	if high < 0 {
		threshold++
	}
	r := high >> right
	if rem > threshold {
		r++
	}
	return r
}

// MapBytes writes lut[b] to dst for each byte b of src (a table from
// Requantize8; nil copies src as it is). dst and src must be as long.
func MapBytes(dst, src []byte, lut *[256]byte) error {
	if len(dst) != len(src) {
		return fmt.Errorf("%d bytes for a %d-byte tensor", len(src), len(dst))
	}
	if lut == nil {
		copy(dst, src)
		return nil
	}
	for i, b := range src {
		dst[i] = lut[b]
	}
	return nil
}
