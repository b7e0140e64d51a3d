package shape

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// This file registers the ops that generate values or move them by index
// (TensorFlow Lite 2.9's rank, range, one_hot, reverse, reverse_sequence,
// broadcast_to, broadcast_args, matrix_diag, matrix_set_diag, scatter_nd,
// sparse_to_dense and dynamic_update_slice kernels), with the versions and
// element types 2.9 accepts, as testdata/gen/shape/shape_tflite29_gen.py
// recorded them from the real library.

// generateOps returns the registrations of these ops.
func generateOps() []kernel.Registration {
	v := func(lo, hi int) tensor.VersionRange { return tensor.VersionRange{Min: lo, Max: hi} }
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorRANK, Versions: v(1, 1), Types: kernel.AllTypes(), New: newRankOp},
		{Code: schema.BuiltinOperatorRANGE, Versions: v(1, 1), Types: []tensor.DType{tensor.Float32, tensor.Int32}, New: newRangeOp},
		{Code: schema.BuiltinOperatorONE_HOT, Versions: v(1, 1), Types: []tensor.DType{tensor.Int32, tensor.Int64}, New: newOneHotOp},
		{Code: schema.BuiltinOperatorREVERSE_V2, Versions: v(1, 3), Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64, tensor.Bool}, New: newReverseOp},
		{Code: schema.BuiltinOperatorREVERSE_SEQUENCE, Versions: v(1, 1), Types: []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newReverseSequenceOp},
		{Code: schema.BuiltinOperatorBROADCAST_TO, Versions: v(2, 3), Types: []tensor.DType{tensor.Float32, tensor.Float16, tensor.Float64, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Uint16, tensor.Int32, tensor.Uint32, tensor.Int64, tensor.Uint64, tensor.Bool, tensor.Complex64, tensor.Complex128}, New: newBroadcastToOp},
		{Code: schema.BuiltinOperatorBROADCAST_ARGS, Versions: v(1, 1), Types: []tensor.DType{tensor.Int32, tensor.Int64}, New: newBroadcastArgsOp},
		{Code: schema.BuiltinOperatorMATRIX_DIAG, Versions: v(1, 1), Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newMatrixDiagOp},
		{Code: schema.BuiltinOperatorMATRIX_SET_DIAG, Versions: v(1, 1), Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16, tensor.Int32, tensor.Int64}, New: newMatrixSetDiagOp},
		{Code: schema.BuiltinOperatorSCATTER_ND, Versions: v(1, 1), Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64}, Main: 1, New: newScatterNdOp},
		{Code: schema.BuiltinOperatorSPARSE_TO_DENSE, Versions: v(1, 3), Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int32, tensor.Int64}, Main: 2, New: newSparseToDenseOp},
		{Code: schema.BuiltinOperatorDYNAMIC_UPDATE_SLICE, Versions: v(1, 1), Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Int32, tensor.Int64}, New: newDynamicUpdateSliceOp},
	}
}

// ---- RANK ----

// rankOp is RANK: the input's number of dimensions as an INT32 scalar.
type rankOp struct{}

func newRankOp(kernel.OpInfo) (kernel.Op, error) { return rankOp{}, nil }

// Prepare checks the node and makes the output an INT32 scalar.
func (rankOp) Prepare(n *kernel.Node) error {
	const op = "RANK"
	if err := shapeCheckArity(n, op, 1, 1); err != nil {
		return err
	}
	if err := shapeCheckType(op, "output", n.Outputs[0].Type, tensor.Int32); err != nil {
		return err
	}
	kernel.SetShape(n.Outputs[0], nil)
	return nil
}

// Eval writes the rank.
func (rankOp) Eval(n *kernel.Node) error {
	n.Outputs[0].Int32s()[0] = int32(len(n.Inputs[0].Shape))
	return nil
}

// ---- RANGE ----

// rangeOp is RANGE: start, start+delta, ... up to (not including) limit,
// the three scalar inputs being all INT32 or all FLOAT32. Like TFLite, it
// accumulates: element i is element i-1 plus delta.
type rangeOp struct{ shape [1]int }

func newRangeOp(kernel.OpInfo) (kernel.Op, error) { return &rangeOp{}, nil }

