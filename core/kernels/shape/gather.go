package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// gatherParams are GATHER's options.
type gatherParams struct {
	Axis int
	// BatchDims is GatherOptions.batch_dims (TFLite 2.9 schema field 1,
	// absent from our older generated schema, so it is read from the table).
	BatchDims int
}

// gatherOp is GATHER: it picks slices of input 0 along Axis at the positions
// input 1 lists (INT32 or INT64), with BatchDims leading batch dimensions.
type gatherOp struct {
	p                                    gatherParams
	batch, outer, inner, coord, axisSize int // inner in bytes
}

func newGatherOp(info kernel.OpInfo) (kernel.Op, error) {
	var p gatherParams
	if tbl, ok := info.Options(schema.BuiltinOptionsGatherOptions); ok {
		p.Axis = int(tbl.GetInt32Slot(4, 0))
		p.BatchDims = int(tbl.GetInt32Slot(6, 0))
	}
	return &gatherOp{p: p}, nil
}

// Prepare checks types, axis and batch dimensions and sets the output shape
// (input dims before the axis, position dims after the batch dims, input
// dims after the axis).
func (o *gatherOp) Prepare(n *kernel.Node) error {
	const op = "GATHER"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	in, pos, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeCheckType(op, "positions", pos.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int64, tensor.Int32, tensor.Bool); err != nil {
		return err
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	axis, err := shapeNormAxis(op, o.p.Axis, len(in.Shape))
	if err != nil {
		return err
	}
	bd := o.p.BatchDims
	if bd < 0 {
		bd += len(pos.Shape)
	}
	if bd > axis || bd < 0 || bd >= len(in.Shape) || bd > len(pos.Shape) {
		return fmt.Errorf("%s: batch_dims %d invalid for axis %d, input rank %d, positions rank %d",
			op, o.p.BatchDims, axis, len(in.Shape), len(pos.Shape))
	}
	for i := range bd {
		if in.Shape[i] != pos.Shape[i] {
			return fmt.Errorf("%s: batch dimension %d differs: input %v, positions %v", op, i, in.Shape, pos.Shape)
		}
	}
	shape := make([]int, 0, len(in.Shape)+len(pos.Shape)-1-bd)
	shape = append(shape, in.Shape[:axis]...)
	shape = append(shape, pos.Shape[bd:]...)
	shape = append(shape, in.Shape[axis+1:]...)
	kernel.SetShape(out, shape)
	o.batch = tensor.NumElements(in.Shape[:bd])
	o.outer = tensor.NumElements(in.Shape[bd:axis])
	o.inner = tensor.NumElements(in.Shape[axis+1:]) * in.Type.Size()
	o.coord = tensor.NumElements(pos.Shape[bd:])
	o.axisSize = in.Shape[axis]
	return nil
}

// Eval checks every position (TFLite rejects negative ones; one past the
// axis would read outside the input, so it is an error here too) and copies.
func (o *gatherOp) Eval(n *kernel.Node) error {
	in, pos, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if pos.Type == tensor.Int64 {
		return gatherCopy(o, out.Data, in.Data, pos.Int64s())
	}
	return gatherCopy(o, out.Data, in.Data, pos.Int32s())
}

func gatherCopy[I int32 | int64](o *gatherOp, dst, src []byte, idx []I) error {
	for _, v := range idx {
		if v < 0 || int64(v) >= int64(o.axisSize) {
			return fmt.Errorf("GATHER: position %d out of range [0, %d)", v, o.axisSize)
		}
	}
	sz := o.inner
	d := 0
	for b := range o.batch {
		coords := idx[b*o.coord : (b+1)*o.coord]
		for k := range o.outer {
			base := (b*o.outer + k) * o.axisSize
			for _, v := range coords {
				s := (base + int(v)) * sz
				copy(dst[d:d+sz], src[s:s+sz])
				d += sz
			}
		}
	}
	return nil
}

// gatherNdOp is GATHER_ND: each innermost row of the indices (input 1)
// addresses a slice of the params (input 0).
type gatherNdOp struct {
	nSlices, slice, nd int // slice in bytes
	strides            [8]int
	dims               [8]int
}

func newGatherNdOp(kernel.OpInfo) (kernel.Op, error) { return &gatherNdOp{}, nil }

// Prepare checks the node and sets the output shape
// indices.shape[:-1] + params.shape[nd:].
func (o *gatherNdOp) Prepare(n *kernel.Node) error {
	const op = "GATHER_ND"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	params, indices, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeCheckType(op, "params", params.Type, tensor.Float32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int64, tensor.Int32); err != nil {
		return err
	}
	if err := shapeCheckType(op, "indices", indices.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if err := shapeSameType(op, params, out); err != nil {
		return err
	}
	pr, ir := len(params.Shape), len(indices.Shape)
	if pr < 1 {
		return fmt.Errorf("%s: params must be at least a vector", op)
	}
	if ir < 1 {
		return fmt.Errorf("%s: indices must be at least a vector", op)
	}
	nd := indices.Shape[ir-1]
	if nd > pr {
		return fmt.Errorf("%s: index depth %d exceeds params rank %d", op, nd, pr)
	}
	if nd > len(o.dims) {
		return kernel.Unsupported("%s: index depth %d", op, nd)
	}
	shape := make([]int, 0, ir+pr-nd-1)
	shape = append(shape, indices.Shape[:ir-1]...)
	shape = append(shape, params.Shape[nd:]...)
	kernel.SetShape(out, shape)
	o.nd = nd
	o.nSlices = tensor.NumElements(indices.Shape[:ir-1])
	o.slice = tensor.NumElements(params.Shape[nd:]) * params.Type.Size()
	for j := range nd {
		o.dims[j] = params.Shape[j]
		o.strides[j] = tensor.NumElements(params.Shape[j+1:])
	}
	return nil
}

// Eval checks the indices against the params' dimensions and copies.
func (o *gatherNdOp) Eval(n *kernel.Node) error {
	params, indices, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if !(params.NumElements() > 0 || indices.NumElements() == 0) {
		return fmt.Errorf("GATHER_ND: empty params %v with non-empty indices %v", params.Shape, indices.Shape)
	}
	if indices.Type == tensor.Int64 {
		return gatherNdCopy(o, out.Data, params.Data, indices.Int64s(), params.Type.Size())
	}
	return gatherNdCopy(o, out.Data, params.Data, indices.Int32s(), params.Type.Size())
}

func gatherNdCopy[I int32 | int64](o *gatherNdOp, dst, src []byte, idx []I, esize int) error {
	for _, v := range idx {
		if v < 0 {
			return fmt.Errorf("GATHER_ND: negative index %d", v)
		}
	}
	sz := o.slice
	for i := range o.nSlices {
		from := 0
		row := idx[i*o.nd : (i+1)*o.nd]
		for j, v := range row {
			if int64(v) >= int64(o.dims[j]) {
				return fmt.Errorf("GATHER_ND: index %d out of range [0, %d) in dimension %d", v, o.dims[j], j)
			}
			from += int(v) * o.strides[j]
		}
		from *= esize
		copy(dst[i*sz:(i+1)*sz], src[from:from+sz])
	}
	return nil
}
