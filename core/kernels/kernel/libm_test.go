package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLogfGlibc checks Logf on arguments where glibc's logf (the one
// TFLite 2.9 calls on x86-64) and a correctly rounded log differ.
func TestLogfGlibc(t *testing.T) {
	for _, c := range [][2]uint32{
		{0x3f811aec, 0x3c0cda8f}, {0x3f83428b, 0x3cce05f2}, {0x3fd19476, 0x3efc7451},
		{0x3fd49498, 0x3f01ddc5}, {0x3f999b4f, 0x3e3abde5}, {0x3f826c1f, 0x3c9994e3},
	} {
		x := math.Float32frombits(c[0])
		if got := math.Float32bits(Logf(x)); got != c[1] {
			t.Errorf("logf(%g) = %#x, want glibc's %#x", x, got, c[1])
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		x := float32(math.Exp(r.Float64()*40 - 20))
		got, want := float64(Logf(x)), math.Log(float64(x))
		if math.Abs(got-want) > 1e-7*math.Max(1, math.Abs(want)) {
			t.Fatalf("logf(%g) = %g, want %g", x, got, want)
		}
	}
	for _, c := range []struct{ x, want float32 }{
		{1, 0}, {0, float32(math.Inf(-1))}, {float32(math.Inf(1)), float32(math.Inf(1))},
	} {
		if got := Logf(c.x); got != c.want {
			t.Errorf("logf(%g) = %g, want %g", c.x, got, c.want)
		}
	}
	if got := Logf(-1); !math.IsNaN(float64(got)) {
		t.Errorf("logf(-1) = %g, want NaN", got)
	}
	if got, want := float64(Logf(1e-40)), math.Log(float64(float32(1e-40))); math.Abs(got-want) > 1e-5 {
		t.Errorf("logf(1e-40) = %g, want %g (subnormal)", got, want)
	}
}

// TestSincosfGlibc checks Sincosf against what glibc 2.36's sincosf gave
// on x86-64 with FMA (argument, sine, cosine, as bits) in each of its
// paths: tiny, below π/4, the fast reduction below 120 (both signs), the
// large reduction, and at their borders.
func TestSincosfGlibc(t *testing.T) {
	for _, c := range [][3]uint32{
		{0x3727c5ac, 0x3727c5ac, 0x3f800000}, // 1e-05
		{0x35800000, 0x35800000, 0x3f800000}, // 2^-20
		{0x3e99999a, 0x3e974e6d, 0x3f7490ef}, // 0.3
		{0x3f49096c, 0x3f350067, 0x3f35097f}, // 0.7853
		{0x3f428f5c, 0x3f305d28, 0x3f398eda}, // 0.76
		{0x3f800000, 0x3f576aa4, 0x3f0a5140}, // 1
		{0x40200000, 0x3f193578, 0xbf4d17bf}, // 2.5
		{0x40490fdb, 0xb3bbbd2e, 0xbf800000}, // π
		{0x4096b852, 0xbf7fffd0, 0xbb1c8fc3}, // 4.71
		{0x40c90f28, 0xb8b2a221, 0x3f800000}, // 6.2831
		{0xbf000000, 0xbef57744, 0x3f60a940}, // -0.5
		{0xc0000000, 0xbf68c7b7, 0xbed51133}, // -2
		{0xc0b00000, 0x3f349e4a, 0x3f356b62}, // -5.5
		{0x42c80000, 0xbf01a12e, 0x3f5cc0ee}, // 100
		{0x42efcccd, 0x3efe2bff, 0x3f5e3a4d}, // 119.9
		{0x42f00000, 0x3f14a2ef, 0x3f506e2a}, // 120
		{0x447a2000, 0x3f7eca46, 0x3dc6dffc}, // 1000.5
		{0xc8aae600, 0xbf7dff76, 0x3dffa22c}, // -350000
		{0x61021ab1, 0x3f611a4f, 0x3ef3d793}, // 1.5e20
		{0xff61b1e6, 0xbf5ff9c4, 0xbef7f57c}, // -3e38
	} {
		y := math.Float32frombits(c[0])
		s, co := Sincosf(y)
		if math.Float32bits(s) != c[1] || math.Float32bits(co) != c[2] {
			t.Errorf("sincosf(%g) = %#x, %#x, want glibc's %#x, %#x", y, math.Float32bits(s), math.Float32bits(co), c[1], c[2])
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		y := float32(r.Float64()*2e4 - 1e4)
		s, co := Sincosf(y)
		ws, wc := math.Sincos(float64(y))
		if math.Abs(float64(s)-ws) > 1e-7 || math.Abs(float64(co)-wc) > 1e-7 {
			t.Fatalf("sincosf(%g) = %g, %g, want %g, %g", y, s, co, ws, wc)
		}
	}
	for _, y := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		if s, c := Sincosf(y); !math.IsNaN(float64(s)) || !math.IsNaN(float64(c)) {
			t.Errorf("sincosf(%g) = %g, %g, want NaN, NaN", y, s, c)
		}
	}
}
