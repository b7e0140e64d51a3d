package f32elem

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// specials are the values every kernel must treat as its twin does:
// NaNs of both signs and with a payload, zeros, infinities, denormals,
// the extremes, and the bounds and breakpoints of the ops.
var specials = []float32{
	float32(math.NaN()), math.Float32frombits(0xffc00000), math.Float32frombits(0x7fc12345), math.Float32frombits(0x7f800001),
	0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
	math.Float32frombits(1), math.Float32frombits(0x807fffff), math.Float32frombits(0x00400000),
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
	1, -1, 6, -6, 3, -3, 0.5, -0.5, 6.0000005, 5.9999995, 1.0000001, -1.0000001, 1e-30, -1e-30,
}

// fill sets b to random values with specials strewn among them.
func fill(r *rand.Rand, b []float32) {
	for i := range b {
		switch r.IntN(4) {
		case 0:
			b[i] = specials[r.IntN(len(specials))]
		case 1:
			b[i] = float32(r.NormFloat64() * 4)
		default:
			b[i] = float32(r.NormFloat64() * 8)
		}
	}
}

// firstBitDiff is the first index where got and want differ in a bit, or -1.
func firstBitDiff(got, want []float32) int {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i
		}
	}
	return -1
}

// firstBinaryDiff is firstBitDiff for a binary op on x and y (rows, or
// one element broadcast): where both operands are NaN, any NaN result is
// right. Which NaN the hardware returns then depends on the order of the
// operands, and the Go compiler may swap them in the twin's commutative
// ADD and MUL; one NaN operand, as every other value, must come out bit
// for bit.
func firstBinaryDiff(got, want, x, y []float32) int {
	for i := range want {
		a, b := x[min(i, len(x)-1)], y[min(i, len(y)-1)]
		if a != a && b != b && got[i] != got[i] && want[i] != want[i] {
			continue
		}
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return i
		}
	}
	return -1
}

// unaryCases are the unary ops with the bounds and slopes the callers use.
var unaryCases = []struct {
	op            Op
	lo, hi, alpha float32
}{
	{MaxMin, 0, float32(math.Inf(1)), 0}, {MaxMin, 0, 6, 0}, {Clamp, -1, 1, 0}, {Clamp, 0, 6, 0},
	{LeakyRelu, 0, 0, 0.2}, {LeakyRelu, 0, 0, -1.5}, {LeakyRelu, 0, 0, float32(math.NaN())}, {HardSwish, 0, 0, 0},
	{Logistic, 0, 0, 0}, {Tanh, 0, 0, 0},
}

// binaryCases are the binary ops with the fused clamps of the callers.
var binaryCases = []struct {
	op     Op
	lo, hi float32
}{
	{Add, -math.MaxFloat32, math.MaxFloat32}, {Add, 0, 6}, {Add, 0, math.MaxFloat32}, {Sub, -1, 1},
	{Sub, -math.MaxFloat32, math.MaxFloat32}, {Mul, -math.MaxFloat32, math.MaxFloat32}, {Mul, 0, 6},
	{Max, 0, 0}, {Min, 0, 0}, {PRelu, 0, 0},
	{AddMaxMin, 0, float32(math.Inf(1))}, {AddMaxMin, 0, 6}, {SubMaxMin, 0, float32(math.Inf(1))}, {SubMaxMin, 0, 6},
	{MulMaxMin, 0, float32(math.Inf(1))}, {MulMaxMin, 0, 6},
}

// lengths are the row lengths the tests take: every one to 70 and a few
// long ones, ending anywhere in a block.
func lengths() []int {
	ls := []int{1000, 1023, 4099}
	for n := range 71 {
		ls = append(ls, n)
	}
	return ls
}

// TestKernelsMatchTwins holds every assembly set this CPU runs to the Go
// twins, bit for bit: every op, every length to 70 and longer ones, from
// unaligned offsets, on random values mixed with the specials; binary ops
// with both operands rows and with either one broadcast.
func TestKernelsMatchTwins(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 1))
	const room = 4200
	x, y := make([]float32, room), make([]float32, room)
	got, want := make([]float32, room), make([]float32, room)
	for _, k := range Sets() {
		if k == Go() {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			for _, n := range lengths() {
				xo, yo, zo := r.IntN(4), r.IntN(4), r.IntN(4)
				fill(r, x)
				fill(r, y)
				xs, ys := x[xo:xo+n], y[yo:yo+n]
				for _, c := range unaryCases {
					fill(r, got)
					g, w := got[zo:zo+n], want[zo:zo+n]
					k.Unary(c.op, g, xs, c.lo, c.hi, c.alpha)
					Go().Unary(c.op, w, xs, c.lo, c.hi, c.alpha)
					if i := firstBitDiff(g, w); i >= 0 {
						t.Fatalf("%v [%g, %g] alpha %g, %d elements: %g at %d gives %g (%#x), the twin %g (%#x)",
							c.op, c.lo, c.hi, c.alpha, n, xs[i], i, g[i], math.Float32bits(g[i]), w[i], math.Float32bits(w[i]))
					}
				}
				for _, c := range binaryCases {
					for mode, in := range [][2][]float32{{xs, ys}, {x[:1], ys}, {xs, y[:1]}} {
						fill(r, got)
						g, w := got[zo:zo+n], want[zo:zo+n]
						k.Binary(c.op, g, in[0], in[1], c.lo, c.hi)
						Go().Binary(c.op, w, in[0], in[1], c.lo, c.hi)
						if i := firstBinaryDiff(g, w, in[0], in[1]); i >= 0 {
							a, b := in[0][min(i, len(in[0])-1)], in[1][min(i, len(in[1])-1)]
							t.Fatalf("%v [%g, %g], mode %d, %d elements: %g, %g at %d give %g (%#x), the twin %g (%#x)",
								c.op, c.lo, c.hi, mode, n, a, b, i, g[i], math.Float32bits(g[i]), w[i], math.Float32bits(w[i]))
						}
					}
				}
			}
		})
	}
}

