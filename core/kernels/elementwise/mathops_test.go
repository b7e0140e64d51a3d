package elementwise

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// sameFloat reports whether g is w to the bit, or both are NaN.
func sameFloat(g, w float32) bool {
	return math.Float32bits(g) == math.Float32bits(w) || (g != g && w != w)
}

// TestMathUnaryFloat checks LOG, SIN, COS, CEIL, ROUND and SQUARE on values
// whose results are known exactly, including TFLite's rounding of ties to
// even, the zero signs it gives and its DAZ/FTZ handling of denormals.
func TestMathUnaryFloat(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	negZero := math.Copysign(0, -1)
	cases := []struct {
		op       string
		in, want []float64
	}{
		{"ROUND", []float64{0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 8388607.5, -8388607.5, 3.7, -3.2, negZero, nan, inf, -inf, 1e-40},
			[]float64{0, 2, 2, 0, -2, -2, 0, 8388608, -8388608, 4, -3, negZero, nan, inf, -inf, 0}},
		{"CEIL", []float64{-0.5, 0.1, -1.5, 2, 1e-40, -1e-40, negZero, nan, -inf},
			[]float64{0, 1, -1, 2, 0, 0, 0, nan, -inf}},
		{"LOG", []float64{1, 0, negZero, -1, inf, nan, 1e-40, -1e-40, 0.5},
			[]float64{0, -inf, -inf, nan, inf, nan, float64(float32(-150 * math.Ln2)), nan, float64(float32(-math.Ln2))}},
		{"SQUARE", []float64{3, -2, 1e-20, 1e20, 1e-40, -inf, nan},
			[]float64{9, 4, 0, inf, 0, inf, nan}},
		{"SIN", []float64{0, negZero, inf, nan}, []float64{0, negZero, nan, nan}},
		{"COS", []float64{0, negZero, inf, nan}, []float64{1, 1, nan, nan}},
	}
	for _, c := range cases {
		out := tensor.NewTensor(tensor.Float32)
		if err := kerneltest.Run1(newEWOp(t, c.op, ewNone, false), out, tv{typ: tensor.Float32, shape: []int{len(c.in)}, data: c.in}.tensor()); err != nil {
			t.Errorf("%s: %v", c.op, err)
			continue
		}
		for i, g := range out.Float32s() {
			if w := float32(c.want[i]); !sameFloat(g, w) {
				t.Errorf("%s(%v) = %v (%#x), want %v (%#x)", c.op, c.in[i], g, math.Float32bits(g), w, math.Float32bits(w))
			}
		}
	}
	// SIN and COS within a few float32 ulps of the float64 functions.
	x := []float64{0.5, -1, 3, 100, -1000, 1e5}
	for _, op := range []string{"SIN", "COS"} {
		f := map[string]func(float64) float64{"SIN": math.Sin, "COS": math.Cos}[op]
		out := tensor.NewTensor(tensor.Float32)
		kerneltest.MustRun(t, newEWOp(t, op, ewNone, false), 1, out, tv{typ: tensor.Float32, shape: []int{len(x)}, data: x}.tensor())
		for i, g := range out.Float32s() {
			if w := f(float64(float32(x[i]))); math.Abs(float64(g)-w) > 1e-7 {
				t.Errorf("%s(%v) = %v, want %v", op, x[i], g, w)
			}
		}
	}
}

// TestZerosLike checks ZEROS_LIKE clears every supported type, keeps the
// shape, and refuses the types TFLite 2.9 refuses.
func TestZerosLike(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Float32, tensor.Int32, tensor.Int64} {
		in := tv{typ: typ, shape: []int{2, 3}, data: []float64{1, -2, 3, 4, 5, -6}}.tensor()
		out := tensor.NewTensor(typ)
		out.Data = []byte{1} // Eval must not depend on the output's old bytes
		kerneltest.MustRun(t, newEWOp(t, "ZEROS_LIKE", ewNone, false), 1, out, in)
		kerneltest.CheckOutput(t, "ZEROS_LIKE "+typ.String(), out, []int{2, 3}, make([]float64, 6))
	}
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Bool} {
		err := kerneltest.PrepareErr(newEWOp(t, "ZEROS_LIKE", ewNone, false), tensor.NewTensor(typ), tensor.NewTensor(typ, 2))
		if !errors.Is(err, kernel.ErrUnsupported) || !strings.Contains(err.Error(), "ZEROS_LIKE") {
			t.Errorf("ZEROS_LIKE %s: error %v, want an unsupported-type error naming the op", typ, err)
		}
	}
}