// Prepare checks the node and sizes the output when the inputs are
// constant, or marks it Dynamic.
func (o *rangeOp) Prepare(n *kernel.Node) error {
	const op = "RANGE"
	if err := shapeCheckArity(n, op, 3, 1); err != nil {
		return err
	}
	start, out := n.Inputs[0], n.Outputs[0]
	for i, name := range []string{"start", "limit", "delta"} {
		t := n.Inputs[i]
		if len(t.Shape) != 0 {
			return fmt.Errorf("%s: %s has shape %v, want a scalar", op, name, t.Shape)
		}
		if t.Type != start.Type {
			return fmt.Errorf("%s: %s type %s differs from start type %s", op, name, t.Type, start.Type)
		}
	}
	if err := shapeCheckType(op, "input", start.Type, tensor.Int32, tensor.Float32); err != nil {
		return err
	}
	if err := shapeSameType(op, start, out); err != nil {
		return err
	}
	constant := start.Const && n.Inputs[1].Const && n.Inputs[2].Const
	return shapeSizeOutput(out, constant, func() ([]int, error) { return o.size(n) })
}

// size computes the output length as TFLite does, rejecting a zero delta or
// one that leads away from limit.
func (o *rangeOp) size(n *kernel.Node) ([]int, error) {
	const op = "RANGE"
	var size float64
	var ok bool
	if n.Inputs[0].Type == tensor.Int32 {
		s, l, d := int64(n.Inputs[0].Int32s()[0]), int64(n.Inputs[1].Int32s()[0]), int64(n.Inputs[2].Int32s()[0])
		ok = (s >= l && d < 0) || (s <= l && d > 0)
		if ok {
			ad := max(d, -d)
			size = float64((max(l-s, s-l) + ad - 1) / ad)
		}
	} else {
		s, l, d := n.Inputs[0].Float32s()[0], n.Inputs[1].Float32s()[0], n.Inputs[2].Float32s()[0]
		ok = (s >= l && d < 0) || (s <= l && d > 0)
		if ok {
			q := (l - s) / d
			size = math.Ceil(float64(float32(math.Abs(float64(q)))))
		}
	}
	if !ok {
		return nil, fmt.Errorf("%s: delta must be non-zero and lead from start to limit", op)
	}
	if size > math.MaxInt32 {
		return nil, fmt.Errorf("%s: %g elements is too many", op, size)
	}
	o.shape[0] = int(size)
	return o.shape[:], nil
}

// Eval sizes a Dynamic output and fills it.
func (o *rangeOp) Eval(n *kernel.Node) error {
	out := n.Outputs[0]
	if out.Dynamic {
		shape, err := o.size(n)
		if err != nil {
			return err
		}
		out.SetShape(shape)
	}
	if out.Type == tensor.Int32 {
		rangeFill(out.Int32s(), n.Inputs[0].Int32s()[0], n.Inputs[2].Int32s()[0])
	} else {
		rangeFill(out.Float32s(), n.Inputs[0].Float32s()[0], n.Inputs[2].Float32s()[0])
	}
	return nil
}

// rangeFill writes start, start+delta, ... into dst by repeated addition.
func rangeFill[T int32 | float32](dst []T, start, delta T) {
	v := start
	for i := range dst {
		dst[i] = v
		v += delta
	}
}

// ---- ONE_HOT ----

// oneHotOp is ONE_HOT: an output with one more dimension than the indices
// (INT32 or INT64), of size depth (an INT32 scalar) at Axis, holding on
// where the index equals the position along Axis and off elsewhere.
type oneHotOp struct {
	axis  int // -1: last
	shape []int
}

func newOneHotOp(info kernel.OpInfo) (kernel.Op, error) {
	o := &oneHotOp{axis: -1}
	if tbl, ok := info.Options(schema.BuiltinOptionsOneHotOptions); ok {
		o.axis = int(tbl.GetInt32Slot(4, 0))
	}
	return o, nil
}

// resolvedAxis is the axis the output gains for indices of the rank.
func (o *oneHotOp) resolvedAxis(rank int) int {
	if o.axis == -1 {
		return rank
	}
	return o.axis
}

