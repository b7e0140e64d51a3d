package shape

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

func newEmbeddingLookupSparseOp(info kernel.OpInfo) (kernel.Op, error) {
	o := &embeddingLookupSparseOp{combiner: schema.CombinerTypeSUM}
	tbl, ok, err := kernel.StrictOptions(info.Operator, "EMBEDDING_LOOKUP_SPARSE", schema.BuiltinOptionsEmbeddingLookupSparseOptions)
	if err != nil {
		return nil, err
	}
	if ok {
		var opts schema.EmbeddingLookupSparseOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.combiner = opts.Combiner()
	}
	switch o.combiner {
	case schema.CombinerTypeSUM, schema.CombinerTypeMEAN, schema.CombinerTypeSQRTN:
		return o, nil
	}
	return nil, kernel.Unsupported("EMBEDDING_LOOKUP_SPARSE: combiner %d", o.combiner)
}

// embeddingLookupSparseOp is EMBEDDING_LOOKUP_SPARSE (TFLite 2.9
// embedding_lookup_sparse.cc): a sparse tensor of ids, given as ids (INT32
// [n]), indices (INT32 [n][rank]) and its dense shape (INT32 [rank]), with
// weights (FLOAT32 [n]), looks up rows of the value table (FLOAT32, rank 2
// or more). Output row r (by the first rank-1 indices) combines the rows
// its ids pick, each times its weight: their sum (SUM), over the weights'
// sum (MEAN) or over the square root of their squares' sum (SQRTN). The
// output, [dense shape without its last value] + value's shape without its
// first, is dynamic (the dense shape is data), as in TFLite.
//
// The combination is TFLite's, in float32 and in the ids' order: the ids
// of one output row are combined while they come one after the other, and
// a row that comes back later is added to, then divided again. An id
// outside the table or an index outside the dense shape is an error (TFLite
// 2.9 writes past the output for the latter).
type embeddingLookupSparseOp struct {
	combiner schema.CombinerType
	shape    []int
}

// Prepare implements kernel.Op.
func (o *embeddingLookupSparseOp) Prepare(n *kernel.Node) error {
	const op = "EMBEDDING_LOOKUP_SPARSE"
	if err := shapeCheckArity(n, op, 5, 1); err != nil {
		return err
	}
	ids, indices, dense, weights, value, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3], n.Inputs[4], n.Outputs[0]
	for _, t := range []struct {
		name string
		t    *tensor.Tensor
		rank int
		typ  tensor.DType
	}{{"ids", ids, 1, tensor.Int32}, {"indices", indices, 2, tensor.Int32}, {"dense shape", dense, 1, tensor.Int32}, {"weights", weights, 1, tensor.Float32}} {
		if len(t.t.Shape) != t.rank {
			return fmt.Errorf("%s: %s %v must have rank %d", op, t.name, t.t.Shape, t.rank)
		}
		if err := shapeCheckType(op, t.name, t.t.Type, t.typ); err != nil {
			return err
		}
	}
	if indices.Shape[0] != ids.Shape[0] || weights.Shape[0] != ids.Shape[0] {
		return fmt.Errorf("%s: %d ids, indices %v and %d weights do not match", op, ids.Shape[0], indices.Shape, weights.Shape[0])
	}
	if indices.Shape[1] < 1 || dense.Shape[0] != indices.Shape[1] {
		return fmt.Errorf("%s: indices %v and dense shape of %d values, want the same rank, at least 1", op, indices.Shape, dense.Shape[0])
	}
	if len(value.Shape) < 2 {
		return fmt.Errorf("%s: value %v must have rank 2 or more", op, value.Shape)
	}
	if err := shapeCheckType(op, "value", value.Type, tensor.Float32); err != nil {
		return err
	}
	if err := shapeCheckType(op, "output", out.Type, tensor.Float32); err != nil {
		return err
	}
	out.Dynamic = true
	o.shape = kernel.Sized(o.shape, indices.Shape[1]-1+len(value.Shape)-1)
	return nil
}

// Eval implements kernel.Op.
func (o *embeddingLookupSparseOp) Eval(n *kernel.Node) error {
	const op = "EMBEDDING_LOOKUP_SPARSE"
	ids, indices, dense, weights, value, out := n.Inputs[0].Int32s(), n.Inputs[1].Int32s(), n.Inputs[2].Int32s(), n.Inputs[3].Float32s(), n.Inputs[4], n.Outputs[0]
	rank := len(dense)
	for i, d := range dense[:rank-1] {
		if d < 0 {
			return fmt.Errorf("%s: dense shape %v has a negative dimension", op, dense)
		}
		o.shape[i] = int(d)
	}
	copy(o.shape[rank-1:], value.Shape[1:])
	kernel.SetShape(out, o.shape)
	y, table := out.Float32s(), value.Float32s()
	clear(y)
	size, rows := tensor.NumElements(value.Shape[1:]), value.Shape[0]

	// The current output row, and what it has combined so far.
	row, count, total, squares := 0, 0, float32(0), float32(0)
	for i, id := range ids {
		if id < 0 || int(id) >= rows {
			return fmt.Errorf("%s: id %d (position %d) is outside the value's %d rows", op, id, i, rows)
		}
		r, stride := 0, 1
		for k := rank - 2; k >= 0; k-- {
			x := indices[i*rank+k]
			if x < 0 || x >= dense[k] {
				return fmt.Errorf("%s: index %d of id %d (position %d) is outside the dense shape %v", op, x, id, i, dense)
			}
			r += int(x) * stride
			stride *= int(dense[k])
		}
		if r != row {
			o.finish(y[row*size:(row+1)*size], count, total, squares)
			row, count, total, squares = r, 0, 0, 0
		}
		w := weights[i]
		count++
		total += w
		squares += float32(w * w)
		dst, src := y[r*size:(r+1)*size], table[int(id)*size:(int(id)+1)*size]
		for k, v := range src {
			dst[k] += float32(v * w)
		}
	}
	if len(y) > 0 {
		o.finish(y[row*size:(row+1)*size], count, total, squares)
	}
	return nil
}

// finish divides an output row that combined count rows as the combiner
// says: by their weights' sum (MEAN) or by the square root of their
// squares' sum (SQRTN), in float32.
func (o *embeddingLookupSparseOp) finish(dst []float32, count int, total, squares float32) {
	if o.combiner == schema.CombinerTypeSUM || count == 0 {
		return
	}
	d := total
	if o.combiner == schema.CombinerTypeSQRTN {
		d = float32(math.Sqrt(float64(squares)))
	}
	for k := range dst {
		dst[k] /= d
	}
}
