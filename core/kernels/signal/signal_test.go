package signal

import (
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// dft is the textbook O(n^2) transform the tests hold the kernels to.
func dft(x []complex128) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range out {
		for j, v := range x {
			out[k] += v * cmplx.Exp(complex(0, -2*math.Pi*float64(j*k%n)/float64(n)))
		}
	}
	return out
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b)) }

func TestRegistrations(t *testing.T) {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	kerneltest.CheckRegistrations(t, slices.Concat(rfft2dOps(), complexOps()), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRFFT2D: v1, schema.BuiltinOperatorCOMPLEX_ABS: v1,
		schema.BuiltinOperatorREAL: v1, schema.BuiltinOperatorIMAG: v1,
	})
}

func TestFFTMatchesDFT(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 4, 8, 32, 256} {
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(rng.Float64()*2-1, rng.Float64()*2-1)
		}
		want := dft(x)
		newFFT(n).transform(x)
		for k := range x {
			if cmplx.Abs(x[k]-want[k]) > 1e-12*float64(n) {
				t.Fatalf("n=%d: X[%d] = %v, want %v", n, k, x[k], want[k])
			}
		}
	}
}

// TestRFFT2D holds RFFT2D to the 2-D DFT of each slice cropped or
// zero-padded to fft_length, with a runtime fft_length.
func TestRFFT2D(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const batch, inH, inW, h, w = 2, 3, 9, 4, 8 // height padded, width cropped
	in := tensor.NewTensor(tensor.Float32, batch, inH, inW)
	for i := range in.Float32s() {
		in.Float32s()[i] = float32(rng.Float64()*4 - 2)
	}
	out := kerneltest.OutT(tensor.Complex64)
	op, _ := newRFFT2D(kernel.OpInfo{Version: 1})
	kerneltest.MustRun(t, op, 1, out, in, kerneltest.TensorOf(tensor.Int32, []int{2}, int32(h), int32(w)))
	if want := []int{batch, h, w/2 + 1}; !slices.Equal(out.Shape, want) {
		t.Fatalf("shape %v, want %v", out.Shape, want)
	}
	got := tensor.View[complex64](out.Data)
	for b := range batch {
		// Rows' DFTs, then the columns'.
		grid := make([][]complex128, h)
		for i := range grid {
			row := make([]complex128, w)
			for j := range row {
				if i < inH {
					row[j] = complex(float64(in.Float32s()[(b*inH+i)*inW+j]), 0)
				}
			}
			grid[i] = dft(row)
		}
		for j := range w/2 + 1 {
			col := make([]complex128, h)
			for i := range col {
				col[i] = grid[i][j]
			}
			col = dft(col)
			for i, v := range col {
				g := got[(b*h+i)*(w/2+1)+j]
				if !near(float64(real(g)), real(v), 1e-6) || !near(float64(imag(g)), imag(v), 1e-6) {
					t.Fatalf("slice %d [%d][%d] = %v, want %v", b, i, j, g, v)
				}
			}
		}
	}
}

func TestRFFT2DRefusals(t *testing.T) {
	op, _ := newRFFT2D(kernel.OpInfo{Version: 1})
	x := tensor.NewTensor(tensor.Float32, 4, 4)
	length := func(a, b int32) *tensor.Tensor {
		return kerneltest.ConstT(kerneltest.TensorOf(tensor.Int32, []int{2}, a, b))
	}
	for name, c := range map[string]struct {
		out         tensor.DType
		in, len     *tensor.Tensor
		unsupported bool
	}{
		"not a power of two": {tensor.Complex64, x, length(4, 6), false},
		"zero length":        {tensor.Complex64, x, length(0, 4), false},
		"int32 input":        {tensor.Complex64, tensor.NewTensor(tensor.Int32, 4, 4), length(4, 4), true},
		"rank 1":             {tensor.Complex64, tensor.NewTensor(tensor.Float32, 4), length(4, 4), false},
		"float32 output":     {tensor.Float32, x, length(4, 4), true},
	} {
		err := kerneltest.PrepareErr(op, kerneltest.OutT(c.out), c.in, c.len)
		if err == nil || errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: %v (unsupported %v)", name, err, c.unsupported)
		}
	}
}

func TestComplexParts(t *testing.T) {
	inf, nan := math.Inf(1), math.NaN()
	in := kerneltest.TensorOf(tensor.Complex64, []int{4}, complex64(complex(3, -4)), complex64(complex(float32(inf), float32(nan))),
		complex64(complex(3e38, 3e38)), complex64(complex(-1.5, 0)))
	want := map[complexPart][]float64{
		complexAbs:  {5, inf, 3e38 * math.Sqrt2, 1.5},
		complexReal: {3, inf, 3e38, -1.5},
		complexImag: {-4, nan, 3e38, 0},
	}
	for part, w := range want {
		out := kerneltest.OutT(tensor.Float32)
		op, _ := newComplexPart(part)(kernel.OpInfo{Version: 1})
		kerneltest.MustRun(t, op, 1, out, in)
		for i, g := range out.Float32s() {
			if !(float64(g) == float64(float32(w[i])) || math.IsNaN(w[i]) && math.IsNaN(float64(g))) {
				t.Errorf("%s[%d] = %v, want %v", complexPartNames[part], i, g, float32(w[i]))
			}
		}
	}
	out := kerneltest.OutT(tensor.Float64)
	op, _ := newComplexPart(complexAbs)(kernel.OpInfo{Version: 1})
	kerneltest.MustRun(t, op, 1, out, kerneltest.TensorOf(tensor.Complex128, []int{1}, complex(5.0, 12.0)))
	if out.Float64s()[0] != 13 {
		t.Errorf("COMPLEX_ABS of 5+12i in COMPLEX128 = %v, want 13", out.Float64s()[0])
	}
	if err := kerneltest.PrepareErr(op, kerneltest.OutT(tensor.Float32), kerneltest.TensorOf(tensor.Complex128, []int{1}, complex(5.0, 12.0))); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("COMPLEX128 into FLOAT32: %v, want unsupported", err)
	}
}

// TestRealFFTAgreesWithComplex holds the half-length real transform that
// RFFT2D's rows take to the complex transform of the same samples, in
// double precision: within 1e-13 of the samples' magnitude, for lengths 2
// to 1024, inputs cut or zero-padded.
func TestRealFFTAgreesWithComplex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 7))
	for n := 2; n <= 1024; n *= 2 {
		rf, cf := newRealFFT(n), newFFT(n)
		for _, samples := range []int{n, n / 2, n + 3, 1} {
			x := make([]float32, samples)
			norm := 0.0
			for i := range x {
				x[i] = float32(r.NormFloat64() * 100)
				norm += math.Abs(float64(x[i]))
			}
			want := make([]complex128, n)
			for i := range min(samples, n) {
				want[i] = complex(float64(x[i]), 0)
			}
			cf.transform(want)
			got := make([]complex128, n/2+1)
			rf.transform(x, got)
			for k, g := range got {
				if d := cmplx.Abs(g - want[k]); d > 1e-13*max(norm, 1) {
					t.Fatalf("n %d, %d samples: X[%d] = %v, the complex transform gives %v", n, samples, k, g, want[k])
				}
			}
		}
	}
}
