package reduce

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// This file holds TOPK_V2 (tensorflow/lite/kernels/topk_v2.cc).

// TopK is the kernel of TOPK_V2: the k largest values of each row (the last
// dimension) and their indices, largest first; equal values keep their
// order in the row, as TFLite's comparator (value, then lower index) does.
// A constant k sizes the outputs in Prepare; a k computed by the model makes
// them Dynamic, sized in every Eval.
type TopK struct {
	order []int32 // one row's indices, sorted
	shape []int   // the outputs' shape
}

func newTopK(kernel.OpInfo) (kernel.Op, error) { return &TopK{}, nil }

// Prepare checks the tensors and sizes the outputs when k is constant.
func (tk *TopK) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 2 || len(n.Outputs) != 2 {
		return fmt.Errorf("TOPK_V2: want 2 inputs and 2 outputs, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	if err := n.CheckPresent("TOPK_V2"); err != nil {
		return err
	}
	in, k, values, indices := n.Inputs[0], n.Inputs[1], n.Outputs[0], n.Outputs[1]
	switch in.Type {
	case tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int32, tensor.Int64:
	default:
		return kernel.Unsupported("TOPK_V2: input type %s (TFLite takes FLOAT32, UINT8, INT8, INT32 and INT64)", in.Type)
	}
	if values.Type != in.Type {
		return fmt.Errorf("TOPK_V2: values output type %s differs from input type %s", values.Type, in.Type)
	}
	if indices.Type != tensor.Int32 {
		return kernel.Unsupported("TOPK_V2: indices output type %s, want INT32", indices.Type)
	}
	if k.Type != tensor.Int32 {
		return kernel.Unsupported("TOPK_V2: k of type %s, want INT32", k.Type)
	}
	if len(in.Shape) == 0 {
		return fmt.Errorf("TOPK_V2: input must have at least 1 dimension")
	}
	if !k.Const {
		values.Dynamic, indices.Dynamic = true, true
		return nil
	}
	return tk.resize(in, k, values, indices)
}

// resize checks k and gives the outputs the input's shape with k last.
func (tk *TopK) resize(in, k, values, indices *tensor.Tensor) error {
	if k.NumElements() != 1 {
		return fmt.Errorf("TOPK_V2: k must hold one value, has %d", k.NumElements())
	}
	kv, last := int(k.Int32s()[0]), in.Shape[len(in.Shape)-1]
	if kv < 0 || kv > last {
		return fmt.Errorf("TOPK_V2: k = %d outside [0, %d], the size of the last dimension", kv, last)
	}
	tk.shape = append(tk.shape[:0], in.Shape...)
	tk.shape[len(tk.shape)-1] = kv
	kernel.SetShape(values, tk.shape)
	kernel.SetShape(indices, tk.shape)
	tk.order = kernel.Sized(tk.order, last)
	return nil
}

// Eval selects the top k of every row.
func (tk *TopK) Eval(n *kernel.Node) error {
	in, k, values, indices := n.Inputs[0], n.Inputs[1], n.Outputs[0], n.Outputs[1]
	if values.Dynamic {
		if err := tk.resize(in, k, values, indices); err != nil {
			return err
		}
	}
	kv := int(k.Int32s()[0])
	switch in.Type {
	case tensor.Float32:
		topK(tk.order, in.Float32s(), values.Float32s(), indices.Int32s(), kv)
	case tensor.Uint8:
		topK(tk.order, in.Uint8s(), values.Uint8s(), indices.Int32s(), kv)
	case tensor.Int8:
		topK(tk.order, in.Int8s(), values.Int8s(), indices.Int32s(), kv)
	case tensor.Int32:
		topK(tk.order, in.Int32s(), values.Int32s(), indices.Int32s(), kv)
	case tensor.Int64:
		topK(tk.order, in.Int64s(), values.Int64s(), indices.Int32s(), kv)
	}
	return nil
}

// topK keeps the k largest values of each row of src (len(order) long),
// largest first, equal values by index: TFLite's order, which its heap and
// this one agree on as it is total. NaN values have no place in it (TFLite's
// own result with NaN depends on its heap's steps).
func topK[T cmp.Ordered](order []int32, src, vals []T, idx []int32, k int) {
	rowSize := len(order)
	if rowSize == 0 || k == 0 {
		return
	}
	for r := range len(src) / rowSize {
		row := src[r*rowSize : r*rowSize+rowSize]
		// before reports whether element a comes before element b.
		before := func(a, b int32) bool {
			return row[a] > row[b] || (row[a] == row[b] && a < b)
		}
		// heap holds the best k seen so far, the last of them at the root.
		heap := order[:k]
		for i := range heap {
			heap[i] = int32(i)
			topKSiftUp(heap, i, before)
		}
		for c := int32(k); c < int32(rowSize); c++ {
			if before(c, heap[0]) {
				heap[0] = c
				topKSiftDown(heap, before)
			}
		}
		slices.SortFunc(heap, func(a, b int32) int {
			if before(a, b) {
				return -1
			}
			return 1 // indices differ, so the order is strict
		})
		outIdx, outVals := idx[r*k:r*k+k], vals[r*k:r*k+k]
		copy(outIdx, heap)
		for i, j := range outIdx {
			outVals[i] = row[j]
		}
	}
}

// topKSiftUp moves heap[i] up until its parent comes after it: the root is
// the element that comes last.
func topKSiftUp(heap []int32, i int, before func(a, b int32) bool) {
	for i > 0 {
		p := (i - 1) / 2
		if !before(heap[p], heap[i]) {
			return
		}
		heap[p], heap[i] = heap[i], heap[p]
		i = p
	}
}

// topKSiftDown moves the root down until both its children come before it.
func topKSiftDown(heap []int32, before func(a, b int32) bool) {
	i, n := 0, len(heap)
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < n && before(heap[worst], heap[l]) {
			worst = l
		}
		if r < n && before(heap[worst], heap[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		heap[i], heap[worst] = heap[worst], heap[i]
		i = worst
	}
}
