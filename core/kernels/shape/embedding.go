package shape

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// embeddingOps registers EMBEDDING_LOOKUP and EMBEDDING_LOOKUP_SPARSE
// (embedding_sparse.go) at the versions TFLite 2.9 does.
func embeddingOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorEMBEDDING_LOOKUP, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8}, Main: 1, New: newEmbeddingLookupOp},
		{Code: schema.BuiltinOperatorEMBEDDING_LOOKUP_SPARSE, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, Main: 4, New: newEmbeddingLookupSparseOp},
	}
}

// embeddingLookupOp is EMBEDDING_LOOKUP (TFLite 2.9 embedding_lookup.cc):
// inputs ids (INT32, 1-D) and a table (FLOAT32, UINT8 or INT8, rank 2 or
// more); output row i is table row ids[i], so its shape is the table's
// with the first dimension len(ids). An id outside the table is an error.
//
// With a UINT8 or INT8 table and a FLOAT32 output (the hybrid kernel) the
// rows are dequantized as TFLite 2.9 does: each byte read as int8 (a UINT8
// table too) times the table's scale in double precision, the zero point
// ignored.
type embeddingLookupOp struct {
	hybrid bool
	row    int // elements in a table row
}

func newEmbeddingLookupOp(kernel.OpInfo) (kernel.Op, error) { return &embeddingLookupOp{}, nil }

func (o *embeddingLookupOp) Prepare(n *kernel.Node) error {
	const op = "EMBEDDING_LOOKUP"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	ids, table, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeCheckType(op, "ids", ids.Type, tensor.Int32); err != nil {
		return err
	}
	if len(ids.Shape) != 1 {
		return fmt.Errorf("%s: ids %v must be 1-D", op, ids.Shape)
	}
	if len(table.Shape) < 2 {
		return fmt.Errorf("%s: table %v must have rank 2 or more", op, table.Shape)
	}
	if err := shapeCheckType(op, "table", table.Type, tensor.Float32, tensor.Uint8, tensor.Int8); err != nil {
		return err
	}
	o.hybrid = table.Type != tensor.Float32 && out.Type == tensor.Float32
	if !o.hybrid {
		if err := shapeSameType(op, table, out); err != nil {
			return err
		}
	} else if !table.Quantized() {
		return fmt.Errorf("%s: %s table %q is not quantized", op, table.Type, table.Name)
	}
	o.row = tensor.NumElements(table.Shape[1:])
	shape := append([]int{ids.Shape[0]}, table.Shape[1:]...)
	kernel.SetShape(out, shape)
	return nil
}

func (o *embeddingLookupOp) Eval(n *kernel.Node) error {
	ids, table, out := n.Inputs[0].Int32s(), n.Inputs[1], n.Outputs[0]
	rows := table.Shape[0]
	for i, id := range ids {
		if id < 0 || int(id) >= rows {
			return fmt.Errorf("EMBEDDING_LOOKUP: id %d (position %d) is outside the table's %d rows", id, i, rows)
		}
	}
	if o.hybrid {
		scale := float64(table.Scale())
		src, dst := table.Data, out.Float32s()
		for i, id := range ids {
			row := src[int(id)*o.row : (int(id)+1)*o.row]
			for j, b := range row {
				dst[i*o.row+j] = float32(float64(int8(b)) * scale)
			}
		}
		return nil
	}
	bytes := o.row * table.Type.Size()
	for i, id := range ids {
		copy(out.Data[i*bytes:(i+1)*bytes], table.Data[int(id)*bytes:(int(id)+1)*bytes])
	}
	return nil
}
