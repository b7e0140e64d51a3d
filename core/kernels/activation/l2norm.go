package activation

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// l2NormOps returns the registration of L2_NORMALIZATION, with the version ranges of TF 2.9's builtin resolver (register.cc; checked
// against the TF 2.9 C library, which refuses the next version up).
func l2NormOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorL2_NORMALIZATION, Versions: tensor.VersionRange{Min: 1, Max: 2}, Types: []tensor.DType{tensor.Float32}, New: newL2Norm},
	}
}

// L2_NORMALIZATION divides each vector along the last dimension by its L2
// norm (TF 2.9 l2norm.cc, optimized kernel for float32 and uint8, reference
// integer kernel for int8). Quantized outputs have scale 1/128 and zero point
// 128 (uint8) or 0 (int8); the division uses TFLite's fixed-point inverse
// square root (GetInvSqrtQuantizedMultiplierExp).
type l2Norm struct {
	activation schema.ActivationFunctionType
}

func newL2Norm(info kernel.OpInfo) (kernel.Op, error) {
	k := &l2Norm{}
	if tbl, ok := info.Options(schema.BuiltinOptionsL2NormOptions); ok {
		var o schema.L2NormOptions
		o.Init(tbl.Bytes, tbl.Pos)
		k.activation = o.FusedActivationFunction()
	}
	return k, nil
}

func (k *l2Norm) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 1 || len(n.Outputs) != 1 || n.Inputs[0] == nil || n.Outputs[0] == nil {
		return fmt.Errorf("L2_NORMALIZATION: want 1 input and 1 output")
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if len(in.Shape) < 1 || len(in.Shape) > 4 {
		return fmt.Errorf("L2_NORMALIZATION: %d-D input, want 1-D to 4-D", len(in.Shape))
	}
	switch out.Type {
	case tensor.Float32:
	case tensor.Uint8, tensor.Int8:
		want := int32(0)
		if out.Type == tensor.Uint8 {
			want = 128
		}
		if out.Scale() != 1.0/128 || out.ZeroPoint() != want {
			return fmt.Errorf("L2_NORMALIZATION: %s output scale %g and zero point %d, want 1/128 and %d",
				out.Type, out.Scale(), out.ZeroPoint(), want)
		}
	default:
		return kernel.Unsupported("L2_NORMALIZATION: type %s", out.Type)
	}
	if in.Type != out.Type {
		return fmt.Errorf("L2_NORMALIZATION: input %s, output %s", in.Type, out.Type)
	}
	// TFLite's kernels implement no fused activation and reject any.
	if k.activation != schema.ActivationFunctionTypeNONE {
		return kernel.Unsupported("L2_NORMALIZATION: fused activation %s", schema.EnumNamesActivationFunctionType[k.activation])
	}
	out.Shape = append(out.Shape[:0], in.Shape...)
	return nil
}

func (k *l2Norm) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	depth := in.Shape[len(in.Shape)-1]
	if depth == 0 {
		return nil
	}
	outer := in.NumElements() / depth
	switch in.Type {
	case tensor.Float32:
		l2NormFloat(in.Float32s(), out.Float32s(), outer, depth)
	case tensor.Uint8:
		l2NormUint8(in.Uint8s(), out.Uint8s(), outer, depth, in.ZeroPoint())
	case tensor.Int8:
		l2NormInt8(in.Int8s(), out.Int8s(), outer, depth, in.ZeroPoint())
	}
	return nil
}

// l2NormFloat sums the squares in order in float32, takes max(sqrt, 1e-6)
// and divides, as TFLite's kernel does.
func l2NormFloat(in, out []float32, outer, depth int) {
	const epsilon = float32(1e-6)
	for i := 0; i < outer; i++ {
		row, orow := in[i*depth:(i+1)*depth], out[i*depth:(i+1)*depth]
		var sum float32
		for _, v := range row {
			sum += float32(v * v) // the conversion keeps Go from fusing a multiply-add
		}
		norm := float32(math.Sqrt(float64(sum)))
		if norm < epsilon {
			norm = epsilon
		}
		for c, v := range row {
			orow[c] = v / norm
		}
	}
}

// l2SumSquares is the sum of the squared differences of row from zp, in
// int32 as TFLite sums them.
func l2SumSquares[T int8 | uint8](row []T, zp int32) int32 {
	var sq int32
	for _, v := range row {
		d := int32(v) - zp
		sq += d * d
	}
	return sq
}

// l2NormUint8 is TFLite's optimized uint8 kernel: 128 + the difference
// scaled by 128/norm, clamped to [0, 255].
func l2NormUint8(in, out []uint8, outer, depth int, zp int32) {
	for i := 0; i < outer; i++ {
		row, orow := in[i*depth:(i+1)*depth], out[i*depth:(i+1)*depth]
		m, shift := kernel.InvSqrtQuantizedMultiplierExp(l2SumSquares(row, zp), -1)
		for c, v := range row {
			d := int32(v) - zp
			r := kernel.MultiplyByQuantizedMultiplierSmallerThanOneExp(128*d, m, shift)
			orow[c] = uint8(min(max(128+r, 0), 255))
		}
	}
}

// l2NormInt8 is TFLite's reference integer kernel: the difference scaled by
// 2^7/norm in one MultiplyByQuantizedMultiplier, clamped to [-128, 127].
func l2NormInt8(in, out []int8, outer, depth int, zp int32) {
	for i := 0; i < outer; i++ {
		row, orow := in[i*depth:(i+1)*depth], out[i*depth:(i+1)*depth]
		m, shift := kernel.InvSqrtQuantizedMultiplierExp(l2SumSquares(row, zp), -1)
		for c, v := range row {
			r := kernel.MultiplyByQuantizedMultiplier(int32(v)-zp, m, shift+7)
			orow[c] = int8(min(max(r, -128), 127))
		}
	}
}
