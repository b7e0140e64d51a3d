package activation

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// SOFTMAX over the last axis (TFLite 2.9 activations.cc, optimized kernels on
// x86-64):
//
//   - FLOAT32: exp(beta*(x-max)) normalized by its sum.
//   - UINT8/INT8 inputs (to the same type or INT16): a 256-entry float table
//     of expf(-input_scale*beta*d) for d = 0..255 is built in Prepare
//     (PopulateSoftmaxLookupTable); each row sums the table entries of
//     max-x in single precision, in order, and scales them by
//     1/(sum*output_scale). UINT8 results are rounded by adding 0.5 and
//     truncating, the others with roundf.
//   - INT16 (zero points 0, rank 1 to 4): exp and 1/(1+x) come from 513-entry
//     interpolated int16 tables over [-10, 0] and [0, 1] (SoftmaxInt16).

// SoftmaxParams are SOFTMAX's options.
type SoftmaxParams struct {
	Beta float32
}

type softmaxOp struct {
	params SoftmaxParams

	// 8-bit inputs.
	table    [256]float32
	outZP    int32
	outScale float32
	// INT16 input.
	expLUT   [actLUTSize]int16
	recipLUT [actLUTSize]int16
	inMult   int32
	inShift  int
}

func newSoftmaxOp(info kernel.OpInfo) (kernel.Op, error) {
	var p SoftmaxParams
	if tbl, ok := info.Options(schema.BuiltinOptionsSoftmaxOptions); ok {
		var o schema.SoftmaxOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p.Beta = o.Beta()
	}
	return &softmaxOp{params: p}, nil
}

func (op *softmaxOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, "SOFTMAX", 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	switch {
	case out.Type == tensor.Int16:
		if in.Type != tensor.Int8 && in.Type != tensor.Uint8 && in.Type != tensor.Int16 {
			return kernel.Unsupported("SOFTMAX: input type %s with output type %s", in.Type, out.Type)
		}
	case in.Type != out.Type:
		return fmt.Errorf("SOFTMAX: input type %s and output type %s differ", in.Type, out.Type)
	}
	if len(in.Shape) < 1 {
		return fmt.Errorf("SOFTMAX: input must have at least one dimension")
	}
	if err := actSoftmaxOutputCheck(in, out); err != nil {
		return err
	}
	out.Shape = append([]int(nil), in.Shape...)
	if isFloat, err := actTypesIO("SOFTMAX", in, out, tensor.Uint8, tensor.Int8, tensor.Int16); isFloat || err != nil {
		return err
	}
	op.outZP, op.outScale = out.ZeroPoint(), out.Scale()
	if in.Type != tensor.Int16 {
		actSoftmaxTable(&op.table, -in.Scale()*op.params.Beta)
		return nil
	}
	if in.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
		return fmt.Errorf("SOFTMAX: int16 tensors need zero points 0, got %d and %d", in.ZeroPoint(), out.ZeroPoint())
	}
	if len(in.Shape) > 4 {
		return kernel.Unsupported("SOFTMAX: int16 input of rank %d (TFLite takes 1 to 4)", len(in.Shape))
	}
	// exp(-10) is negligible next to the row's maximum term exp(0).
	actGenLUT(math.Exp, -10, 0, op.expLUT[:])
	actGenLUT(func(x float64) float64 { return 1 / (1 + x) }, 0, 1, op.recipLUT[:])
	// Map input differences to [-65535, 0] for [-10, 0]; the product of
	// scale and beta is single precision, as in TFLite.
	op.inMult, op.inShift = kernel.QuantizeMultiplier(float64(in.Scale()*op.params.Beta) / (10.0 / 65535.0))
	return nil
}

func (op *softmaxOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	depth := rowLength(in)
	if depth == 0 {
		return nil
	}
	switch in.Type {
	case tensor.Float32:
		actSoftmaxFloat(in.Float32s(), out.Float32s(), depth, op.params.Beta)
	case tensor.Uint8:
		switch out.Type {
		case tensor.Uint8:
			actSoftmax8(op, in.Uint8s(), out.Uint8s(), depth)
		case tensor.Int16:
			actSoftmax8(op, in.Uint8s(), out.Int16s(), depth)
		}
	case tensor.Int8:
		switch out.Type {
		case tensor.Int8:
			actSoftmax8(op, in.Int8s(), out.Int8s(), depth)
		case tensor.Int16:
			actSoftmax8(op, in.Int8s(), out.Int16s(), depth)
		}
	case tensor.Int16:
		op.softmax16(in.Int16s(), out.Int16s(), depth)
	default:
		return kernel.Unsupported("SOFTMAX: input type %s", in.Type)
	}
	return nil
}

// actSoftmaxTable fills table with expf(scale*d) at index 255-d for d = 0..255
// (TFLite's PopulateSoftmaxLookupTable, scale being -input_scale*beta), so
// that table[255-max+x] is the exponential of x's distance from the row's max.
func actSoftmaxTable(table *[256]float32, scale float32) {
	for d := range 256 {
		table[255-d] = actExpf(scale * float32(d))
	}
}

