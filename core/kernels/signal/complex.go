package signal

import (
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// COMPLEX_ABS, REAL and IMAG: one real number from each complex element,
// following tensorflow/lite/kernels/complex_support.cc of TF 2.9. A
// COMPLEX64 input gives FLOAT32, a COMPLEX128 input FLOAT64, of the input's
// shape. COMPLEX_ABS is std::abs, which libstdc++ computes as hypot: for
// COMPLEX64 glibc's hypotf, the square root of x*x+y*y taken in double
// precision (exact squares, no overflow) and rounded to float32, which is
// what complexAbs64 does.

func complexOps() []kernel.Registration {
	v1 := tensor.VersionRange{Min: 1, Max: 1}
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCOMPLEX_ABS, Versions: v1, Types: []tensor.DType{tensor.Complex64}, New: newComplexPart(complexAbs)},
		{Code: schema.BuiltinOperatorREAL, Versions: v1, Types: []tensor.DType{tensor.Complex64}, New: newComplexPart(complexReal)},
		{Code: schema.BuiltinOperatorIMAG, Versions: v1, Types: []tensor.DType{tensor.Complex64}, New: newComplexPart(complexImag)},
	}
}

// complexPart says which real number an op takes from a complex element.
type complexPart int

const (
	complexAbs complexPart = iota
	complexReal
	complexImag
)

var complexPartNames = [...]string{"COMPLEX_ABS", "REAL", "IMAG"}

func newComplexPart(part complexPart) func(kernel.OpInfo) (kernel.Op, error) {
	return func(kernel.OpInfo) (kernel.Op, error) { return complexPartOp{part}, nil }
}

// complexPartOp is the kernel of COMPLEX_ABS, REAL or IMAG.
type complexPartOp struct{ part complexPart }

func (o complexPartOp) Prepare(n *kernel.Node) error {
	name := complexPartNames[o.part]
	if err := kernel.CheckArity(n, name, 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	var want tensor.DType
	switch in.Type {
	case tensor.Complex64:
		want = tensor.Float32
	case tensor.Complex128:
		want = tensor.Float64
	default:
		return kernel.Unsupported("%s: input type %s", name, in.Type)
	}
	if out.Type != want {
		return kernel.Unsupported("%s: output type %s for input type %s, want %s", name, out.Type, in.Type, want)
	}
	kernel.SetShape(out, in.Shape)
	return nil
}

func (o complexPartOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if in.Type == tensor.Complex64 {
		parts64 := [...]func(complex64) float32{
			complexAbs64,
			func(c complex64) float32 { return real(c) },
			func(c complex64) float32 { return imag(c) },
		}
		apply(tensor.View[complex64](in.Data), out.Float32s(), parts64[o.part])
	} else {
		parts128 := [...]func(complex128) float64{
			complexAbs128,
			func(c complex128) float64 { return real(c) },
			func(c complex128) float64 { return imag(c) },
		}
		apply(tensor.View[complex128](in.Data), out.Float64s(), parts128[o.part])
	}
	return nil
}

// apply writes f of every element of src to dst.
func apply[C, F any](src []C, dst []F, f func(C) F) {
	dst = dst[:len(src)]
	for i, c := range src {
		dst[i] = f(c)
	}
}

// complexAbs64 is glibc's hypotf: sqrt(x*x + y*y) in double precision,
// rounded to float32 (infinite when either part is, even beside a NaN).
func complexAbs64(c complex64) float32 {
	x, y := float64(real(c)), float64(imag(c))
	if math.IsInf(x, 0) || math.IsInf(y, 0) {
		return float32(math.Inf(1))
	}
	return float32(math.Sqrt(x*x + y*y))
}

// complexAbs128 is glibc's hypot, which Go's math.Hypot matches to within
// an ulp of float64.
func complexAbs128(c complex128) float64 { return math.Hypot(real(c), imag(c)) }
