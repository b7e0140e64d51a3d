package activation

import (
	"math"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// ELU and GELU (TFLite 2.9 activations.cc and gelu.cc):
//
//   - ELU: x for x >= 0, exp(x)-1 otherwise; FLOAT32 through expm1f, INT8
//     through a table of expf(x)-1.
//   - GELU: 0.5*x*(1+erf(x/sqrt(2))), or with the approximate option
//     0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3))); FLOAT32, and UINT8 and
//     INT8 through a table of the same function.
//
// Both tables are TFLite's PopulateLookupTable over the 256 input values
// (actFloatLUT). TFLite accepts other types in Prepare and fails in Eval;
// these kernels refuse them in Prepare.

// GeluParams are GELU's options.
type GeluParams struct {
	// Approximate selects the tanh approximation instead of erf.
	Approximate bool
}

// tableOp is an element-wise activation given by a float function, with
// 8-bit types through a table of it.
type tableOp struct {
	name       string
	quantTypes []tensor.DType
	// float evaluates FLOAT32 elements; table is the function the 8-bit
	// table is built from.
	float, table func(float32) float32

	lut [256]byte
}

func newEluOp(kernel.OpInfo) (kernel.Op, error) {
	return &tableOp{name: "ELU", quantTypes: []tensor.DType{tensor.Int8}, float: actEluFloat, table: actEluTable}, nil
}

func newGeluOp(info kernel.OpInfo) (kernel.Op, error) {
	var p GeluParams
	if tbl, ok := info.Options(schema.BuiltinOptionsGeluOptions); ok {
		var o schema.GeluOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p.Approximate = o.Approximate()
	}
	f := actGelu
	if p.Approximate {
		f = actGeluApproximate
	}
	return &tableOp{name: "GELU", quantTypes: []tensor.DType{tensor.Uint8, tensor.Int8}, float: f, table: f}, nil
}

func (op *tableOp) Prepare(n *kernel.Node) error {
	in, out, err := actUnary(n, op.name)
	if err != nil {
		return err
	}
	if isFloat, err := actTypesIO(op.name, in, out, op.quantTypes...); isFloat || err != nil {
		return err
	}
	actFloatLUT(in, out, &op.lut, op.table)
	return nil
}

func (op *tableOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	switch {
	case in.Type == tensor.Float32:
		src, dst := in.Float32s(), out.Float32s()
		dst = dst[:len(src)]
		for i, x := range src {
			dst[i] = op.float(x)
		}
	case slices.Contains(op.quantTypes, in.Type):
		kernel.ApplyLUT8(&op.lut, in.Data, out.Data)
	default:
		return kernel.Unsupported("%s: input type %s", op.name, in.Type)
	}
	return nil
}

// actFloatLUT fills the table of an 8-bit activation from its float
// function f as TFLite's PopulateLookupTable does, in single precision:
// each input value dequantized, f of it requantized with std::round and
// clamped to the type's range.
func actFloatLUT(in, out *tensor.Tensor, lut *[256]byte, f func(float32) float32) {
	inScale, inZP := in.Scale(), in.ZeroPoint()
	outZP := float32(out.ZeroPoint())
	inverseScale := 1 / out.Scale()
	lo, hi, _ := tensor.QuantizedRange(in.Type)
	kernel.LUT8(in.Type, lut, func(v int32) int32 {
		y := f(inScale * float32(v-inZP))
		q := kernel.CInt32(float64(kernel.Roundf(y*inverseScale) + outZP))
		return kernel.Clamp(q, lo, hi)
	})
}

// actEluFloat is TFLite's float ELU: expm1f for negative inputs.
func actEluFloat(x float32) float32 {
	if x < 0 {
		return actExpm1f(x)
	}
	return x
}

// actEluTable is the function TFLite's INT8 ELU table is built from:
// expf(x)-1 in single precision for negative inputs.
func actEluTable(x float32) float32 {
	if x < 0 {
		return actExpf(x) - 1
	}
	return x
}

// actGelu is TFLite 2.9's exact GELU, 0.5f*x*(1+erf(x*M_SQRT1_2)): the
// product with the double constant makes erf and everything after it double
// precision, rounded to float once at the end.
func actGelu(x float32) float32 {
	half := float64(0.5 * x)
	return float32(half * (1 + math.Erf(float64(x)*(math.Sqrt2/2))))
}

// actGeluSqrt2OverPi is sqrt(2/pi) as TFLite's float constant
// M_2_SQRTPI*M_SQRT1_2.
const actGeluSqrt2OverPi = float32(2 / math.SqrtPi * (math.Sqrt2 / 2))

// actGeluApproximate is TFLite 2.9's tanh GELU, all in single precision with
// glibc's tanhf. The float32 conversions keep each product rounded on its
// own, as the C++ code computes it (no fused multiply-add).
func actGeluApproximate(x float32) float32 {
	cube := float32(float32(float32(0.044715)*x)*x) * x
	inner := float32(actGeluSqrt2OverPi * float32(x+cube))
	return float32(0.5*x) * (1 + actTanhf(inner))
}
