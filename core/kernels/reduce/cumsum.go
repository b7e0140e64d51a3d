package reduce

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file holds CUMSUM (tensorflow/lite/kernels/cumsum.cc).

// CumsumParams are the options of CUMSUM (CumsumOptions).
type CumsumParams struct {
	Exclusive bool // each output leaves out its own input
	Reverse   bool // sum from the end of the axis
}

// Cumsum is the kernel of CUMSUM: running sums along one axis, given as a
// one-element INT32 tensor read in Eval (TFLite reports a bad axis there).
type Cumsum struct {
	Params CumsumParams
}

func newCumsum(info kernel.OpInfo) (kernel.Op, error) {
	c := &Cumsum{}
	if tbl, ok := info.Options(schema.BuiltinOptionsCumsumOptions); ok {
		var o schema.CumsumOptions
		o.Init(tbl.Bytes, tbl.Pos)
		c.Params = CumsumParams{Exclusive: o.Exclusive(), Reverse: o.Reverse()}
	}
	return c, nil
}

// Prepare checks the tensors; the output has the input's shape.
func (c *Cumsum) Prepare(n *kernel.Node) error {
	if len(n.Inputs) != 2 || len(n.Outputs) != 1 {
		return fmt.Errorf("CUMSUM: want 2 inputs and 1 output, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	if err := n.CheckPresent("CUMSUM"); err != nil {
		return err
	}
	in, axis, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	switch in.Type {
	case tensor.Float32, tensor.Int32, tensor.Int64:
	default:
		return kernel.Unsupported("CUMSUM: input type %s (TFLite takes FLOAT32, INT32 and INT64)", in.Type)
	}
	if out.Type != in.Type {
		return fmt.Errorf("CUMSUM: output type %s differs from input type %s", out.Type, in.Type)
	}
	if axis.Type != tensor.Int32 || axis.NumElements() != 1 {
		return fmt.Errorf("CUMSUM: axis must be one INT32, have %s of shape %v", axis.Type, axis.Shape)
	}
	if len(in.Shape) == 0 {
		return fmt.Errorf("CUMSUM: input must have at least 1 dimension")
	}
	kernel.SetShape(out, in.Shape)
	return nil
}

// Eval computes the running sums.
func (c *Cumsum) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	nd := len(in.Shape)
	axis := int(n.Inputs[1].Int32s()[0])
	if axis < 0 {
		axis += nd
	}
	if axis < 0 || axis >= nd {
		return fmt.Errorf("CUMSUM: axis %d out of range for %d-D input", n.Inputs[1].Int32s()[0], nd)
	}
	outer, inner := 1, 1
	for _, d := range in.Shape[:axis] {
		outer *= d
	}
	for _, d := range in.Shape[axis+1:] {
		inner *= d
	}
	dims := [3]int{outer, in.Shape[axis], inner}
	switch in.Type {
	case tensor.Float32:
		cumsum(in.Float32s(), out.Float32s(), dims, c.Params)
	case tensor.Int32:
		cumsum(in.Int32s(), out.Int32s(), dims, c.Params)
	case tensor.Int64:
		cumsum(in.Int64s(), out.Int64s(), dims, c.Params)
	}
	return nil
}

// cumsum sums src along the middle of dims (outer, axis, inner), in order
// along the axis (integers wrap).
func cumsum[T float32 | int32 | int64](src, dst []T, dims [3]int, p CumsumParams) {
	outer, n, inner := dims[0], dims[1], dims[2]
	for o := range outer {
		base := o * n * inner
		for i := range inner {
			var acc T
			for s := range n {
				k := s
				if p.Reverse {
					k = n - 1 - s
				}
				at := base + k*inner + i
				if p.Exclusive {
					dst[at] = acc
					acc += src[at]
				} else {
					acc += src[at]
					dst[at] = acc
				}
			}
		}
	}
}