// actSoftmaxOutputCheck enforces TFLite's fixed output quantization for
// INT8->INT8 (scale 1/256, zero point -128) and INT16->INT16 (scale 1/32768,
// zero point 0) softmax; the scale may be off by a thousandth.
func actSoftmaxOutputCheck(in, out *tensor.Tensor) error {
	var scale float32
	var zp int32
	switch {
	case in.Type == tensor.Int8 && out.Type == tensor.Int8:
		scale, zp = 1.0/256, -128
	case in.Type == tensor.Int16 && out.Type == tensor.Int16:
		scale, zp = 1.0/32768, 0
	default:
		return nil
	}
	if err := kernel.CheckQuantized(out); err != nil {
		return fmt.Errorf("SOFTMAX: %w", err)
	}
	delta := out.Scale() - scale
	if delta < 0 {
		delta = -delta
	}
	if out.ZeroPoint() != zp || delta > 0.001*scale {
		return fmt.Errorf("SOFTMAX: %s output needs scale %g and zero point %d, got %g and %d",
			out.Type, scale, zp, out.Scale(), out.ZeroPoint())
	}
	return nil
}

// actSoftmaxFloat is the float softmax of each row of depth values.
func actSoftmaxFloat(src, dst []float32, depth int, beta float32) {
	for start := 0; start+depth <= len(src); start += depth {
		row, res := src[start:start+depth], dst[start:start+depth]
		m := row[0]
		for _, v := range row[1:] {
			m = actMaxf(m, v)
		}
		var sum float64
		for i, v := range row {
			e := math.Exp(float64((v - m) * beta))
			res[i] = float32(e)
			sum += e
		}
		inv := 1 / sum
		for i, e := range res {
			res[i] = float32(float64(e) * inv)
		}
	}
}

// actSoftmax8 is TFLite's optimized quantized softmax for 8-bit inputs.
func actSoftmax8[In int8 | uint8, Out int8 | uint8 | int16](op *softmaxOp, src []In, dst []Out, depth int) {
	var zero Out
	_, isUint8 := any(zero).(uint8)
	var lo, hi int32
	switch any(zero).(type) {
	case uint8:
		lo, hi = 0, math.MaxUint8
	case int8:
		lo, hi = math.MinInt8, math.MaxInt8
	default:
		lo, hi = math.MinInt16, math.MaxInt16
	}
	zp := op.outZP
	for start := 0; start+depth <= len(src); start += depth {
		row, res := src[start:start+depth], dst[start:start+depth]
		m := int32(row[0])
		for _, v := range row[1:] {
			m = max(m, int32(v))
		}
		// table[255-(m-x)] is exp(-input_scale*beta*(m-x)).
		base := 255 - m
		var sum float32
		for _, v := range row {
			sum += op.table[base+int32(v)]
		}
		inv := 1 / (sum * op.outScale)
		for i, v := range row {
			p := float32(op.table[base+int32(v)] * inv) // rounded before the + 0.5
			var q int32
			if isUint8 {
				// TFLite's uint8 rounding ignores the zero point.
				q = kernel.CInt32(float64(p + 0.5))
			} else {
				q = kernel.CInt32(float64(kernel.Roundf(p))) + zp
			}
			res[i] = Out(kernel.Clamp(q, lo, hi))
		}
	}
}

// softmax16 is TFLite's SoftmaxInt16 (reference kernel).
func (op *softmaxOp) softmax16(src, dst []int16, depth int) {
	for start := 0; start+depth <= len(src); start += depth {
		row, res := src[start:start+depth], dst[start:start+depth]
		m := row[0]
		for _, v := range row[1:] {
			m = max(m, v)
		}
		// Cache exp(x-max) in Q0.15 in the output and sum it (Q16.15).
		var sum int32
		for i, v := range row {
			d := kernel.MultiplyByQuantizedMultiplier(int32(v)-int32(m), op.inMult, op.inShift)
			// Recenter [-65535, 0] to [-32768, 32767].
			e := actLUTLookup(int16(min(max(d+32767, math.MinInt16), math.MaxInt16)), op.expLUT[:])
			res[i] = e
			sum += int32(e)
		}
		// 1/sum via the 1/(1+x) table on the sum normalized to [1, 2).
		headroomPlusOne := bits.LeadingZeros32(uint32(sum))
		shifted := int32((int64(sum)<<(headroomPlusOne-1) + 1<<13) >> 14)
		symShifted := shifted - (1<<15 + 1<<16)
		recip := actLUTLookup(int16(min(max(symShifted, math.MinInt16), math.MaxInt16)), op.recipLUT[:])
		rightShift := 31 - headroomPlusOne
		round := int64(1) << (rightShift - 1)
		for i := range res {
			r := int32((int64(res[i])*int64(recip) + round) >> rightShift)
			res[i] = int16(min(max(r, 0), math.MaxInt16))
		}
	}
}

// rowLength is the length of the rows SOFTMAX and LOG_SOFTMAX normalise:
// the last dimension, or 1 for a scalar.
func rowLength(t *tensor.Tensor) int {
	if len(t.Shape) == 0 {
		return 1
	}
	return t.Shape[len(t.Shape)-1]
}