// Prepare checks the node and sizes the output when depth is constant, or
// marks it Dynamic.
func (o *oneHotOp) Prepare(n *kernel.Node) error {
	const op = "ONE_HOT"
	if err := shapeCheckArity(n, op, 4, 1); err != nil {
		return err
	}
	idx, depth, on, off, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3], n.Outputs[0]
	if err := shapeCheckType(op, "value", on.Type, tensor.Float32, tensor.Int32, tensor.Int64, tensor.Int8, tensor.Uint8, tensor.Bool); err != nil {
		return err
	}
	if off.Type != on.Type {
		return fmt.Errorf("%s: off value type %s differs from on value type %s", op, off.Type, on.Type)
	}
	if err := shapeSameType(op, on, out); err != nil {
		return err
	}
	if err := shapeCheckType(op, "indices", idx.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if err := shapeCheckType(op, "depth", depth.Type, tensor.Int32); err != nil {
		return err
	}
	if a := o.resolvedAxis(len(idx.Shape)); a < 0 || a > len(idx.Shape) {
		return fmt.Errorf("%s: axis %d out of range for indices of rank %d", op, o.axis, len(idx.Shape))
	}
	for _, t := range []*tensor.Tensor{depth, on, off} {
		if t.NumElements() != 1 {
			return fmt.Errorf("%s: depth, on and off values must have one element, got shape %v", op, t.Shape)
		}
	}
	return shapeSizeOutput(out, depth.Const, func() ([]int, error) { return o.resolve(idx, depth) })
}

// resolve computes the output shape.
func (o *oneHotOp) resolve(idx, depth *tensor.Tensor) ([]int, error) {
	d := int(depth.Int32s()[0])
	if d < 0 {
		return nil, fmt.Errorf("ONE_HOT: depth %d is negative", d)
	}
	axis := o.resolvedAxis(len(idx.Shape))
	o.shape = append(o.shape[:0], idx.Shape[:axis]...)
	o.shape = append(o.shape, d)
	o.shape = append(o.shape, idx.Shape[axis:]...)
	return o.shape, nil
}

// Eval sizes a Dynamic output and writes on and off values.
func (o *oneHotOp) Eval(n *kernel.Node) error {
	idx, depth, on, off, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Inputs[3], n.Outputs[0]
	if out.Dynamic {
		shape, err := o.resolve(idx, depth)
		if err != nil {
			return err
		}
		out.SetShape(shape)
	}
	axis := o.resolvedAxis(len(idx.Shape))
	prefix := tensor.NumElements(idx.Shape[:axis])
	if prefix == 0 {
		return nil
	}
	suffix := idx.NumElements() / prefix
	d := int(depth.Int32s()[0])
	esize := out.Type.Size()
	onB, offB := on.Data[:esize], off.Data[:esize]
	dst := out.Data
	for i := range prefix {
		for j := range d {
			for k := range suffix {
				var v int32 // TFLite compares the index cast to int
				if idx.Type == tensor.Int64 {
					v = int32(idx.Int64s()[i*suffix+k])
				} else {
					v = idx.Int32s()[i*suffix+k]
				}
				src := offB
				if int(v) == j {
					src = onB
				}
				dst = dst[copy(dst, src):]
			}
		}
	}
	return nil
}

// ---- BROADCAST_TO and BROADCAST_ARGS ----

// broadcastMaxDims is the rank limit of TFLite 2.9's BROADCAST_TO.
const broadcastMaxDims = 8

// broadcastToOp is BROADCAST_TO: the input repeated along its size-1 (or
// missing leading) dimensions to the shape input 1 lists (INT32 or INT64).
type broadcastToOp struct {
	rank  int
	in    [broadcastMaxDims]int // input dims, padded with leading 1s to rank
	shape []int
}

func newBroadcastToOp(kernel.OpInfo) (kernel.Op, error) { return &broadcastToOp{}, nil }

