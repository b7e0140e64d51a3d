package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// scatterNdOp is SCATTER_ND: a zeroed tensor of the shape input 2 lists
// into which the slices of updates (input 1) are added at the positions
// indices (input 0, INT32) name; duplicate positions sum.
//
// TFLite 2.9 writes outside its output for an out-of-range index; that is
// an error here.
type scatterNdOp struct {
	shape []int
}

func newScatterNdOp(kernel.OpInfo) (kernel.Op, error) { return &scatterNdOp{}, nil }

// Prepare checks the node and sizes the output when the shape is constant,
// or marks it Dynamic.
func (o *scatterNdOp) Prepare(n *kernel.Node) error {
	const op = "SCATTER_ND"
	if err := shapeCheckArity(n, op, 3, 1); err != nil {
		return err
	}
	idx, upd, shape, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if err := shapeCheckType(op, "indices", idx.Type, tensor.Int32); err != nil {
		return err
	}
	if shape.Type != idx.Type {
		return fmt.Errorf("%s: shape type %s differs from indices type %s", op, shape.Type, idx.Type)
	}
	if err := shapeCheckType(op, "updates", upd.Type, tensor.Float32, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Int8); err != nil {
		return err
	}
	if err := shapeSameType(op, upd, out); err != nil {
		return err
	}
	if len(shape.Shape) != 1 || len(idx.Shape) < 1 {
		return fmt.Errorf("%s: shape %v must be a vector and indices %v at least one", op, shape.Shape, idx.Shape)
	}
	return shapeSizeOutput(out, shape.Const, func() ([]int, error) { return o.resolve(idx, upd, shape) })
}

// resolve reads the output shape and checks that updates fit indices and it.
func (o *scatterNdOp) resolve(idx, upd, shape *tensor.Tensor) ([]int, error) {
	const op = "SCATTER_ND"
	o.shape = o.shape[:0]
	for i := range shape.NumElements() {
		v := shapeIntAt(shape, i)
		if v < 0 {
			return nil, fmt.Errorf("%s: shape %v has a negative dimension", op, shape.Int32s())
		}
		o.shape = append(o.shape, int(v))
	}
	outer := len(idx.Shape) - 1
	k := idx.Shape[outer]
	ok := len(upd.Shape) >= outer && len(upd.Shape)-outer == len(o.shape)-k
	for i := 0; ok && i < outer; i++ {
		ok = upd.Shape[i] == idx.Shape[i]
	}
	for i := 0; ok && i < len(upd.Shape)-outer; i++ {
		ok = upd.Shape[outer+i] == o.shape[k+i]
	}
	if !ok {
		return nil, fmt.Errorf("%s: updates of shape %v do not fit indices of shape %v into shape %v", op, upd.Shape, idx.Shape, o.shape)
	}
	return o.shape, nil
}

// Eval sizes a Dynamic output, zeroes it and adds the updates.
func (o *scatterNdOp) Eval(n *kernel.Node) error {
	idx, upd, shape, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if out.Dynamic {
		s, err := o.resolve(idx, upd, shape)
		if err != nil {
			return err
		}
		out.SetShape(s)
	}
	clear(out.Data)
	k := idx.Shape[len(idx.Shape)-1]
	slice := tensor.NumElements(out.Shape[k:])
	count := tensor.NumElements(idx.Shape[:len(idx.Shape)-1])
	if slice == 0 || count == 0 {
		return nil
	}
	ix := idx.Int32s()
	for i := range count {
		off, err := ndOffset(ix[i*k:(i+1)*k], out.Shape, "SCATTER_ND")
		if err != nil {
			return err
		}
		lo, src := off*slice, i*slice
		switch out.Type {
		case tensor.Float32:
			scatterAdd(out.Float32s()[lo:lo+slice], upd.Float32s()[src:src+slice])
		case tensor.Int32:
			scatterAdd(out.Int32s()[lo:lo+slice], upd.Int32s()[src:src+slice])
		case tensor.Int64:
			scatterAdd(out.Int64s()[lo:lo+slice], upd.Int64s()[src:src+slice])
		case tensor.Int8:
			scatterAdd(out.Int8s()[lo:lo+slice], upd.Int8s()[src:src+slice])
		default:
			scatterAdd(out.Uint8s()[lo:lo+slice], upd.Uint8s()[src:src+slice])
		}
	}
	return nil
}