// TestFloorMod checks FLOOR_MOD's result takes the divisor's sign, on
// integers and floats, with broadcasting, and its zero divisors.
func TestFloorMod(t *testing.T) {
	x := []float64{7, -7, 7, -7, 0, 6, -6}
	y := []float64{3, 3, -3, -3, 5, 3, -3}
	want := []float64{1, 2, -2, -1, 0, 0, 0}
	for _, typ := range []tensor.DType{tensor.Int32, tensor.Int64, tensor.Float32} {
		out := tensor.NewTensor(typ)
		kerneltest.MustRun(t, newEWOp(t, "FLOOR_MOD", ewNone, false), 1, out,
			tv{typ: typ, shape: []int{7}, data: x}.tensor(), tv{typ: typ, shape: []int{7}, data: y}.tensor())
		kerneltest.CheckOutput(t, "FLOOR_MOD "+typ.String(), out, []int{7}, want)
	}
	// A shape vector modulo a block size, broadcast: the dilated convolution case.
	out := tensor.NewTensor(tensor.Int32)
	kerneltest.MustRun(t, newEWOp(t, "FLOOR_MOD", ewNone, false), 1, out,
		tv{typ: tensor.Int32, shape: []int{2, 2}, data: []float64{65, 33, -5, 8}}.tensor(), tv{typ: tensor.Int32, shape: []int{}, data: []float64{4}}.tensor())
	kerneltest.CheckOutput(t, "FLOOR_MOD broadcast", out, []int{2, 2}, []float64{1, 1, 3, 0})
	// Floats: fractional remainders, and NaN (not an error) for a zero or denormal divisor.
	out = tensor.NewTensor(tensor.Float32)
	kerneltest.MustRun(t, newEWOp(t, "FLOOR_MOD", ewNone, false), 1, out,
		tv{typ: tensor.Float32, shape: []int{5}, data: []float64{7.5, -7.5, 1, 1, 5}}.tensor(),
		tv{typ: tensor.Float32, shape: []int{5}, data: []float64{2, 2, 0, 1e-40, math.Inf(-1)}}.tensor())
	for i, w := range []float32{1.5, 0.5, float32(math.NaN()), float32(math.NaN()), float32(math.Inf(-1))} {
		if g := out.Float32s()[i]; !sameFloat(g, w) {
			t.Errorf("FLOOR_MOD float [%d] = %v, want %v", i, g, w)
		}
	}
	for _, typ := range []tensor.DType{tensor.Int32, tensor.Int64} {
		err := kerneltest.Run1(newEWOp(t, "FLOOR_MOD", ewNone, false), tensor.NewTensor(typ),
			tv{typ: typ, shape: []int{2}, data: []float64{1, 2}}.tensor(), tv{typ: typ, shape: []int{2}, data: []float64{1, 0}}.tensor())
		if err == nil || !strings.Contains(err.Error(), "FLOOR_MOD: Division by 0") {
			t.Errorf("FLOOR_MOD %s by 0: error %v", typ, err)
		}
	}
}

