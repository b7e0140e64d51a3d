package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// transposeOp is TRANSPOSE: output dimension i is input dimension perm[i],
// perm being input 1 (INT32). TFLite 2.9 handles up to 5 dimensions.
type transposeOp struct {
	rank     int
	outDims  [shapeMaxDims]int
	inStride [shapeMaxDims]int // input stride (in elements) of each output dimension
	shape    []int
}

func newTransposeOp(kernel.OpInfo) (kernel.Op, error) { return &transposeOp{}, nil }

// plan validates perm and computes the output shape and strides.
func (o *transposeOp) plan(in, perm *tensor.Tensor) error {
	const op = "TRANSPOSE"
	rank := len(in.Shape)
	if len(perm.Shape) != 1 || perm.Shape[0] != rank {
		return fmt.Errorf("%s: perm has shape %v, want [%d]", op, perm.Shape, rank)
	}
	if len(perm.Data) < perm.Bytes() {
		return fmt.Errorf("%s: perm has no data", op)
	}
	var stride [shapeMaxDims]int
	s := 1
	for d := rank - 1; d >= 0; d-- {
		stride[d] = s
		s *= in.Shape[d]
	}
	var seen [shapeMaxDims]bool
	o.rank = rank
	o.shape = o.shape[:0]
	for i, p := range perm.Int32s()[:rank] {
		if p < 0 || int(p) >= rank {
			return fmt.Errorf("%s: perm %v out of bounds for rank %d", op, perm.Int32s()[:rank], rank)
		}
		if seen[p] {
			return fmt.Errorf("%s: perm %v repeats dimension %d", op, perm.Int32s()[:rank], p)
		}
		seen[p] = true
		o.outDims[i] = in.Shape[p]
		o.inStride[i] = stride[p]
		o.shape = append(o.shape, in.Shape[p])
	}
	return nil
}

// Prepare checks the node and sets the output shape, or marks it Dynamic
// when perm is not constant.
func (o *transposeOp) Prepare(n *kernel.Node) error {
	const op = "TRANSPOSE"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	in, perm, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if len(in.Shape) > shapeMaxDims {
		return kernel.Unsupported("%s: input rank %d (TFLite 2.9 supports 1D-5D)", op, len(in.Shape))
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int32, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Int64, tensor.Bool); err != nil {
		return err
	}
	if perm.Type != tensor.Int32 {
		return kernel.Unsupported("%s: perm type %s (want INT32)", op, perm.Type)
	}
	return shapeSizeOutput(out, perm.Const, func() ([]int, error) {
		if err := o.plan(in, perm); err != nil {
			return nil, err
		}
		return o.shape, nil
	})
}

// Eval permutes the elements.
func (o *transposeOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if !n.Inputs[1].Const {
		if err := o.plan(in, n.Inputs[1]); err != nil {
			return err
		}
		out.SetShape(o.shape)
	}
	if o.rank <= 1 || in.NumElements() == 0 {
		copy(out.Data, in.Data)
		return nil
	}
	switch in.Type.Size() {
	case 1:
		transposeT(o, out.Data, in.Data)
	case 2:
		transposeT(o, tensor.View[uint16](out.Data), tensor.View[uint16](in.Data))
	case 4:
		transposeT(o, tensor.View[uint32](out.Data), tensor.View[uint32](in.Data))
	case 8:
		transposeT(o, tensor.View[uint64](out.Data), tensor.View[uint64](in.Data))
	default:
		return kernel.Unsupported("TRANSPOSE: element type %s", in.Type)
	}
	return nil
}

// transposeT walks the output in order; the innermost output dimension
// reads the input with a fixed stride.
func transposeT[T any](o *transposeOp, dst, src []T) {
	last := o.rank - 1
	n, step := o.outDims[last], o.inStride[last]
	var idx [shapeMaxDims]int
	w := 0
	for {
		base := 0
		for d := range last {
			base += idx[d] * o.inStride[d]
		}
		row := dst[w : w+n]
		for i := range row {
			row[i] = src[base+i*step]
		}
		w += n
		d := last - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < o.outDims[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