// scatterAdd adds src into dst element by element (wrapping, as C++ does).
func scatterAdd[T float32 | int32 | int64 | int8 | uint8](dst, src []T) {
	for i, v := range src {
		dst[i] += v
	}
}

// ndOffset is the row-major offset, in units of the slice below len(index)
// dimensions, of index within shape; an index out of range is an error.
func ndOffset[T int32 | int64](index []T, shape []int, op string) (int, error) {
	off := 0
	for d, v := range index {
		if v < 0 || int64(v) >= int64(shape[d]) {
			return 0, fmt.Errorf("%s: index %v out of range for shape %v", op, index, shape)
		}
		off = off*shape[d] + int(v)
	}
	return off, nil
}

// sparseToDenseMaxDims is TFLite 2.9's rank limit for SPARSE_TO_DENSE.
const sparseToDenseMaxDims = 4

// sparseToDenseOp is SPARSE_TO_DENSE: a tensor of the shape input 1 lists,
// filled with default_value (input 3) except at the positions indices
// (input 0) lists, which get values (input 2: one per index, or a scalar
// for all). Later indices overwrite earlier ones; validate_indices is not
// enforced, as in TFLite.
//
// TFLite 2.9 reads an unset index count for 0-D indices and writes outside
// its output for out-of-range indices; both are refused here.
type sparseToDenseOp struct {
	shape []int
}

func newSparseToDenseOp(kernel.OpInfo) (kernel.Op, error) { return &sparseToDenseOp{}, nil }

// Prepare checks the node and sizes the output when the shape is constant,
// or marks it Dynamic.
func (o *sparseToDenseOp) Prepare(n *kernel.Node) error {
	const op = "SPARSE_TO_DENSE"
	if err := shapeCheckArity(n, op, 4, 1); err != nil {
		return err
	}
	idx, shape, vals, def, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3], n.Outputs[0]
	if err := shapeCheckType(op, "indices", idx.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if err := shapeCheckType(op, "output shape", shape.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if err := shapeCheckType(op, "values", vals.Type, tensor.Int32, tensor.Int64, tensor.Int8, tensor.Uint8, tensor.Float32); err != nil {
		return err
	}
	if def.Type != vals.Type {
		return fmt.Errorf("%s: default value type %s differs from values type %s", op, def.Type, vals.Type)
	}
	if err := shapeSameType(op, vals, out); err != nil {
		return err
	}
	if def.NumElements() != 1 {
		return fmt.Errorf("%s: default value has shape %v, want one element", op, def.Shape)
	}
	if len(idx.Shape) == 0 {
		return kernel.Unsupported("%s: scalar indices", op)
	}
	if len(idx.Shape) > 2 || len(shape.Shape) != 1 || len(vals.Shape) > 1 {
		return fmt.Errorf("%s: indices %v, output shape %v and values %v: want at most 2, exactly 1 and at most 1 dimensions",
			op, idx.Shape, shape.Shape, vals.Shape)
	}
	rank := 1
	if len(idx.Shape) == 2 {
		rank = idx.Shape[1]
	}
	if shape.NumElements() != rank || rank > sparseToDenseMaxDims {
		return fmt.Errorf("%s: indices of shape %v for an output of %d dimensions (at most %d)", op, idx.Shape, shape.NumElements(), sparseToDenseMaxDims)
	}
	num := idx.Shape[0]
	if (len(vals.Shape) == 0 && num != 1) || (len(vals.Shape) == 1 && vals.Shape[0] < num) {
		return fmt.Errorf("%s: %d indices for values of shape %v", op, num, vals.Shape)
	}
	return shapeSizeOutput(out, shape.Const, func() ([]int, error) { return o.resolve(shape) })
}

// resolve reads the output shape.
func (o *sparseToDenseOp) resolve(shape *tensor.Tensor) ([]int, error) {
	o.shape = o.shape[:0]
	for i := range shape.NumElements() {
		v := shapeIntAt(shape, i)
		if v < 0 {
			return nil, fmt.Errorf("SPARSE_TO_DENSE: output shape has a negative dimension %d", v)
		}
		o.shape = append(o.shape, int(v))
	}
	return o.shape, nil
}

// Eval sizes a Dynamic output, fills it with the default and writes the
// values.
func (o *sparseToDenseOp) Eval(n *kernel.Node) error {
	idx, shape, vals, def, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3], n.Outputs[0]
	if out.Dynamic {
		s, err := o.resolve(shape)
		if err != nil {
			return err
		}
		out.SetShape(s)
	}
	esize := out.Type.Size()
	for i := 0; i < len(out.Data); i += esize {
		copy(out.Data[i:i+esize], def.Data[:esize])
	}
	rank := len(out.Shape)
	for i := range idx.Shape[0] {
		var off int
		var err error
		if idx.Type == tensor.Int64 {
			off, err = ndOffset(idx.Int64s()[i*rank:(i+1)*rank], out.Shape, "SPARSE_TO_DENSE")
		} else {
			off, err = ndOffset(idx.Int32s()[i*rank:(i+1)*rank], out.Shape, "SPARSE_TO_DENSE")
		}
		if err != nil {
			return err
		}
		src := i
		if len(vals.Shape) == 0 {
			src = 0
		}
		copy(out.Data[off*esize:(off+1)*esize], vals.Data[src*esize:(src+1)*esize])
	}
	return nil
}

