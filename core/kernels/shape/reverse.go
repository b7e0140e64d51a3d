package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// reverseOp is REVERSE_V2: the input with the order of its elements along
// one axis (input 1, an INT32 vector of one element) reversed.
//
// TFLite 2.9 reads only the first element of a longer axis vector and
// crashes on an empty one; both are refused here.
type reverseOp struct{}

func newReverseOp(kernel.OpInfo) (kernel.Op, error) { return reverseOp{}, nil }

// Prepare checks the node; the output has the input's shape.
func (reverseOp) Prepare(n *kernel.Node) error {
	const op = "REVERSE_V2"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	in, axis, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Bool); err != nil {
		return err
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if err := shapeCheckType(op, "axis", axis.Type, tensor.Int32); err != nil {
		return err
	}
	if len(axis.Shape) != 1 || axis.Shape[0] != 1 {
		return kernel.Unsupported("%s: axis of shape %v (only one axis is supported)", op, axis.Shape)
	}
	if axis.Const {
		if _, err := shapeNormAxis(op, int(axis.Int32s()[0]), len(in.Shape)); err != nil {
			return err
		}
	}
	kernel.SetShape(out, in.Shape)
	return nil
}

// Eval copies the slices along the axis in reverse order.
func (reverseOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	axis, err := shapeNormAxis("REVERSE_V2", int(n.Inputs[1].Int32s()[0]), len(in.Shape))
	if err != nil {
		return err
	}
	outer := tensor.NumElements(in.Shape[:axis])
	dim := in.Shape[axis]
	inner := tensor.NumElements(in.Shape[axis+1:]) * in.Type.Size()
	for o := range outer {
		base := o * dim * inner
		for j := range dim {
			s, d := base+j*inner, base+(dim-1-j)*inner
			copy(out.Data[d:d+inner], in.Data[s:s+inner])
		}
	}
	return nil
}

// reverseSequenceOp is REVERSE_SEQUENCE: for each position b along
// batch_dim, the first seq_lengths[b] elements along seq_dim reversed (a
// length of 1 or less leaves the row as it is).
type reverseSequenceOp struct{ seqDim, batchDim int }

func newReverseSequenceOp(info kernel.OpInfo) (kernel.Op, error) {
	o := &reverseSequenceOp{}
	if tbl, ok := info.Options(schema.BuiltinOptionsReverseSequenceOptions); ok {
		o.seqDim = int(tbl.GetInt32Slot(4, 0))
		o.batchDim = int(tbl.GetInt32Slot(6, 0))
	}
	return o, nil
}

// Prepare checks the node; the output has the input's shape.
func (o *reverseSequenceOp) Prepare(n *kernel.Node) error {
	const op = "REVERSE_SEQUENCE"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	in, lens, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Uint8); err != nil {
		return err
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if err := shapeCheckType(op, "seq_lengths", lens.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	rank := len(in.Shape)
	if o.seqDim < 0 || o.seqDim >= rank || o.batchDim < 0 || o.batchDim >= rank || o.seqDim == o.batchDim {
		return fmt.Errorf("%s: seq_dim %d and batch_dim %d must be distinct dimensions of the rank-%d input", op, o.seqDim, o.batchDim, rank)
	}
	if len(lens.Shape) != 1 || lens.Shape[0] != in.Shape[o.batchDim] {
		return fmt.Errorf("%s: seq_lengths has shape %v, want [%d]", op, lens.Shape, in.Shape[o.batchDim])
	}
	if lens.Const {
		if err := o.checkLengths(in, lens); err != nil {
			return err
		}
	}
	kernel.SetShape(out, in.Shape)
	return nil
}

// checkLengths rejects a sequence length beyond the seq_dim dimension.
func (o *reverseSequenceOp) checkLengths(in, lens *tensor.Tensor) error {
	for b := range lens.NumElements() {
		if l := shapeIntAt(lens, b); l > int64(in.Shape[o.seqDim]) {
			return fmt.Errorf("REVERSE_SEQUENCE: seq_lengths[%d] = %d exceeds dimension %d of size %d", b, l, o.seqDim, in.Shape[o.seqDim])
		}
	}
	return nil
}

// Eval copies each element from its mirrored position within its sequence.
func (o *reverseSequenceOp) Eval(n *kernel.Node) error {
	in, lens, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := o.checkLengths(in, lens); err != nil {
		return err
	}
	esize := in.Type.Size()
	seqStride := tensor.NumElements(in.Shape[o.seqDim+1:])
	batchStride := tensor.NumElements(in.Shape[o.batchDim+1:])
	seqN, batchN := in.Shape[o.seqDim], in.Shape[o.batchDim]
	for i := range in.NumElements() {
		s := (i / seqStride) % seqN
		l := int(shapeIntAt(lens, (i/batchStride)%batchN))
		src := i
		if s < l {
			src += (l - 1 - 2*s) * seqStride
		}
		copy(out.Data[i*esize:(i+1)*esize], in.Data[src*esize:(src+1)*esize])
	}
	return nil
}
