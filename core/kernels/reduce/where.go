package reduce

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// This file holds WHERE (tensorflow/lite/kernels/where.cc).

// Where is the kernel of WHERE with one input: the coordinates of the true
// (non-zero) elements of the condition, in row-major order, as an INT64
// [count, rank] tensor. Its size depends on the values: a constant condition
// sizes it in Prepare, any other makes it Dynamic, sized in every Eval.
type Where struct{}

func newWhere(kernel.OpInfo) (kernel.Op, error) { return &Where{}, nil }

// Prepare checks the tensors and sizes the output of a constant condition.
func (w *Where) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 1 || len(n.Outputs) != 1 {
		return fmt.Errorf("WHERE: want 1 input and 1 output, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	if err := n.CheckPresent("WHERE"); err != nil {
		return err
	}
	cond, out := n.Inputs[0], n.Outputs[0]
	switch cond.Type {
	case tensor.Bool, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int32, tensor.Uint32, tensor.Int64:
	default:
		// TFLite 2.9 accepts other types but leaves the output unwritten.
		return kernel.Unsupported("WHERE: condition type %s (TFLite takes BOOL, FLOAT32, UINT8, INT8, INT32, UINT32 and INT64)", cond.Type)
	}
	if out.Type != tensor.Int64 {
		return kernel.Unsupported("WHERE: output type %s, want INT64", out.Type)
	}
	if len(cond.Shape) == 0 {
		return fmt.Errorf("WHERE: the condition must have at least 1 dimension (TFLite 2.9 fails on a scalar)")
	}
	if !cond.Const {
		out.Dynamic = true
		return nil
	}
	kernel.SetShape(out, []int{whereScan(cond, nil), len(cond.Shape)})
	return nil
}

// Eval writes the coordinates of the true elements.
func (w *Where) Eval(n *kernel.Node) error {
	cond, out := n.Inputs[0], n.Outputs[0]
	if out.Dynamic {
		kernel.SetShape(out, []int{whereScan(cond, nil), len(cond.Shape)})
	}
	whereScan(cond, out.Int64s())
	return nil
}

// whereScan counts the non-zero elements of cond and, unless dst is nil,
// writes their coordinates there.
func whereScan(cond *tensor.Tensor, dst []int64) int {
	switch cond.Type {
	case tensor.Bool:
		return whereCoords(cond.Shape, cond.Bools(), dst, func(v bool) bool { return v })
	case tensor.Float32:
		return whereCoords(cond.Shape, cond.Float32s(), dst, func(v float32) bool { return v != 0 })
	case tensor.Uint8:
		return whereCoords(cond.Shape, cond.Uint8s(), dst, func(v uint8) bool { return v != 0 })
	case tensor.Int8:
		return whereCoords(cond.Shape, cond.Int8s(), dst, func(v int8) bool { return v != 0 })
	case tensor.Int32:
		return whereCoords(cond.Shape, cond.Int32s(), dst, func(v int32) bool { return v != 0 })
	case tensor.Uint32:
		return whereCoords(cond.Shape, cond.Uint32s(), dst, func(v uint32) bool { return v != 0 })
	default: // INT64
		return whereCoords(cond.Shape, cond.Int64s(), dst, func(v int64) bool { return v != 0 })
	}
}

// whereCoords counts the elements of src for which isTrue holds and, unless
// dst is nil, writes their row-major coordinates there.
func whereCoords[T any](shape []int, src []T, dst []int64, isTrue func(T) bool) int {
	rank, count := len(shape), 0
	for i, v := range src[:tensor.NumElements(shape)] {
		if !isTrue(v) {
			continue
		}
		if dst != nil {
			o, rem := count*rank, i
			for d := rank - 1; d >= 0; d-- {
				dst[o+d] = int64(rem % shape[d])
				rem /= shape[d]
			}
		}
		count++
	}
	return count
}