// dynamicUpdateSliceOp is DYNAMIC_UPDATE_SLICE: operand (input 0) with
// update (input 1) written over it at start_indices (input 2, INT32), each
// start clamped so that the update stays inside.
type dynamicUpdateSliceOp struct{}

func newDynamicUpdateSliceOp(kernel.OpInfo) (kernel.Op, error) { return dynamicUpdateSliceOp{}, nil }

// Prepare checks the node; the output has the operand's shape.
func (dynamicUpdateSliceOp) Prepare(n *kernel.Node) error {
	const op = "DYNAMIC_UPDATE_SLICE"
	if err := shapeCheckArity(n, op, 3, 1); err != nil {
		return err
	}
	in, upd, start, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if err := shapeCheckType(op, "operand", in.Type, tensor.Float32, tensor.Int8, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if upd.Type != in.Type {
		return fmt.Errorf("%s: update type %s differs from operand type %s", op, upd.Type, in.Type)
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if err := shapeCheckType(op, "start indices", start.Type, tensor.Int32); err != nil {
		return err
	}
	if len(start.Shape) != 1 || start.Shape[0] != len(in.Shape) {
		return fmt.Errorf("%s: start indices of shape %v for an operand of rank %d", op, start.Shape, len(in.Shape))
	}
	if len(upd.Shape) != len(in.Shape) {
		return fmt.Errorf("%s: update rank %d differs from operand rank %d", op, len(upd.Shape), len(in.Shape))
	}
	for d := range in.Shape {
		if upd.Shape[d] > in.Shape[d] {
			return fmt.Errorf("%s: update shape %v exceeds operand shape %v", op, upd.Shape, in.Shape)
		}
	}
	kernel.SetShape(out, in.Shape)
	return nil
}

// Eval copies the operand, then the update's rows at the clamped start.
func (dynamicUpdateSliceOp) Eval(n *kernel.Node) error {
	in, upd, start, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	copy(out.Data, in.Data)
	if upd.NumElements() == 0 {
		return nil
	}
	esize := in.Type.Size()
	rank := len(in.Shape)
	if rank == 0 {
		copy(out.Data[:esize], upd.Data[:esize])
		return nil
	}
	starts := start.Int32s()
	rows := upd.NumElements() / upd.Shape[rank-1]
	row := upd.Shape[rank-1] * esize
	for r := range rows {
		// The operand offset of update row r: its index in each dimension
		// plus the clamped start.
		off, rem := 0, r
		stride := 1
		for d := rank - 1; d >= 0; d-- {
			s := int(min(max(starts[d], 0), int32(in.Shape[d]-upd.Shape[d])))
			i := 0
			if d < rank-1 {
				i = rem % upd.Shape[d]
				rem /= upd.Shape[d]
			}
			off += (s + i) * stride
			stride *= in.Shape[d]
		}
		copy(out.Data[off*esize:off*esize+row], upd.Data[r*row:(r+1)*row])
	}
	return nil
}
