package reduce

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds UNIQUE (tensorflow/lite/kernels/unique.cc).

// UniqueParams are the options of UNIQUE (UniqueOptions).
type UniqueParams struct {
	IndexType tensor.DType // INT32 or INT64
}

// Unique is the kernel of UNIQUE: the distinct values of a vector in the
// order they first appear (a Dynamic output, sized in every Eval, as their
// number depends on the values) and, for each input, the position of its
// value among them. Values are equal when neither is less than the other,
// as in TFLite's std::map: 0 and -0 are one value.
type Unique struct {
	Params UniqueParams

	order []int32 // input positions sorted by value, then position
	first []int32 // for each position, the first position of its value
	ids   []int32 // for each first position, its value's output index
}

func newUnique(info kernel.OpInfo) (kernel.Op, error) {
	u := &Unique{Params: UniqueParams{IndexType: tensor.Int32}}
	tbl, ok := info.Options(schema.BuiltinOptionsUniqueOptions)
	switch {
	case ok:
		var o schema.UniqueOptions
		o.Init(tbl.Bytes, tbl.Pos)
		u.Params.IndexType = tensor.DType(o.IdxOutType())
	case info.Operator != nil:
		// TFLite 2.9 then has no index type, and fails in Eval.
		return nil, fmt.Errorf("UNIQUE: the operator has no UniqueOptions to give the index type")
	}
	if u.Params.IndexType != tensor.Int32 && u.Params.IndexType != tensor.Int64 {
		return nil, kernel.Unsupported("UNIQUE: index type %s (TFLite takes INT32 and INT64)", u.Params.IndexType)
	}
	return u, nil
}

// Prepare checks the tensors and sizes the index output; the values output
// is sized in Eval.
func (u *Unique) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 1 || len(n.Outputs) != 2 {
		return fmt.Errorf("UNIQUE: want 1 input and 2 outputs, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	if err := n.CheckPresent("UNIQUE"); err != nil {
		return err
	}
	in, values, index := n.Inputs[0], n.Outputs[0], n.Outputs[1]
	switch in.Type {
	case tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64:
	default:
		return kernel.Unsupported("UNIQUE: input type %s (TFLite takes FLOAT32, UINT8, INT8, INT16, INT32 and INT64)", in.Type)
	}
	if values.Type != in.Type {
		return fmt.Errorf("UNIQUE: values output type %s differs from input type %s", values.Type, in.Type)
	}
	if index.Type != u.Params.IndexType {
		return fmt.Errorf("UNIQUE: index output type %s differs from the options' %s", index.Type, u.Params.IndexType)
	}
	if len(in.Shape) != 1 {
		return fmt.Errorf("UNIQUE: input must be 1-D, has shape %v", in.Shape)
	}
	values.Dynamic = true
	kernel.SetShape(index, in.Shape)
	size := in.Shape[0]
	u.order = kernel.Sized(u.order, size)
	u.first = kernel.Sized(u.first, size)
	u.ids = kernel.Sized(u.ids, size)
	return nil
}

// Eval finds the distinct values and every input's index among them.
func (u *Unique) Eval(n *kernel.Node) error {
	in, values, index := n.Inputs[0], n.Outputs[0], n.Outputs[1]
	switch in.Type {
	case tensor.Float32:
		uniqueEval(u, in.Float32s(), values)
	case tensor.Uint8:
		uniqueEval(u, in.Uint8s(), values)
	case tensor.Int8:
		uniqueEval(u, in.Int8s(), values)
	case tensor.Int16:
		uniqueEval(u, in.Int16s(), values)
	case tensor.Int32:
		uniqueEval(u, in.Int32s(), values)
	case tensor.Int64:
		uniqueEval(u, in.Int64s(), values)
	}
	if index.Type == tensor.Int32 {
		dst := index.Int32s()
		for i, f := range u.first {
			dst[i] = u.ids[f]
		}
	} else {
		dst := index.Int64s()
		for i, f := range u.first {
			dst[i] = int64(u.ids[f])
		}
	}
	return nil
}

// uniqueEval sorts the positions of src by value (then position), finds
// each position's first occurrence of its value, numbers the distinct
// values in the order they first appear and writes them to values, sized to
// their count.
func uniqueEval[T cmp.Ordered](u *Unique, src []T, values *tensor.Tensor) {
	src = src[:len(u.order)]
	for i := range u.order {
		u.order[i] = int32(i)
	}
	slices.SortFunc(u.order, func(a, b int32) int {
		if src[a] < src[b] {
			return -1
		}
		if src[b] < src[a] {
			return 1
		}
		return cmp.Compare(a, b)
	})
	for i, p := range u.order {
		if i > 0 {
			q := u.order[i-1]
			if !(src[q] < src[p]) {
				u.first[p] = u.first[q] // the same value as the one before
				continue
			}
		}
		u.first[p] = p
	}
	count := 0
	for i, f := range u.first {
		if int(f) == i {
			u.ids[i] = int32(count)
			count++
		}
	}
	kernel.SetShape(values, []int{count})
	dst := tensor.View[T](values.Data)
	for i, f := range u.first {
		if int(f) == i {
			dst[u.ids[i]] = src[i]
		}
	}
}
