package quantize

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/tensor"
)

// NumericVerify is TFLite 2.9's default custom op of that name
// (numeric_verify.cc), which the converter's debug mode puts after a
// quantized tensor to compare it with the float model's tensor.
//
// Input 0 is the quantized tensor (UINT8, INT8, INT16 or FLOAT16), input 1
// the FLOAT32 reference; output 0 (FLOAT32, of input 0's shape) is the
// difference dequantized - reference, element by element. The input is
// dequantized as DEQUANTIZE does it (UINT8 and INT8 may be per-channel), but
// with any zero point for INT16, and without quantization as all zeros.
//
// The options are a FlexBuffers map: tolerance (float) and log_if_failed
// (bool); a missing key reads as 0 / false. When log_if_failed is set and
// the tolerance is at least 0.1, Eval fails at the first element whose
// |difference| exceeds tolerance*scale (in single precision), scale being
// TFLite's legacy one: the input's scale when it has exactly one, else 0.
// Otherwise it only outputs the differences (TFLite then also logs their
// statistics).
//
// Where delego differs from TFLite 2.9: a node without custom options is
// refused (TFLite reads them past the end of an empty buffer), so is a
// reference with fewer elements than the input (TFLite reads past its end),
// and so is a non-FLOAT32 output (TFLite retypes it). TFLite computes the
// output of a constant input only on the first Invoke and keeps it; delego
// computes it on every Eval.
const numericVerifyName = "NumericVerify"

type numericVerifyOp struct {
	deq       dequantizeOp
	tolerance float32
	// check: the options ask Eval to fail beyond the tolerance.
	check   bool
	scale   float32 // TFLite's legacy scale of input 0
	maxDiff float32
}

func newNumericVerifyOp(info kernel.OpInfo) (kernel.Op, error) {
	if info.Operator == nil {
		return &numericVerifyOp{}, nil // no model: tolerance 0, no check
	}
	buf := info.Operator.CustomOptionsBytes()
	if len(buf) == 0 {
		return nil, fmt.Errorf("%s: no custom options (a FlexBuffers map with tolerance and log_if_failed)", numericVerifyName)
	}
	root, err := flexbuf.Parse(buf)
	if err == nil && root.Type() != flexbuf.Map {
		err = fmt.Errorf("a FlexBuffers %d, not a map: %w", root.Type(), flexbuf.ErrMalformed)
	}
	var m flexbuf.Mapping
	if err == nil {
		m, err = root.Map()
	}
	if err != nil {
		return nil, fmt.Errorf("%s options: %w", numericVerifyName, err)
	}
	op := &numericVerifyOp{}
	tol, err := m.Get("tolerance")
	var t float64
	if err == nil {
		t, err = tol.Float()
	}
	if err != nil {
		return nil, fmt.Errorf("%s option tolerance: %w", numericVerifyName, err)
	}
	op.tolerance = float32(t)
	logIf, err := m.Get("log_if_failed")
	var logIfFailed bool
	if err == nil {
		logIfFailed, err = logIf.Bool()
	}
	if err != nil {
		return nil, fmt.Errorf("%s option log_if_failed: %w", numericVerifyName, err)
	}
	// TFLite compares the float tolerance with the double 0.1.
	op.check = logIfFailed && float64(op.tolerance) >= 0.1
	return op, nil
}

func (op *numericVerifyOp) Prepare(n *kernel.Node) error {
	if err := kernel.CheckArity(n, numericVerifyName, 2, 1); err != nil {
		return err
	}
	in, ref, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	switch in.Type {
	case tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Float16:
	default:
		return kernel.Unsupported("%s: input type %s", numericVerifyName, in.Type)
	}
	if ref.Type != tensor.Float32 {
		return kernel.Unsupported("%s: reference (input 1) type %s", numericVerifyName, ref.Type)
	}
	if out.Type != tensor.Float32 {
		return fmt.Errorf("%s: output type must be FLOAT32, got %s", numericVerifyName, out.Type)
	}
	if nin, nref := tensor.NumElements(in.Shape), tensor.NumElements(ref.Shape); nref < nin {
		return fmt.Errorf("%s: the reference has %d elements, fewer than the input's %d", numericVerifyName, nref, nin)
	}
	if err := op.deq.setParams(numericVerifyName, in); err != nil {
		return err
	}
	op.scale = 0
	if q := in.Quant; q != nil && len(q.Scale) == 1 && len(q.ZeroPoint) == 1 {
		op.scale = q.Scale[0]
	}
	op.maxDiff = op.tolerance * op.scale
	out.Shape = append(out.Shape[:0], in.Shape...)
	return nil
}

func (op *numericVerifyOp) Eval(n *kernel.Node) error {
	in, ref, out := n.Inputs[0], n.Inputs[1].Float32s(), n.Outputs[0].Float32s()
	out = out[:tensor.NumElements(in.Shape)]
	op.deq.dequantize(in, out)
	for i, r := range ref[:len(out)] {
		dq := out[i]
		out[i] = dq - r
		if op.check && float32(math.Abs(float64(out[i]))) > op.maxDiff {
			return fmt.Errorf("%s: element %d, %s %g dequantized to %g, differs from the reference %g by more than %g (tolerance %g times scale %g)",
				numericVerifyName, i, in.Type, quantizedAt(in, i), dq, r, op.maxDiff, op.tolerance, op.scale)
		}
	}
	return nil
}

// quantizedAt returns element i of a UINT8, INT8, INT16 or FLOAT16 tensor,
// for messages.
func quantizedAt(t *tensor.Tensor, i int) float64 {
	switch t.Type {
	case tensor.Uint8:
		return float64(t.Uint8s()[i])
	case tensor.Int8:
		return float64(t.Int8s()[i])
	case tensor.Int16:
		return float64(t.Int16s()[i])
	case tensor.Float16:
		return float64(tensor.Float16ToFloat32(tensor.View[uint16](t.Data)[i]))
	}
	return math.NaN()
}
