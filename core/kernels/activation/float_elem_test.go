package activation

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// floatSpecials are values the float activations must treat exactly as
// their formulas do: NaNs, zeros of both signs, infinities, denormals and
// the bounds of the clamps.
var floatSpecials = []float32{
	float32(math.NaN()), math.Float32frombits(0xffc00000), 0, float32(math.Copysign(0, -1)),
	float32(math.Inf(1)), float32(math.Inf(-1)), math.Float32frombits(1), math.Float32frombits(0x807fffff),
	math.MaxFloat32, -math.MaxFloat32, 1, -1, 6, -6, 3, -3, 1.0000001, -1.0000001, 6.0000005,
}

// floatInput is a tensor of shape holding the specials, then random values.
func floatInput(r *rand.Rand, shape ...int) *tensor.Tensor {
	t := tensor.NewTensor(tensor.Float32, shape...)
	v := t.Float32s()
	for i := range v {
		if i < len(floatSpecials) {
			v[i] = floatSpecials[i]
		} else if r.IntN(8) == 0 {
			v[i] = floatSpecials[r.IntN(len(floatSpecials))]
		} else {
			v[i] = float32(r.NormFloat64() * 5)
		}
	}
	return t
}

// TestFloatActivationsExact runs the float element-wise activations on
// small and large tensors (cut among threads from floatParallelMin), on
// 1, 2 and 3 threads, and holds every output bit to the formula of
// TFLite's kernel as the Go loops before the assembly computed it.
func TestFloatActivationsExact(t *testing.T) {
	maxf, minf := actMaxf, actMinf
	cases := []struct {
		code schema.BuiltinOperator
		op   func() kernel.Op
		f    func(v float32) float32
	}{
		{schema.BuiltinOperatorRELU, nil, func(v float32) float32 {
			if !(v > 0) {
				v = 0
			}
			return v
		}},
		{schema.BuiltinOperatorRELU6, nil, func(v float32) float32 { return minf(maxf(0, v), 6) }},
		{schema.BuiltinOperatorRELU_N1_TO_1, nil, func(v float32) float32 { return maxf(minf(v, 1), -1) }},
		{schema.BuiltinOperatorHARD_SWISH, nil, func(v float32) float32 { return v * minf(6, maxf(0, v+3)) * float32(1.0/6.0) }},
		{schema.BuiltinOperatorLEAKY_RELU, func() kernel.Op { return &leakyReluOp{params: LeakyReluParams{Alpha: 0.125}} }, func(v float32) float32 {
			if !(v > 0) {
				v *= 0.125
			}
			return v
		}},
	}
	r := rand.New(rand.NewPCG(31, 4))
	for _, size := range []int{1, 7, 67, floatParallelMin + 1001} {
		in := floatInput(r, 1, size)
		for _, c := range cases {
			for _, threads := range []int{1, 2, 3} {
				op := kerneltest.ActNew(t, activationOps(), c.code)
				if c.op != nil {
					op = c.op()
				}
				out := kerneltest.QOut(tensor.Float32, 0, 0)
				kerneltest.MustRun(t, op, threads, out, in)
				want := make([]float32, size)
				for i, v := range in.Float32s() {
					want[i] = c.f(v)
				}
				checkFloats(t, fmt.Sprintf("%s, %d elements, %d threads", kernel.OpName(c.code), size, threads), in.Float32s(), out.Float32s(), want)
			}
		}
	}
}

// TestFloatLogisticTanh runs float LOGISTIC and TANH on small and large
// tensors, on 1, 2 and 3 threads: every output bit must be f32elem's
// Go twin's (however the elements are cut among threads), within 2.5 ulp
// of the function computed in double precision, a NaN staying NaN.
func TestFloatLogisticTanh(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 6))
	for _, size := range []int{1, 7, 67, floatParallelMin + 1001} {
		in := floatInput(r, 1, size)
		for _, c := range []struct {
			code  schema.BuiltinOperator
			op    f32elem.Op
			exact func(float64) float64
		}{
			{schema.BuiltinOperatorLOGISTIC, f32elem.Logistic, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
			{schema.BuiltinOperatorTANH, f32elem.Tanh, math.Tanh},
		} {
			want := make([]float32, size)
			f32elem.Go().Unary(c.op, want, in.Float32s(), 0, 0, 0)
			for i, v := range in.Float32s() {
				exact := c.exact(float64(v))
				_, e := math.Frexp(exact) // the float32 ulp at exact: 2^(e-24), 2^-149 among denormals
				if w := float64(want[i]); v == v && w != exact && !(math.Abs(w-exact) <= 2.5*math.Ldexp(1, max(e-24, -149))) {
					t.Fatalf("%s(%g) = %g, want %g within 2.5 ulp", kernel.OpName(c.code), v, w, exact)
				}
			}
			for _, threads := range []int{1, 2, 3} {
				out := kerneltest.QOut(tensor.Float32, 0, 0)
				kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), c.code), threads, out, in)
				checkFloats(t, fmt.Sprintf("%s, %d elements, %d threads", kernel.OpName(c.code), size, threads), in.Float32s(), out.Float32s(), want)
			}
		}
	}
}

// checkFloats holds got, computed from in, to want, bit for bit.
func checkFloats(t *testing.T, name string, in, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, want %d", name, len(got), len(want))
	}
	for i, w := range want {
		if math.Float32bits(got[i]) != math.Float32bits(w) {
			t.Fatalf("%s: %g at %d gives %g (%#x), want %g (%#x)", name, in[i], i, got[i], math.Float32bits(got[i]), w, math.Float32bits(w))
		}
	}
}

// TestFloatPreluExact runs float PRELU with alpha as large as the input,
// one value, one per channel (tiled, split among threads) and broadcast
// over other dimensions, and holds every output bit to
// `if v < 0 { v *= alpha }`.
func TestFloatPreluExact(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 5))
	for _, c := range []struct{ in, alpha []int }{
		{[]int{1, 4, 5, 7}, []int{1, 4, 5, 7}},
		{[]int{1, 4, 5, 7}, []int{1}},
		{[]int{1, 4, 5, 7}, []int{7}},
		{[]int{1, 4, 5, 19}, []int{1, 1, 19}},
		{[]int{1, 4, 5, 7}, []int{4, 1, 7}},
		{[]int{1, 128, 130, 1}, []int{1, 128, 130, 1}},
		// per channel, long enough to be tiled and cut among threads,
		// ending in part of a tile
		{[]int{1, 96, 96, 16}, []int{1, 1, 16}},
		{[]int{1, 33, 37, 19}, []int{1, 1, 19}},
	} {
		for _, threads := range []int{1, 2} {
			in, alpha := floatInput(r, c.in...), floatInput(r, c.alpha...)
			out := kerneltest.QOut(tensor.Float32, 0, 0)
			kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorPRELU), threads, out, in, alpha)
			op := &preluOp{}
			if err := op.prepareShapes(c.in, c.alpha); err != nil {
				t.Fatal(err)
			}
			a := alpha.Float32s()
			want := make([]float32, len(in.Float32s()))
			ai := make([]int, len(want))
			if op.broadcast {
				op.forEach(func(i, j int) { ai[i] = j })
			} else {
				for i := range ai {
					ai[i] = i
				}
			}
			for i, v := range in.Float32s() {
				if v < 0 {
					v *= a[ai[i]]
				}
				want[i] = v
			}
			checkFloats(t, fmt.Sprintf("PRELU %v by %v, %d threads", c.in, c.alpha, threads), in.Float32s(), out.Float32s(), want)
		}
	}
}
