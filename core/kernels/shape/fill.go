package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// fillOp is FILL: an output of the shape input 0 lists (INT32 or INT64),
// every element equal to the scalar input 1.
type fillOp struct{ shape []int }

func newFillOp(kernel.OpInfo) (kernel.Op, error) { return &fillOp{}, nil }

// resolve reads the dims tensor into o.shape.
func (o *fillOp) resolve(dims *tensor.Tensor) ([]int, error) {
	if err := shapeCheckIntTensor("FILL", "dims", dims); err != nil {
		return nil, err
	}
	o.shape = o.shape[:0]
	for i := range dims.NumElements() {
		v := shapeIntAt(dims, i)
		if v < 0 {
			return nil, fmt.Errorf("FILL: dimensions must be >= 0, got %d", v)
		}
		o.shape = append(o.shape, int(v))
	}
	return o.shape, nil
}

// Prepare checks the node and sets the output shape, or marks it Dynamic
// when the dims are not constant.
func (o *fillOp) Prepare(n *kernel.Node) error {
	const op = "FILL"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	dims, value, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if len(dims.Shape) != 1 {
		return fmt.Errorf("%s: dims has shape %v, want a vector", op, dims.Shape)
	}
	if err := shapeCheckType(op, "dims", dims.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if len(value.Shape) != 0 {
		return fmt.Errorf("%s: value has shape %v, want a scalar", op, value.Shape)
	}
	if err := shapeCheckType(op, "value", value.Type, tensor.Int8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Float32, tensor.Bool); err != nil {
		return err
	}
	if err := shapeSameType(op, value, out); err != nil {
		return err
	}
	if !shapeSameQuant(value, out) {
		return fmt.Errorf("%s: output quantization (%g, %d) differs from the value's (%g, %d)",
			op, out.Scale(), out.ZeroPoint(), value.Scale(), value.ZeroPoint())
	}
	if value.Type == tensor.Int16 && value.ZeroPoint() != 0 {
		return fmt.Errorf("%s: INT16 value has zero point %d, want 0", op, value.ZeroPoint())
	}
	return shapeSizeOutput(out, dims.Const, func() ([]int, error) { return o.resolve(dims) })
}

// Eval replicates the value.
func (o *fillOp) Eval(n *kernel.Node) error {
	dims, value, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if !dims.Const {
		shape, err := o.resolve(dims)
		if err != nil {
			return err
		}
		out.SetShape(shape)
	}
	dst := out.Data
	if len(dst) == 0 {
		return nil
	}
	filled := copy(dst, value.Data[:value.Type.Size()])
	for filled < len(dst) {
		filled += copy(dst[filled:], dst[:filled])
	}
	return nil
}

// tileOp is TILE: the input repeated multipliers[d] times along each
// dimension d, multipliers being input 1 (INT32 or INT64).
type tileOp struct {
	shape []int
	mult  []int
}

func newTileOp(kernel.OpInfo) (kernel.Op, error) { return &tileOp{}, nil }

// resolve reads the multipliers and computes the output shape.
func (o *tileOp) resolve(in, multT *tensor.Tensor) ([]int, error) {
	const op = "TILE"
	if err := shapeCheckIntTensor(op, "multipliers", multT); err != nil {
		return nil, err
	}
	if multT.NumElements() != len(in.Shape) {
		return nil, fmt.Errorf("%s: %d multipliers for an input of rank %d", op, multT.NumElements(), len(in.Shape))
	}
	o.shape = o.shape[:0]
	o.mult = o.mult[:0]
	for d, dim := range in.Shape {
		m := shapeIntAt(multT, d)
		if m < 0 {
			return nil, fmt.Errorf("%s: negative multiplier %d for dimension %d", op, m, d)
		}
		o.mult = append(o.mult, int(m))
		o.shape = append(o.shape, dim*int(m))
	}
	return o.shape, nil
}

// Prepare checks the node and sets the output shape, or marks it Dynamic
// when the multipliers are not constant.
func (o *tileOp) Prepare(n *kernel.Node) error {
	const op = "TILE"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	in, multT, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if err := shapeCheckType(op, "multipliers", multT.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64, tensor.Bool); err != nil {
		return err
	}
	return shapeSizeOutput(out, multT.Const, func() ([]int, error) { return o.resolve(in, multT) })
}

// Eval tiles the input.
func (o *tileOp) Eval(n *kernel.Node) error {
	in, multT, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if !multT.Const {
		shape, err := o.resolve(in, multT)
		if err != nil {
			return err
		}
		out.SetShape(shape)
	}
	if out.NumElements() == 0 {
		return nil
	}
	esize := in.Type.Size()
	if len(in.Shape) == 0 {
		copy(out.Data[:esize], in.Data[:esize])
		return nil
	}
	tileDim(out.Data, in.Data, in.Shape, o.mult, 0, esize)
	return nil
}

// tileDim tiles the block of dimensions d.. found at src into dst and
// returns the bytes it read and wrote: each inner block is tiled first, then
// the result is repeated mult[d] times.
func tileDim(dst, src []byte, dims, mult []int, d, esize int) (read, written int) {
	if d == len(dims)-1 {
		row := dims[d] * esize
		for m := range mult[d] {
			copy(dst[m*row:(m+1)*row], src[:row])
		}
		return row, row * mult[d]
	}
	for range dims[d] {
		r, w := tileDim(dst[written:], src[read:], dims, mult, d+1, esize)
		read += r
		written += w
	}
	for m := 1; m < mult[d]; m++ {
		copy(dst[m*written:(m+1)*written], dst[:written])
	}
	return read, written * mult[d]
}
