package activation

import (
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func TestL2NormRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, l2NormOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorL2_NORMALIZATION: {Min: 1, Max: 2},
	})
}

func TestL2NormFloat(t *testing.T) {
	in := kerneltest.F32T([]int{1, 3, 2}, 3, 4, 0, 0, -1, 1e-8)
	out := kerneltest.OutT(tensor.Float32)
	if err := kerneltest.RunNode(&l2Norm{}, 1, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	// Rows: (3,4)/5; zero stays zero (the norm is clamped to 1e-6);
	// (-1, 1e-8) is already of norm 1.
	want := []float32{0.6, 0.8, 0, 0, -1, 1e-8}
	if !kerneltest.CloseF32(out.Float32s(), want, 1e-7) || !slices.Equal(out.Shape, []int{1, 3, 2}) {
		t.Errorf("got %v %v", out.Float32s(), out.Shape)
	}
	tiny := kerneltest.F32T([]int{2}, 3e-7, 4e-7) // norm 5e-7 < 1e-6: divided by 1e-6
	out = kerneltest.OutT(tensor.Float32)
	kerneltest.RunNode(&l2Norm{}, 1, []*tensor.Tensor{tiny}, []*tensor.Tensor{out})
	if !kerneltest.CloseF32(out.Float32s(), []float32{0.3, 0.4}, 1e-6) {
		t.Errorf("tiny: %v", out.Float32s())
	}
}

func TestL2NormQuantized(t *testing.T) {
	// Expected bytes from the TF 2.9 C library for these inputs.
	u8in := kerneltest.U8T([]int{2, 5}, 0.1, 100, 100, 103, 96, 110, 101, 228, 0, 100, 255, 130)
	out := kerneltest.QOut(tensor.Uint8, 1.0/128, 128)
	if err := kerneltest.RunNode(&l2Norm{}, 1, []*tensor.Tensor{u8in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if want := []uint8{128, 162, 82, 242, 139, 200, 71, 128, 216, 145}; !slices.Equal(out.Uint8s(), want) {
		t.Errorf("uint8: %v, want %v", out.Uint8s(), want)
	}
	// A squared norm of 1 takes TFLite's special case (multiplier MaxInt32):
	// 128 + 128 saturates at 255.
	out = kerneltest.QOut(tensor.Uint8, 1.0/128, 128)
	kerneltest.RunNode(&l2Norm{}, 1, []*tensor.Tensor{kerneltest.U8T([]int{3}, 0.1, 3, 3, 4, 3)}, []*tensor.Tensor{out})
	if want := []uint8{128, 255, 128}; !slices.Equal(out.Uint8s(), want) {
		t.Errorf("uint8 unit: %v, want %v", out.Uint8s(), want)
	}
	i8in := kerneltest.I8T([]int{2, 5}, 0.1, 3, -5, 7, 0, 127, -128, 3, 3, 3, 3, 2)
	out = kerneltest.QOut(tensor.Int8, 1.0/128, 0)
	if err := kerneltest.RunNode(&l2Norm{}, 1, []*tensor.Tensor{i8in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if want := []int8{-6, 3, -2, 88, -93, 0, 0, 0, 0, -128}; !slices.Equal(out.Int8s(), want) {
		t.Errorf("int8: %v, want %v", out.Int8s(), want)
	}
}

// TestL2NormQuantizedVsFloat checks the fixed-point path against a float
// reference: within one step of round(128 * d / |d|).
func TestL2NormQuantizedVsFloat(t *testing.T) {
	seed := uint32(7)
	next := func() int {
		seed = seed*1664525 + 1013904223
		return int(seed >> 24)
	}
	for trial := 0; trial < 200; trial++ {
		depth := 1 + next()%64
		zp := next()
		spread := 1 + next()
		vals := make([]uint8, depth)
		var sq float64
		for i := range vals {
			vals[i] = uint8(min(255, max(0, zp+next()%spread-spread/2)))
			d := float64(int(vals[i]) - zp)
			sq += d * d
		}
		in := kerneltest.U8T([]int{1, depth}, 0.5, int64(zp), vals...)
		out := kerneltest.QOut(tensor.Uint8, 1.0/128, 128)
		if err := kerneltest.RunNode(&l2Norm{}, 1, []*tensor.Tensor{in}, []*tensor.Tensor{out}); err != nil {
			t.Fatal(err)
		}
		i8vals := make([]int8, depth)
		for i, v := range vals {
			i8vals[i] = int8(int(v) - 128)
		}
		in8 := kerneltest.I8T([]int{1, depth}, 0.5, int64(zp-128), i8vals...)
		out8 := kerneltest.QOut(tensor.Int8, 1.0/128, 0)
		if err := kerneltest.RunNode(&l2Norm{}, 1, []*tensor.Tensor{in8}, []*tensor.Tensor{out8}); err != nil {
			t.Fatal(err)
		}
		if sq <= 1 {
			continue // TFLite's special case: the norm is taken as 1
		}
		for i, v := range vals {
			ref := 128 * float64(int(v)-zp) / math.Sqrt(sq)
			if got := float64(out.Uint8s()[i]) - 128; math.Abs(got-min(max(ref, -128), 127)) > 1 {
				t.Fatalf("uint8 depth %d zp %d: element %d = %g, float %g", depth, zp, i, got, ref)
			}
			if got := float64(out8.Int8s()[i]); math.Abs(got-min(max(ref, -128), 127)) > 1 {
				t.Fatalf("int8 depth %d zp %d: element %d = %g, float %g", depth, zp, i, got, ref)
			}
		}
	}
}

func TestInvSqrtQuantizedMultiplierExpL2Norm(t *testing.T) {
	// m * 2^(shift-31) must approximate 1/sqrt(x).
	for _, x := range []int32{2, 3, 4, 17, 1000, 65025, 1 << 20, 1<<29 + 5, math.MaxInt32} {
		m, shift := kernel.InvSqrtQuantizedMultiplierExp(x, -1)
		if shift > 0 {
			t.Errorf("x=%d: shift %d > 0", x, shift)
		}
		got := float64(m) * math.Pow(2, float64(shift-31))
		want := 1 / math.Sqrt(float64(x))
		if math.Abs(got-want)/want > 1e-5 {
			t.Errorf("x=%d: %g, want %g", x, got, want)
		}
	}
	if m, s := kernel.InvSqrtQuantizedMultiplierExp(0, -1); m != math.MaxInt32 || s != 0 {
		t.Errorf("x=0: %d %d", m, s)
	}
}

func TestL2NormErrors(t *testing.T) {
	cases := []struct {
		name    string
		k       *l2Norm
		in, out *tensor.Tensor
	}{
		{"uint8 output scale", &l2Norm{}, kerneltest.U8T([]int{2}, 1, 0), kerneltest.QOut(tensor.Uint8, 1.0/256, 128)},
		{"uint8 output zero point", &l2Norm{}, kerneltest.U8T([]int{2}, 1, 0), kerneltest.QOut(tensor.Uint8, 1.0/128, 0)},
		{"int8 output zero point", &l2Norm{}, kerneltest.I8T([]int{2}, 1, 0), kerneltest.QOut(tensor.Int8, 1.0/128, 128)},
		{"int32", &l2Norm{}, tensor.NewTensor(tensor.Int32, 2), kerneltest.OutT(tensor.Int32)},
		{"5-D", &l2Norm{}, tensor.NewTensor(tensor.Float32, 1, 1, 1, 1, 2), kerneltest.OutT(tensor.Float32)},
		{"activation", &l2Norm{activation: schema.ActivationFunctionTypeRELU}, tensor.NewTensor(tensor.Float32, 2), kerneltest.OutT(tensor.Float32)},
	}
	for _, c := range cases {
		if err := kerneltest.RunNode(c.k, 1, []*tensor.Tensor{c.in}, []*tensor.Tensor{c.out}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
