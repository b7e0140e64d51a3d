package elementwise

import (
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// castOp is the CAST kernel (TFLite 2.9 cast.cc): C++ static_cast between
// FLOAT32, INT32, INT64, INT16, INT8, UINT8, UINT32, BOOL and COMPLEX64, with
// the results TFLite's x86-64 build gives where C++ leaves them undefined
// (float to integer out of range, NaN). UINT16, which 2.9 also casts, has no
// DType here.
type castOp struct{}

// castable lists the types TFLite 2.9's CAST reads and writes.
func castable(t tensor.DType) bool {
	switch t {
	case tensor.Float32, tensor.Int32, tensor.Int64, tensor.Int16, tensor.Int8, tensor.Uint8, tensor.Uint32, tensor.Bool, tensor.Complex64:
		return true
	}
	return false
}

// Prepare checks the types and sets the output shape.
func (castOp) Prepare(n *kernel.Node) error {
	if err := checkIO("CAST", n, 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if !castable(in.Type) {
		return kernel.Unsupported("CAST: input type %s", in.Type)
	}
	if !castable(out.Type) {
		return kernel.Unsupported("CAST: output type %s", out.Type)
	}
	out.Shape = slices.Clone(in.Shape)
	return nil
}

// Eval converts every element.
func (castOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if in.NumElements() != out.NumElements() {
		return fmt.Errorf("CAST: %d input elements but %d output elements", in.NumElements(), out.NumElements())
	}
	switch in.Type {
	case tensor.Int8:
		castInts(in.Int8s(), out)
	case tensor.Uint8:
		castInts(in.Uint8s(), out)
	case tensor.Int16:
		castInts(in.Int16s(), out)
	case tensor.Int32:
		castInts(in.Int32s(), out)
	case tensor.Uint32:
		castInts(in.Uint32s(), out)
	case tensor.Int64:
		castInts(in.Int64s(), out)
	case tensor.Bool:
		b := in.Uint8s() // bools are bytes 0 and 1
		if out.Type == tensor.Bool {
			copy(out.Data, b)
			return nil
		}
		castInts(b, out)
	case tensor.Float32:
		castFloats(in.Float32s(), 1, out)
	case tensor.Complex64:
		f := in.Float32s()
		if out.Type == tensor.Complex64 {
			copy(out.Float32s(), f)
			return nil
		}
		castFloats(f, 2, out) // the real parts
	default:
		return kernel.Unsupported("CAST: input type %s", in.Type)
	}
	return nil
}

type castInt interface {
	int8 | uint8 | int16 | int32 | uint32 | int64
}

type castNum interface {
	castInt | float32
}

// convertAll converts with Go's conversions, which match C++ for integer
// narrowing (truncation) and integer to float (round to nearest even).
func convertAll[F castInt, T castNum](x []F, z []T) {
	for i, v := range x {
		z[i] = T(v)
	}
}

// castInts casts integers (and bools as 0/1 bytes) to out's type.
func castInts[F castInt](x []F, out *tensor.Tensor) {
	switch out.Type {
	case tensor.Int8:
		convertAll(x, out.Int8s())
	case tensor.Uint8:
		convertAll(x, out.Uint8s())
	case tensor.Int16:
		convertAll(x, out.Int16s())
	case tensor.Int32:
		convertAll(x, out.Int32s())
	case tensor.Uint32:
		convertAll(x, out.Uint32s())
	case tensor.Int64:
		convertAll(x, out.Int64s())
	case tensor.Float32:
		convertAll(x, out.Float32s())
	case tensor.Bool:
		z := out.Uint8s()
		for i, v := range x {
			z[i] = 0
			if v != 0 {
				z[i] = 1
			}
		}
	case tensor.Complex64:
		z := out.Float32s()
		for i, v := range x {
			z[2*i], z[2*i+1] = float32(v), 0
		}
	}
}

// cvttss2si is x86's truncating float to int32 conversion: NaN and values
// outside int32 give MinInt32 (C++'s static_cast there is undefined).
func cvttss2si(f float32) int32 {
	if f >= -2147483648 && f < 2147483648 {
		return int32(f)
	}
	return math.MinInt32
}

// cvttss2si64 is the int64 form of cvttss2si.
func cvttss2si64(f float32) int64 {
	if f >= -9223372036854775808 && f < 9223372036854775808 {
		return int64(f)
	}
	return math.MinInt64
}

// castFloats casts every stride-th float of x (2 for the real parts of
// complex numbers) to out's type.
func castFloats(x []float32, stride int, out *tensor.Tensor) {
	n := len(x) / stride
	switch out.Type {
	case tensor.Float32:
		z := out.Float32s()
		for i := range n {
			z[i] = x[i*stride]
		}
	case tensor.Complex64:
		z := out.Float32s()
		for i := range n {
			z[2*i], z[2*i+1] = x[i*stride], 0
		}
	case tensor.Bool:
		z := out.Uint8s()
		for i := range n {
			z[i] = 0
			if x[i*stride] != 0 { // NaN is true
				z[i] = 1
			}
		}
	case tensor.Int64:
		z := out.Int64s()
		for i := range n {
			z[i] = cvttss2si64(x[i*stride])
		}
	case tensor.Int32:
		z := out.Int32s()
		for i := range n {
			z[i] = cvttss2si(x[i*stride])
		}
	// The narrow types go through int32 and truncate, as the compiled
	// scalar and vector code both do.
	case tensor.Int16:
		z := out.Int16s()
		for i := range n {
			z[i] = int16(cvttss2si(x[i*stride]))
		}
	case tensor.Int8:
		z := out.Int8s()
		for i := range n {
			z[i] = int8(cvttss2si(x[i*stride]))
		}
	case tensor.Uint8:
		z := out.Uint8s()
		for i := range n {
			z[i] = uint8(cvttss2si(x[i*stride]))
		}
	case tensor.Uint32:
		castFloatsUint32(x, stride, out.Uint32s()[:n])
	}
}

// castFloatsUint32 reproduces TFLite's compiled float to uint32 cast, whose
// out-of-range results depend on the position: the vectorised loop converts
// each group of 4 elements (real parts, for complex input) as cvttps2dq(f) below 2^31 (NaN included) and as
// cvttps2dq(f - 2^31) ^ 2^31 from there, while the scalar loop over the last
// n % 4 elements keeps the low 32 bits of the int64 conversion. In range
// (0 <= f < 2^32) both are the plain truncation.
func castFloatsUint32(x []float32, stride int, z []uint32) {
	vec := len(z) &^ 3
	for i := range vec {
		f := x[i*stride]
		if f >= 2147483648 {
			z[i] = uint32(cvttss2si(f-2147483648)) ^ 0x80000000
		} else {
			z[i] = uint32(cvttss2si(f))
		}
	}
	for i := vec; i < len(z); i++ {
		z[i] = uint32(cvttss2si64(x[i*stride]))
	}
}