// TestTwinsAreTheDefinitions holds the Go twins to the formulas the
// activation and binary kernels computed before them, value by value on
// the specials and random values.
func TestTwinsAreTheDefinitions(t *testing.T) {
	maxf := func(a, b float32) float32 { // std::max
		if a < b {
			return b
		}
		return a
	}
	minf := func(a, b float32) float32 { // std::min
		if b < a {
			return b
		}
		return a
	}
	r := rand.New(rand.NewPCG(31, 3))
	x := append([]float32(nil), specials...)
	x = append(x, make([]float32, 200)...)
	fill(r, x[len(specials):])
	y := make([]float32, len(x))
	fill(r, y)
	z := make([]float32, len(x))
	check := func(what string, f func(v, w float32) float32) {
		t.Helper()
		for i, v := range x {
			if want := f(v, y[i]); math.Float32bits(z[i]) != math.Float32bits(want) {
				t.Fatalf("%s of %g (and %g): %g, want %g", what, v, y[i], z[i], want)
			}
		}
	}
	g := Go()
	g.Unary(MaxMin, z, x, 0, float32(math.Inf(1)), 0)
	check("RELU", func(v, _ float32) float32 {
		if !(v > 0) {
			v = 0
		}
		return v
	})
	g.Unary(MaxMin, z, x, 0, 6, 0)
	check("RELU6", func(v, _ float32) float32 { return minf(maxf(0, v), 6) })
	g.Unary(Clamp, z, x, -1, 1, 0)
	check("RELU_N1_TO_1", func(v, _ float32) float32 { return maxf(minf(v, 1), -1) })
	g.Unary(HardSwish, z, x, 0, 0, 0)
	check("HARD_SWISH", func(v, _ float32) float32 { return v * minf(6, maxf(0, v+3)) * float32(1.0/6.0) })
	g.Binary(Max, z, x, y, 0, 0)
	check("MAXIMUM", func(v, w float32) float32 {
		if v > w {
			return v
		}
		return w
	})
	g.Binary(PRelu, z, x, y, 0, 0)
	check("PRELU", func(v, a float32) float32 {
		if v < 0 {
			v *= a
		}
		return v
	})
	relu := func(v float32) float32 {
		if !(v > 0) {
			v = 0
		}
		return v
	}
	g.Binary(AddMaxMin, z, x, y, 0, float32(math.Inf(1)))
	check("ADD then RELU", func(v, w float32) float32 { return relu(v + w) })
	g.Binary(SubMaxMin, z, x, y, 0, 6)
	check("SUB then RELU6", func(v, w float32) float32 { return minf(maxf(0, v-w), 6) })
	g.Binary(MulMaxMin, z, x, y, 0, 1)
	check("MUL with RELU_N1_TO_1 then RELU", func(v, w float32) float32 {
		p := v * w
		if p < -1 { // the fused RELU_N1_TO_1 (Clamp), keeping a NaN
			p = -1
		}
		if 1 < p {
			p = 1
		}
		return relu(p)
	})
	g.Binary(Sub, z, x, y, 0, 6)
	check("SUB+RELU6", func(v, w float32) float32 {
		d := v - w
		if d < 0 {
			d = 0
		}
		if 6 < d {
			d = 6
		}
		return d
	})
}

// BenchmarkKernels measures each set on a row of 64K floats (256 KiB,
// L2-sized) of normally distributed values, half of them negative, as
// activations are: the Go twins' branches are as unpredictable there as
// on real tensors.
func BenchmarkKernels(b *testing.B) {
	const n = 1 << 16
	r := rand.New(rand.NewPCG(1, 2))
	x, y, z := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(r.NormFloat64()*4), float32(r.NormFloat64()*4)
	}
	for _, op := range []Op{MaxMin, LeakyRelu, HardSwish, Logistic, Tanh, Add, Mul, PRelu} {
		for _, k := range Sets() {
			b.Run(fmt.Sprintf("%v/%s", op, k.Name), func(b *testing.B) {
				b.SetBytes(4 * n)
				for b.Loop() {
					if op.Binary() {
						k.Binary(op, z, x, y, 0, 6)
					} else {
						k.Unary(op, z, x, 0, 6, 0.2)
					}
				}
			})
		}
	}
}
