package reduce

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// This file holds SEGMENT_SUM (tensorflow/lite/kernels/segment_sum.cc).

// SegmentSum is the kernel of SEGMENT_SUM: output row s is the sum of the
// data rows whose segment id is s. The ids start at 0 and step by 0 or 1, so
// the number of output rows is known only from their values: the output is
// sized in Prepare when both inputs are constant, else in every Eval.
type SegmentSum struct {
	shape []int // the output's shape
}

func newSegmentSum(kernel.OpInfo) (kernel.Op, error) { return &SegmentSum{}, nil }

// Prepare checks the types and sizes the output when the inputs are
// constant.
func (s *SegmentSum) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return fmt.Errorf("SEGMENT_SUM: want 2 inputs and 1 output, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	if err := n.CheckPresent("SEGMENT_SUM"); err != nil {
		return err
	}
	data, ids, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if data.Type != tensor.Int32 && data.Type != tensor.Float32 {
		return kernel.Unsupported("SEGMENT_SUM: data type %s (TFLite takes FLOAT32 and INT32)", data.Type)
	}
	if ids.Type != tensor.Int32 {
		return kernel.Unsupported("SEGMENT_SUM: segment ids of type %s, want INT32", ids.Type)
	}
	if out.Type != data.Type {
		return fmt.Errorf("SEGMENT_SUM: output type %s differs from data type %s", out.Type, data.Type)
	}
	if len(data.Shape) == 0 || len(ids.Shape) == 0 {
		return fmt.Errorf("SEGMENT_SUM: data and segment ids must have at least 1 dimension, have %d and %d", len(data.Shape), len(ids.Shape))
	}
	if !data.Const || !ids.Const {
		out.Dynamic = true
		return nil
	}
	return s.resize(data, ids, out)
}

// resize checks the segment ids and gives out its shape.
func (s *SegmentSum) resize(data, ids, out *tensor.Tensor) error {
	if ids.Shape[0] != data.Shape[0] {
		return fmt.Errorf("SEGMENT_SUM: %d segment ids for %d data rows", ids.Shape[0], data.Shape[0])
	}
	prev := int32(-1)
	for i, id := range ids.Int32s()[:ids.Shape[0]] {
		if (i == 0 && id != 0) || (i > 0 && id != prev && id != prev+1) {
			return fmt.Errorf("SEGMENT_SUM: segment id %d at %d: ids must start at 0 and grow by 0 or 1", id, i)
		}
		prev = id
	}
	s.shape = append(append(s.shape[:0], int(prev)+1), data.Shape[1:]...)
	kernel.SetShape(out, s.shape)
	return nil
}

// Eval sums the rows into their segments.
func (s *SegmentSum) Eval(n *kernel.Node) error {
	data, ids, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if out.Dynamic {
		if err := s.resize(data, ids, out); err != nil {
			return err
		}
	}
	if data.Type == tensor.Float32 {
		segmentSum(data.Float32s(), ids.Int32s(), out.Float32s(), data.Shape[0])
	} else {
		segmentSum(data.Int32s(), ids.Int32s(), out.Int32s(), data.Shape[0])
	}
	return nil
}

// segmentSum adds each of the rows of src to the row of dst its id names
// (integers wrap, as in TFLite).
func segmentSum[T int32 | float32](src []T, ids []int32, dst []T, rows int) {
	clear(dst)
	if rows == 0 {
		return
	}
	row := len(src) / rows
	for i := range rows {
		o := int(ids[i]) * row
		d := dst[o : o+row]
		for j, v := range src[i*row : i*row+row] {
			d[j] += v
		}
	}
}
