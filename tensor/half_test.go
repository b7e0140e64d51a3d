package tensor

import (
	"math"
	"testing"
)

// TestFloat16 holds the conversions to IEEE 754's binary16 values, which
// any reference (numpy.float16 included) gives the same.
func TestFloat16(t *testing.T) {
	for _, c := range []struct {
		h uint16
		f float32
	}{
		{0x3c00, 1}, {0xc000, -2}, {0x7bff, 65504}, {0x0400, 1.0 / (1 << 14)}, {0x0001, 1.0 / (1 << 24)},
		{0x03ff, 1023.0 / (1 << 24)}, {0x3555, 0.333251953125}, {0x0000, 0}, {0x7c00, float32(math.Inf(1))},
	} {
		if got := Float16ToFloat32(c.h); got != c.f {
			t.Errorf("Float16ToFloat32(%#04x) = %g, want %g", c.h, got, c.f)
		}
		if got := Float32ToFloat16(c.f); got != c.h {
			t.Errorf("Float32ToFloat16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
	for _, c := range []struct {
		f float32
		h uint16
	}{
		{1 + 1.0/(1<<11), 0x3c00},     // halfway: to even
		{1 + 3.0/(1<<11), 0x3c02},     // halfway: to even, up
		{65520, 0x7c00},               // past the largest finite: infinity
		{1.0 / (1 << 25), 0x0000},     // half the smallest subnormal: to even, zero
		{1.5 / (1 << 25), 0x0001},     // above half of it: up
		{-1.0 / (1 << 30), 0x8000},    // too small: a signed zero
		{float32(math.NaN()), 0x7e00}, // NaN stays NaN
	} {
		if got := Float32ToFloat16(c.f); got != c.h {
			t.Errorf("Float32ToFloat16(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
	}
	for h := range 1 << 16 {
		f := Float16ToFloat32(uint16(h))
		if f != f {
			continue // NaN
		}
		if back := Float32ToFloat16(f); back != uint16(h) {
			t.Fatalf("%#04x -> %g -> %#04x", h, f, back)
		}
	}
}