// Prepare checks the node and sizes the output when the shape is constant,
// or marks it Dynamic.
func (o *broadcastToOp) Prepare(n *kernel.Node) error {
	const op = "BROADCAST_TO"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	in, shape, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if _, err := shapeElemSize(op, in.Type); err != nil {
		return err
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if len(in.Shape) > broadcastMaxDims {
		return fmt.Errorf("%s: input rank %d exceeds %d", op, len(in.Shape), broadcastMaxDims)
	}
	if len(shape.Shape) != 1 {
		return fmt.Errorf("%s: shape has shape %v, want a vector", op, shape.Shape)
	}
	if err := shapeCheckType(op, "shape", shape.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	return shapeSizeOutput(out, shape.Const, func() ([]int, error) { return o.resolve(in, shape) })
}

// resolve reads the target shape and checks that the input broadcasts to it.
func (o *broadcastToOp) resolve(in, shape *tensor.Tensor) ([]int, error) {
	const op = "BROADCAST_TO"
	rank := shape.NumElements()
	if rank > broadcastMaxDims || rank < len(in.Shape) {
		return nil, fmt.Errorf("%s: cannot broadcast shape %v to %d dimensions (at most %d)", op, in.Shape, rank, broadcastMaxDims)
	}
	o.rank = rank
	o.shape = o.shape[:0]
	lead := rank - len(in.Shape)
	for d := range rank {
		v := shapeIntAt(shape, d)
		o.in[d] = 1
		if d >= lead {
			o.in[d] = in.Shape[d-lead]
		}
		if v < 0 || (o.in[d] != 1 && int64(o.in[d]) != v) {
			return nil, fmt.Errorf("%s: input shape %v does not broadcast to dimension %d of size %d", op, in.Shape, d, v)
		}
		o.shape = append(o.shape, int(v))
	}
	return o.shape, nil
}

// Eval sizes a Dynamic output and broadcasts the input into it.
func (o *broadcastToOp) Eval(n *kernel.Node) error {
	in, shape, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if out.Dynamic {
		s, err := o.resolve(in, shape)
		if err != nil {
			return err
		}
		out.SetShape(s)
	}
	esize := in.Type.Size()
	if out.NumElements() == 0 {
		return nil
	}
	if o.rank == 0 {
		copy(out.Data[:esize], in.Data[:esize])
		return nil
	}
	broadcastDim(out.Data, in.Data, o.in[:o.rank], out.Shape, 0, esize)
	return nil
}

// broadcastDim writes the block of output dimensions d.. from the input
// block at src (whose dims are in, 1 where the output repeats) and returns
// the bytes written.
func broadcastDim(dst, src []byte, in, out []int, d, esize int) int {
	if d == len(out)-1 {
		if in[d] == 1 {
			for i := range out[d] {
				copy(dst[i*esize:(i+1)*esize], src[:esize])
			}
		} else {
			copy(dst[:out[d]*esize], src[:out[d]*esize])
		}
		return out[d] * esize
	}
	inner := esize * tensor.NumElements(in[d+1:])
	written := 0
	for i := range in[d] {
		written += broadcastDim(dst[written:], src[i*inner:], in, out, d+1, esize)
	}
	if in[d] == 1 {
		for m := 1; m < out[d]; m++ {
			copy(dst[m*written:(m+1)*written], dst[:written])
		}
		written *= out[d]
	}
	return written
}

// broadcastArgsOp is BROADCAST_ARGS: the shape two shapes (INT32 or INT64
// vectors) broadcast to.
type broadcastArgsOp struct{}

func newBroadcastArgsOp(kernel.OpInfo) (kernel.Op, error) { return broadcastArgsOp{}, nil }

// Prepare checks the node and sizes the output: as long as the longer
// shape.
func (broadcastArgsOp) Prepare(n *kernel.Node) error {
	const op = "BROADCAST_ARGS"
	if err := shapeCheckArity(n, op, 2, 1); err != nil {
		return err
	}
	a, b, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	if err := shapeCheckType(op, "shape", a.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if b.Type != a.Type {
		return fmt.Errorf("%s: shape types %s and %s differ", op, a.Type, b.Type)
	}
	if err := shapeSameType(op, a, out); err != nil {
		return err
	}
	if len(a.Shape) != 1 || len(b.Shape) != 1 {
		return fmt.Errorf("%s: shapes %v and %v, want vectors", op, a.Shape, b.Shape)
	}
	kernel.SetShape(out, []int{max(a.Shape[0], b.Shape[0])})
	return nil
}

// Eval broadcasts the shapes, aligned at their ends.
func (broadcastArgsOp) Eval(n *kernel.Node) error {
	a, b, out := n.Inputs[0], n.Inputs[1], n.Outputs[0]
	na, nb, no := a.NumElements(), b.NumElements(), out.NumElements()
	for i := range no {
		x, y := int64(1), int64(1)
		if j := i - (no - na); j >= 0 {
			x = shapeIntAt(a, j)
		}
		if j := i - (no - nb); j >= 0 {
			y = shapeIntAt(b, j)
		}
		v := x
		switch {
		case x == y || y == 1:
		case x == 1:
			v = y
		default:
			return fmt.Errorf("BROADCAST_ARGS: dimensions %d and %d do not broadcast", x, y)
		}
		if out.Type == tensor.Int64 {
			out.Int64s()[i] = v
		} else {
			out.Int32s()[i] = int32(v)
		}
	}
	return nil
}
