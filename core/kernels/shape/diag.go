package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// matrixDiagOp is MATRIX_DIAG: each innermost row of the input becomes the
// diagonal of a square matrix of zeros (zero bytes, whatever the
// quantization, as in TFLite). TFLite 2.9 handles BOOL as 4-byte FLOAT32
// here, writing past its output; BOOL is refused.
type matrixDiagOp struct{}

func newMatrixDiagOp(kernel.OpInfo) (kernel.Op, error) { return matrixDiagOp{}, nil }

// Prepare checks the node and sets the output shape: the input's plus its
// last dimension again.
func (matrixDiagOp) Prepare(n *kernel.Node) error {
	const op = "MATRIX_DIAG"
	if err := shapeCheckArity(n, op, 1, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Int8, tensor.Int16); err != nil {
		return err
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if len(in.Shape) < 1 {
		return fmt.Errorf("%s: input is a scalar, want at least one dimension", op)
	}
	kernel.SetShape(out, append(append([]int(nil), in.Shape...), in.Shape[len(in.Shape)-1]))
	return nil
}

// Eval writes the diagonals.
func (matrixDiagOp) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	clear(out.Data)
	esize := in.Type.Size()
	d := in.Shape[len(in.Shape)-1]
	for b := range in.NumElements() / max(d, 1) {
		for i := range d {
			src := (b*d + i) * esize
			dst := ((b*d+i)*d + i) * esize
			copy(out.Data[dst:dst+esize], in.Data[src:src+esize])
		}
	}
	return nil
}

// matrixSetDiagOp is MATRIX_SET_DIAG: the input with the main diagonal of
// each innermost matrix replaced by a row of diag (input 1). BOOL is
// refused, as for MATRIX_DIAG.
type matrixSetDiagOp struct{}

func newMatrixSetDiagOp(kernel.OpInfo) (kernel.Op, error) { return matrixSetDiagOp{}, nil }

// Prepare checks the node; the output has the input's shape.
func (matrixSetDiagOp) Prepare(n *kernel.Node) error {
	const op = "MATRIX_SET_DIAG"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	in, diag, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Int8, tensor.Int16); err != nil {
		return err
	}
	if diag.Type != in.Type {
		return fmt.Errorf("%s: diagonal type %s differs from input type %s", op, diag.Type, in.Type)
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	r := len(in.Shape)
	if r < 2 {
		return fmt.Errorf("%s: input has shape %v, want at least two dimensions", op, in.Shape)
	}
	// TFLite reads the diagonals as one row of min(rows, cols) per matrix
	// without checking diag's shape; at least that many elements are needed.
	if want := tensor.NumElements(in.Shape[:r-2]) * min(in.Shape[r-2], in.Shape[r-1]); diag.NumElements() < want {
		return fmt.Errorf("%s: diagonal of shape %v is too small for input of shape %v", op, diag.Shape, in.Shape)
	}
	kernel.SetShape(out, in.Shape)
	return nil
}

// Eval copies the input and writes the diagonals.
func (matrixSetDiagOp) Eval(n *kernel.Node) error {
	in, diag, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	copy(out.Data, in.Data)
	esize := in.Type.Size()
	r := len(in.Shape)
	rows, cols := in.Shape[r-2], in.Shape[r-1]
	k := min(rows, cols)
	for b := range tensor.NumElements(in.Shape[:r-2]) {
		for i := range k {
			src := (b*k + i) * esize
			dst := ((b*rows+i)*cols + i) * esize
			copy(out.Data[dst:dst+esize], diag.Data[src:src+esize])
		}
	}
	return nil
}
