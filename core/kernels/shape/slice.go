package shape

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// shapeBox selects, along each dimension d of a row-major tensor of shape
// Dims[:Rank], the Count[d] indices Start[d] + i*Step[d].
type shapeBox struct {
	Rank                     int
	Dims, Start, Count, Step [shapeMaxDims]int
}

// empty reports whether the box selects no element.
func (b *shapeBox) empty() bool {
	for d := range b.Rank {
		if b.Count[d] <= 0 {
			return true
		}
	}
	return false
}

// copyTo writes the selected elements of src, in row-major order of the box,
// to dst; esize is the element size in bytes. Runs along the innermost
// dimension are single copies when its step is 1.
func (b *shapeBox) copyTo(dst, src []byte, esize int) {
	if b.Rank == 0 {
		copy(dst[:esize], src[:esize])
		return
	}
	if b.empty() {
		return
	}
	var stride [shapeMaxDims]int
	s := 1
	for d := b.Rank - 1; d >= 0; d-- {
		stride[d] = s
		s *= b.Dims[d]
	}
	last := b.Rank - 1
	n, step := b.Count[last], b.Step[last]
	var idx [shapeMaxDims]int
	o := 0
	for {
		base := b.Start[last]
		for d := range last {
			base += (b.Start[d] + idx[d]*b.Step[d]) * stride[d]
		}
		if step == 1 {
			nb := n * esize
			copy(dst[o:o+nb], src[base*esize:base*esize+nb])
			o += nb
		} else {
			shapeGatherStrided(dst[o:o+n*esize], src, esize, base, step, n)
			o += n * esize
		}
		d := last - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < b.Count[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// shapeGatherStrided copies n elements of esize bytes from src, starting at
// element first and stepping by step elements, into dst.
func shapeGatherStrided(dst, src []byte, esize, first, step, n int) {
	switch esize {
	case 1:
		for i := range n {
			dst[i] = src[first+i*step]
		}
	case 2:
		shapeGatherStridedT(tensor.View[uint16](dst), tensor.View[uint16](src), first, step, n)
	case 4:
		shapeGatherStridedT(tensor.View[uint32](dst), tensor.View[uint32](src), first, step, n)
	case 8:
		shapeGatherStridedT(tensor.View[uint64](dst), tensor.View[uint64](src), first, step, n)
	default:
		for i := range n {
			p := (first + i*step) * esize
			copy(dst[i*esize:(i+1)*esize], src[p:p+esize])
		}
	}
}

func shapeGatherStridedT[T any](dst, src []T, first, step, n int) {
	for i := range n {
		dst[i] = src[first+i*step]
	}
}

// sliceBox is what SLICE and STRIDED_SLICE share: the box of the input
// they copy and the output shape, planned in Prepare when the index inputs
// are constant and in every Eval otherwise.
type sliceBox struct {
	box   shapeBox
	shape []int
}

// slicePlanner is SLICE or STRIDED_SLICE: plan fills its sliceBox from the
// index inputs.
type slicePlanner interface {
	constInputs(n *kernel.Node) bool
	plan(n *kernel.Node) error
}

// prepare ends Prepare: it sizes the output, or marks it Dynamic.
func (s *sliceBox) prepare(o slicePlanner, n *kernel.Node) error {
	return shapeSizeOutput(n.Outputs[0], o.constInputs(n), func() ([]int, error) {
		if err := o.plan(n); err != nil {
			return nil, err
		}
		return s.shape, nil
	})
}

// eval copies the box, planning it and sizing the output first when the
// index inputs are not constant.
func (s *sliceBox) eval(o slicePlanner, n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	if !o.constInputs(n) {
		if err := o.plan(n); err != nil {
			return err
		}
		out.SetShape(s.shape)
	}
	s.box.copyTo(out.Data, in.Data, in.Type.Size())
	return nil
}

// sliceOp is SLICE: input 1 gives the begin index and input 2 the size of
// each dimension (INT32 or INT64; a size of -1 means "to the end").
type sliceOp struct{ sliceBox }

func newSliceOp(kernel.OpInfo) (kernel.Op, error) { return &sliceOp{}, nil }

// plan reads begin and size and fills o.box and o.shape.
func (o *sliceOp) plan(n *kernel.Node) error {
	const op = "SLICE"
	in, begin, size := n.Inputs[0], n.Inputs[1], n.Inputs[2]
	if err := shapeCheckIntTensor(op, "begin", begin); err != nil {
		return err
	}
	if err := shapeCheckIntTensor(op, "size", size); err != nil {
		return err
	}
	o.box.Rank = len(in.Shape)
	o.shape = o.shape[:0]
	for d, dim := range in.Shape {
		b, s := shapeIntAt(begin, d), shapeIntAt(size, d)
		if b < 0 || b > int64(dim) {
			return fmt.Errorf("%s: begin %d out of range for dimension %d of size %d", op, b, d, dim)
		}
		if s < 0 {
			if s != -1 {
				return fmt.Errorf("%s: invalid size %d for dimension %d", op, s, d)
			}
			s = int64(dim) - b
		} else if int64(dim) < b+s {
			return fmt.Errorf("%s: begin %d + size %d exceed dimension %d of size %d", op, b, s, d, dim)
		}
		o.box.Dims[d], o.box.Start[d], o.box.Count[d], o.box.Step[d] = dim, int(b), int(s), 1
		o.shape = append(o.shape, int(s))
	}
	return nil
}

func (o *sliceOp) constInputs(n *kernel.Node) bool { return n.Inputs[1].Const && n.Inputs[2].Const }

// Prepare checks the node and sets the output shape, or marks it Dynamic
// when begin or size are not constant.
func (o *sliceOp) Prepare(n *kernel.Node) error {
	const op = "SLICE"
	if err := shapeCheckArity(n, op, 3, 1); err != nil {
		return err
	}
	in, begin, size, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int32, tensor.Int64, tensor.Int8, tensor.Int16, tensor.Uint8, tensor.Bool); err != nil {
		return err
	}
	if err := shapeCheckType(op, "begin", begin.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if err := shapeCheckType(op, "size", size.Type, tensor.Int32, tensor.Int64); err != nil {
		return err
	}
	if len(begin.Shape) != 1 || len(size.Shape) != 1 || begin.Shape[0] != size.Shape[0] {
		return fmt.Errorf("%s: begin %v and size %v must be vectors of equal length", op, begin.Shape, size.Shape)
	}
	if len(in.Shape) > shapeMaxDims {
		return kernel.Unsupported("%s: input rank %d (TFLite 2.9 supports 1D-5D)", op, len(in.Shape))
	}
	if begin.Shape[0] != len(in.Shape) {
		return fmt.Errorf("%s: begin has %d entries for an input of rank %d", op, begin.Shape[0], len(in.Shape))
	}
	return o.prepare(o, n)
}

// Eval copies the slice.
func (o *sliceOp) Eval(n *kernel.Node) error { return o.eval(o, n) }

// stridedSliceParams are STRIDED_SLICE's options (bit i refers to entry i
// of begin/end/strides).
type stridedSliceParams struct {
	BeginMask, EndMask, EllipsisMask, NewAxisMask, ShrinkAxisMask int
}

// stridedSliceOp is STRIDED_SLICE, following TFLite 2.9's strided_slice.cc
// (how masks expand into an effective input of at most 5 dimensions) and
// strided_slice_logic.h (StartForAxis/StopForAxis clamping).
type stridedSliceOp struct {
	p stridedSliceParams
	sliceBox
}

func newStridedSliceOp(info kernel.OpInfo) (kernel.Op, error) {
	var p stridedSliceParams
	if tbl, ok := info.Options(schema.BuiltinOptionsStridedSliceOptions); ok {
		var opts schema.StridedSliceOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		p = stridedSliceParams{
			BeginMask:      int(opts.BeginMask()),
			EndMask:        int(opts.EndMask()),
			EllipsisMask:   int(opts.EllipsisMask()),
			NewAxisMask:    int(opts.NewAxisMask()),
			ShrinkAxisMask: int(opts.ShrinkAxisMask()),
		}
	}
	return &stridedSliceOp{p: p}, nil
}

func shapeClamp(v, lo, hi int) int { return min(max(v, lo), hi) }

// plan expands the masks, resolves every axis and fills o.box (over the
// effective input shape, new axes included) and o.shape (shrunk axes left out).
func (o *stridedSliceOp) plan(n *kernel.Node) error {
	const op = "STRIDED_SLICE"
	in := n.Inputs[0]
	beginT, endT, stridesT := n.Inputs[1], n.Inputs[2], n.Inputs[3]
	for _, t := range []*tensor.Tensor{beginT, endT, stridesT} {
		if len(t.Data) < t.Bytes() {
			return fmt.Errorf("%s: begin, end or strides has no data", op)
		}
	}
	l, err := o.p.layout(beginT.Shape[0], len(in.Shape))
	if err != nil {
		return err
	}
	ax, err := o.effectiveAxes(in, l, beginT.Int32s(), endT.Int32s(), stridesT.Int32s())
	if err != nil {
		return err
	}
	if tensor.NumElements(o.box.Dims[:l.dims]) != in.NumElements() {
		return fmt.Errorf("%s: masks (new_axis %#x, ellipsis %#x) do not fit input shape %v", op, o.p.NewAxisMask, o.p.EllipsisMask, in.Shape)
	}
	return o.resolveAxes(&ax)
}

// stridedSliceLayout is how the masks lay the begin, end and strides
// entries over the effective input, which has the input's dimensions plus
// the new axes outside the ellipsis.
type stridedSliceLayout struct {
	dims          int // effective rank
	beginCount    int // entries of begin, end and strides
	ellipsis      int // effective ellipsis mask: every axis the ellipsis covers
	newAxis       int // effective new-axis mask
	ellipsisStart int // the ellipsis' first effective axis (dims when none)
	expanded      int // axes the ellipsis covers beyond its own entry
}

// layout expands the ellipsis and new-axis masks over the effective input.
func (p stridedSliceParams) layout(beginCount, inputDims int) (stridedSliceLayout, error) {
	numAddAxis := 0
	for i := range beginCount {
		if p.EllipsisMask&(1<<i) == 0 && p.NewAxisMask&(1<<i) != 0 {
			numAddAxis++
		}
	}
	effDims := inputDims + numAddAxis
	if effDims > shapeMaxDims {
		return stridedSliceLayout{}, kernel.Unsupported("STRIDED_SLICE: %d dimensions including added axes (TFLite 2.9 supports up to 5)", effDims)
	}
	l := stridedSliceLayout{dims: effDims, beginCount: beginCount, ellipsisStart: effDims}
	for i := 0; i < effDims; {
		if p.EllipsisMask&(1<<i) != 0 {
			l.ellipsisStart = i
			stop := max(i+1, min(i+1+numAddAxis+inputDims-beginCount, effDims))
			l.expanded = stop - l.ellipsisStart - 1
			for ; i < stop; i++ {
				l.ellipsis |= 1 << i
			}
			continue
		}
		if p.NewAxisMask&(1<<(i-l.expanded)) != 0 {
			l.newAxis |= 1 << i
		}
		i++
	}
	return l, nil
}

// stridedSliceAxes are the begin, end and stride of every effective axis
// and the effective begin, end and shrink masks.
type stridedSliceAxes struct {
	begin, end, stride             [shapeMaxDims]int
	beginMask, endMask, shrinkMask int
}

// effectiveAxes maps the begin, end and strides entries and the masks onto
// the effective axes of layout l; it sets o.box's rank and dimensions.
func (o *stridedSliceOp) effectiveAxes(in *tensor.Tensor, l stridedSliceLayout, begin, end, strides []int32) (stridedSliceAxes, error) {
	const op = "STRIDED_SLICE"
	var ax stridedSliceAxes
	p := o.p
	inputDims := len(in.Shape)
	addedEllipsis, addedAxes := 0, 0
	b := &o.box
	b.Rank = l.dims
	for i := range l.dims {
		bit := 1 << i
		isNew := l.ellipsis&bit == 0 && l.newAxis&bit != 0
		if !isNew {
			src := i - addedAxes
			if src < 0 || src >= inputDims {
				return ax, fmt.Errorf("%s: masks (new_axis %#x, ellipsis %#x) do not fit an input of rank %d", op, p.NewAxisMask, p.EllipsisMask, inputDims)
			}
			b.Dims[i] = in.Shape[src]
		}
		switch {
		case l.ellipsis&bit != 0:
			addedEllipsis = max(0, i-l.ellipsisStart)
			ax.beginMask |= bit
			ax.endMask |= bit
			ax.stride[i] = 1
		case isNew:
			ax.begin[i], ax.end[i], ax.stride[i] = 0, 1, 1
			b.Dims[i] = 1
			addedAxes++
		case i >= l.beginCount+l.expanded:
			ax.begin[i], ax.end[i], ax.stride[i] = 0, 0, 1
			ax.beginMask |= bit
			ax.endMask |= bit
		default:
			orig := i - addedEllipsis
			if orig < 0 || orig >= l.beginCount || orig >= len(end) || orig >= len(strides) {
				return ax, fmt.Errorf("%s: masks do not fit %d begin entries", op, l.beginCount)
			}
			ax.begin[i], ax.end[i], ax.stride[i] = int(begin[orig]), int(end[orig]), int(strides[orig])
			if p.BeginMask&(1<<orig) != 0 {
				ax.beginMask |= bit
			}
			if p.EndMask&(1<<orig) != 0 {
				ax.endMask |= bit
			}
			if p.ShrinkAxisMask&(1<<orig) != 0 {
				ax.shrinkMask |= bit
			}
		}
	}
	return ax, nil
}

// resolveAxes fills o.box's starts, counts and steps and o.shape from the
// effective axes.
func (o *stridedSliceOp) resolveAxes(ax *stridedSliceAxes) error {
	const op = "STRIDED_SLICE"
	b := &o.box
	o.shape = o.shape[:0]
	for i := range b.Rank {
		size, stride := b.Dims[i], ax.stride[i]
		if stride == 0 {
			return fmt.Errorf("%s: stride of axis %d is zero", op, i)
		}
		start, stop := stridedSliceBounds(size, ax.begin[i], ax.end[i], stride, ax.beginMask&(1<<i) != 0, ax.endMask&(1<<i) != 0)
		if ax.shrinkMask&(1<<i) != 0 {
			// TFLite's output has one element on a shrunk axis; it reads
			// outside the input when begin is out of range, we refuse.
			if start < 0 || start >= size {
				return fmt.Errorf("%s: shrunk axis %d has begin %d out of range [0, %d)", op, i, ax.begin[i], size)
			}
			b.Start[i], b.Count[i], b.Step[i] = start, 1, 1
			continue
		}
		count, ok := stridedSliceCount(start, stop, stride)
		if !ok {
			return kernel.Unsupported("%s: axis %d is too large (%d..%d step %d)", op, i, start, stop, stride)
		}
		b.Start[i], b.Count[i], b.Step[i] = start, count, stride
		o.shape = append(o.shape, count)
	}
	return nil
}

// stridedSliceBounds resolves the begin and end of an axis of the given
// size as TFLite's StartForAxis and StopForAxis do: a masked one goes to
// the far end in the stride's direction, a negative one counts from the
// back, and both are clamped to the axis.
func stridedSliceBounds(size, begin, end, stride int, beginMasked, endMasked bool) (start, stop int) {
	if size == 0 {
		return 0, 0
	}
	start = begin
	if beginMasked {
		start = math.MaxInt32
		if stride > 0 {
			start = math.MinInt32
		}
	}
	if start < 0 {
		start += size
	}
	if stride > 0 {
		start = shapeClamp(start, 0, size)
	} else {
		start = shapeClamp(start, -1, size-1)
	}
	stop = end
	if endMasked {
		stop = math.MinInt32
		if stride > 0 {
			stop = math.MaxInt32
		}
	}
	if stop < 0 {
		stop += size
	}
	if stride > 0 {
		stop = shapeClamp(stop, 0, size)
	} else {
		stop = shapeClamp(stop, -1, size-1)
	}
	return start, stop
}

// stridedSliceCount is the number of indices start, start+stride, ...
// before stop. TFLite sizes the output with a float32 ceil, the loop count
// being the exact integer one; they agree below 2^24, and ok is false when
// they do not.
func stridedSliceCount(start, stop, stride int) (count int, ok bool) {
	dim := int(math.Ceil(float64(float32(stop-start) / float32(stride))))
	if stride > 0 && stop > start {
		count = (stop - start + stride - 1) / stride
	} else if stride < 0 && stop < start {
		count = (start - stop - stride - 1) / -stride
	}
	dim = max(dim, 0)
	return count, dim == count
}

func (o *stridedSliceOp) constInputs(n *kernel.Node) bool {
	return n.Inputs[1].Const && n.Inputs[2].Const && n.Inputs[3].Const
}

// Prepare checks the node and sets the output shape, or marks it Dynamic
// when begin, end or strides are not constant.
func (o *stridedSliceOp) Prepare(n *kernel.Node) error {
	const op = "STRIDED_SLICE"
	if err := shapeCheckArity(n, op, 4, 1); err != nil {
		return err
	}
	in, out := n.Inputs[0], n.Outputs[0]
	begin, end, strides := n.Inputs[1], n.Inputs[2], n.Inputs[3]
	if len(begin.Shape) != 1 || len(end.Shape) != 1 || len(strides.Shape) != 1 {
		return fmt.Errorf("%s: begin, end and strides must be vectors", op)
	}
	if begin.Shape[0] != end.Shape[0] || strides.Shape[0] != begin.Shape[0] {
		return fmt.Errorf("%s: begin %v, end %v and strides %v differ in length", op, begin.Shape, end.Shape, strides.Shape)
	}
	if err := shapeSameType(op, in, out); err != nil {
		return err
	}
	for _, t := range []*tensor.Tensor{begin, end, strides} {
		if t.Type != tensor.Int32 {
			return kernel.Unsupported("%s: begin/end/strides type %s (want INT32)", op, t.Type)
		}
	}
	if err := shapeCheckType(op, "input", in.Type, tensor.Float32, tensor.Int32, tensor.Int64, tensor.Uint8, tensor.Int8, tensor.Int16, tensor.Bool); err != nil {
		return err
	}
	if len(in.Shape) > shapeMaxDims {
		return kernel.Unsupported("%s: input rank %d (TFLite 2.9 supports 1D-5D)", op, len(in.Shape))
	}
	return o.prepare(o, n)
}

// Eval copies the selected elements.
func (o *stridedSliceOp) Eval(n *kernel.Node) error { return o.eval(o, n) }