// TestPow checks POW: int32 through double with out-of-range results as
// x86 converts them, its refusal of negative int32 exponents, and float32
// special values.
func TestPow(t *testing.T) {
	out := tensor.NewTensor(tensor.Int32)
	kerneltest.MustRun(t, newEWOp(t, "POW", ewNone, false), 1, out,
		tv{typ: tensor.Int32, shape: []int{7}, data: []float64{2, -2, 3, 0, -1, 7, 46341}}.tensor(),
		tv{typ: tensor.Int32, shape: []int{7}, data: []float64{30, 31, 20, 0, 3, 11, 2}}.tensor())
	kerneltest.CheckOutput(t, "POW int32", out, []int{7}, []float64{1 << 30, math.MinInt32, math.MinInt32, 1, -1, 1977326743, math.MinInt32})
	err := kerneltest.Run1(newEWOp(t, "POW", ewNone, false), tensor.NewTensor(tensor.Int32),
		tv{typ: tensor.Int32, shape: []int{2}, data: []float64{2, 2}}.tensor(), tv{typ: tensor.Int32, shape: []int{2}, data: []float64{1, -1}}.tensor())
	if err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("POW int32 with a negative exponent: error %v", err)
	}
	negZero := math.Copysign(0, -1)
	x := []float64{2, 0, negZero, -8, -8, math.NaN(), 1, 2, 1e-40, 1e-40}
	y := []float64{0.5, -1, -1, 1.0 / 3, 3, 0, math.NaN(), 128, 0.5, 1}
	want := []float32{float32(math.Sqrt2), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), -512, 1, 1, float32(math.Inf(1)), 0x1p-75, 0}
	out = tensor.NewTensor(tensor.Float32)
	kerneltest.MustRun(t, newEWOp(t, "POW", ewNone, false), 1, out,
		tv{typ: tensor.Float32, shape: []int{len(x)}, data: x}.tensor(), tv{typ: tensor.Float32, shape: []int{len(y)}, data: y}.tensor())
	for i, g := range out.Float32s() {
		if !sameFloat(g, want[i]) {
			t.Errorf("POW(%v, %v) = %v, want %v", x[i], y[i], g, want[i])
		}
	}
	err = kerneltest.PrepareErr(newEWOp(t, "POW", ewNone, false), tensor.NewTensor(tensor.Int64), tensor.NewTensor(tensor.Int64, 2), tensor.NewTensor(tensor.Int64, 2))
	if !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("POW int64: error %v, want unsupported", err)
	}
}

// TestAddN checks ADD_N's sums: int32 wrapping, float partial sums clamped
// to the largest float as TFLite's optimized kernel clamps them, and its
// refusals.
func TestAddN(t *testing.T) {
	out := tensor.NewTensor(tensor.Int32)
	kerneltest.MustRun(t, addNOp{}, 1, out,
		tv{typ: tensor.Int32, shape: []int{3}, data: []float64{math.MaxInt32, 1, -5}}.tensor(),
		tv{typ: tensor.Int32, shape: []int{3}, data: []float64{1, 2, -6}}.tensor(),
		tv{typ: tensor.Int32, shape: []int{3}, data: []float64{0, 3, 4}}.tensor())
	kerneltest.CheckOutput(t, "ADD_N int32", out, []int{3}, []float64{math.MinInt32, 6, -7})
	f := func(v ...float64) *tensor.Tensor {
		return tv{typ: tensor.Float32, shape: []int{len(v)}, data: v}.tensor()
	}
	out = tensor.NewTensor(tensor.Float32)
	kerneltest.MustRun(t, addNOp{}, 1, out, f(3e38, math.Inf(1), 1), f(3e38, 1, 2), f(-3e38, -3e38, math.NaN()))
	want := []float32{math.MaxFloat32 - 3e38, math.MaxFloat32 - 3e38, float32(math.NaN())}
	for i, g := range out.Float32s() {
		if !sameFloat(g, want[i]) {
			t.Errorf("ADD_N float [%d] = %v, want %v", i, g, want[i])
		}
	}
	bad := []struct {
		name string
		ins  []*tensor.Tensor
	}{
		{"one input", []*tensor.Tensor{f(1)}},
		{"shapes differ", []*tensor.Tensor{f(1, 2), f(1)}},
		{"types differ", []*tensor.Tensor{f(1, 2), tensor.NewTensor(tensor.Int32, 2)}},
		{"int64", []*tensor.Tensor{tensor.NewTensor(tensor.Int64, 2), tensor.NewTensor(tensor.Int64, 2)}},
	}
	for _, c := range bad {
		err := kerneltest.PrepareErr(addNOp{}, tensor.NewTensor(c.ins[0].Type), c.ins...)
		if err == nil || !strings.HasPrefix(err.Error(), "ADD_N: ") {
			t.Errorf("ADD_N %s: error %v", c.name, err)
		}
	}
	if !slices.Equal(out.Shape, []int{3}) {
		t.Errorf("ADD_N shape %v", out.Shape)
	}
}
