package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The data-movement ops (TRANSPOSE, SPLIT, SLICE, STRIDED_SLICE) all read
// one input element per output element at an affine index: out[c0,c1,c2,c3]
// = in[BASE + c0*S0 + c1*S1 + c2*S2 + c3*S3] (strides may be negative). One
// gather kernel, with the per-op geometry as #defines, runs them all.
// DEQUANTIZE of constant FLOAT16 weights is done once, on the host.

const gatherKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	int c3 = i % D3, r = i / D3;
	int c2 = r % D2; r /= D2;
	int c1 = r % D1, c0 = r / D1;
	ST(out, i, LD(in, BASE + c0 * S0 + c1 * S1 + c2 * S2 + c3 * S3));
}
`

// gather is one gather kernel's geometry, in 4 dimensions.
type gather struct {
	out     [4]int // output dimensions
	base    int    // input element of output element 0
	strides [4]int // input element strides along the output's dimensions
}

// emitGather emits a gather from tensor in to tensor out as the node's
// part-th kernel (a node with several outputs emits several).
func (n *node) emitGather(in, out, part int, g gather) error {
	total := g.out[0] * g.out[1] * g.out[2] * g.out[3]
	if total != tensor.NumElements(n.shape(out)) {
		return fmt.Errorf("output tensor %d has shape %v; the op gives %v elements", out, n.shape(out), g.out)
	}
	var d defines
	for i := range 4 {
		d.int(fmt.Sprint("D", i), g.out[i])
		d.text(fmt.Sprint("S", i), fmt.Sprintf("(%d)", g.strides[i]))
	}
	d.text("BASE", fmt.Sprintf("(%d)", g.base))
	d.int("TOTAL", total)
	name := partKernelName(n.index, part)
	n.emitAs(name, d.wrap(name, gatherKernel), []int{in, out}, total)
	return nil
}

// emitAs appends a kernel of the node under its own name.
func (n *node) emitAs(kernel, src string, args []int, global ...int) {
	n.l.p.steps = append(n.l.p.steps, step{
		node: n.index, op: n.name, kernel: kernel, src: src, args: slices.Clone(args), global: global,
	})
}

// partKernelName names a node's kernels: the first as kernelName does, the
// others with a suffix.
func partKernelName(node, part int) string {
	if part == 0 {
		return kernelName(node)
	}
	return fmt.Sprintf("node%d_%d", node, part)
}

// strides4 are the element strides of a shape right-aligned in 4
// dimensions.
func strides4(shape []int) [4]int {
	s4 := pad4(shape)
	var st [4]int
	acc := 1
	for i := 3; i >= 0; i-- {
		st[i] = acc
		acc *= s4[i]
	}
	return st
}

// constInts reads constant INT32 or INT64 tensor ti (shape, axes, indices).
func (n *node) constInts(ti int, what string) ([]int, error) {
	if ti < 0 || ti >= n.l.sg.NumTensors() {
		return nil, fmt.Errorf("the %s tensor is missing", what)
	}
	t := n.l.sg.Tensor(ti)
	data := n.l.m.Buffer(t.Buffer)
	if data == nil {
		return nil, fmt.Errorf("the %s (tensor %d) is not constant", what, ti)
	}
	size := map[tensor.DType]int{tensor.Int32: 4, tensor.Int64: 8}[t.Type]
	if size == 0 {
		return nil, fmt.Errorf("the %s (tensor %d) is %s; want INT32 or INT64", what, ti, t.Type)
	}
	count := tensor.NumElements(t.Shape)
	if len(data) != size*count {
		return nil, fmt.Errorf("the %s (tensor %d) holds %d bytes for %d elements", what, ti, len(data), count)
	}
	out := make([]int, count)
	for i := range out {
		if size == 4 {
			out[i] = int(int32(binary.LittleEndian.Uint32(data[4*i:])))
		} else {
			out[i] = int(int64(binary.LittleEndian.Uint64(data[8*i:])))
		}
	}
	return out, nil
}

// io marks the node's data input in (a constant only when constIn) and
// every output as tensors on the device.
func (n *node) io(in int, constIn bool) error {
	if err := n.l.use(in, constIn); err != nil {
		return err
	}
	for _, o := range n.out {
		if err := n.l.use(o, false); err != nil {
			return err
		}
	}
	return nil
}

// --- TRANSPOSE -----------------------------------------------------------------

// transpose lowers TRANSPOSE with a constant permutation, up to 4-D.
func (n *node) transpose() error {
	if err := n.inputs(2, 2); err != nil {
		return err
	}
	perm, err := n.constInts(n.in[1], "permutation")
	if err != nil {
		return err
	}
	if err := n.io(n.in[0], false); err != nil {
		return err
	}
	in := n.shape(n.in[0])
	r := len(in)
	if r > 4 || len(perm) != r {
		return fmt.Errorf("permutation %v for a %d-D input: want one entry per dimension, 4 at most", perm, r)
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return fmt.Errorf("permutation %v is not a permutation of 0..%d", perm, r-1)
		}
		seen[p] = true
	}
	st := strides4(in)
	in4 := pad4(in)
	g := gather{out: [4]int{1, 1, 1, 1}}
	for d := range 4 {
		src := d // a padded leading axis maps to itself
		if d >= 4-r {
			src = perm[d-(4-r)] + 4 - r
		}
		g.out[d], g.strides[d] = in4[src], st[src]
	}
	if want := shapeOf(g.out, r); !slices.Equal(want, n.shape(n.out[0])) {
		return fmt.Errorf("output %v; input %v permuted by %v gives %v", n.shape(n.out[0]), in, perm, want)
	}
	return n.emitGather(n.in[0], n.out[0], 0, g)
}

// shapeOf is the last r dimensions of a 4-D shape.
func shapeOf(d4 [4]int, r int) []int { return slices.Clone(d4[4-r:]) }

// --- SPLIT ---------------------------------------------------------------------

// split lowers SPLIT: a constant axis (input 0), num_splits equal outputs,
// one gather kernel each.
func (n *node) split() error {
	o, ok := n.opts.(*schema.SplitOptionsT)
	if !ok {
		return fmt.Errorf("no SplitOptions")
	}
	if err := n.inputs(2, 2); err != nil {
		return err
	}
	axes, err := n.constInts(n.in[0], "axis")
	if err != nil {
		return err
	}
	if len(axes) != 1 {
		return fmt.Errorf("axis tensor of %d values; want 1", len(axes))
	}
	if int(o.NumSplits) != len(n.out) || len(n.out) < 1 {
		return fmt.Errorf("num_splits %d with %d outputs", o.NumSplits, len(n.out))
	}
	data := n.in[1]
	if err := n.io(data, false); err != nil {
		return err
	}
	in := n.shape(data)
	axis := axes[0]
	if axis < 0 {
		axis += len(in)
	}
	if axis < 0 || axis >= len(in) || len(in) > 4 || in[axis]%len(n.out) != 0 {
		return fmt.Errorf("axis %d of input %v into %d: want an axis of at most 4 dimensions that divides evenly", axes[0], in, len(n.out))
	}
	size := in[axis] / len(n.out)
	a4 := axis + 4 - len(in)
	st := strides4(in)
	g := gather{out: [4]int(pad4(in)), strides: st}
	g.out[a4] = size
	for k, out := range n.out {
		if want := shapeOf(g.out, len(in)); !slices.Equal(want, n.shape(out)) {
			return fmt.Errorf("output %d has shape %v, want %v", k, n.shape(out), want)
		}
		g.base = k * size * st[a4]
		if err := n.emitGather(data, out, k, g); err != nil {
			return err
		}
	}
	return nil
}

// --- SLICE, STRIDED_SLICE ------------------------------------------------------

// slice lowers SLICE with constant begin and size (a size of -1 takes the
// rest of the axis), 3-D or 4-D.
func (n *node) slice() error {
	if err := n.inputs(3, 3); err != nil {
		return err
	}
	begin, err := n.constInts(n.in[1], "begin")
	if err != nil {
		return err
	}
	size, err := n.constInts(n.in[2], "size")
	if err != nil {
		return err
	}
	if err := n.io(n.in[0], false); err != nil {
		return err
	}
	in := n.shape(n.in[0])
	r := len(in)
	if r < 1 || r > 4 || len(begin) != r || len(size) != r {
		return fmt.Errorf("begin %v and size %v for input %v: want one entry per dimension, 4 at most", begin, size, in)
	}
	start, count := make([]int, r), make([]int, r)
	for i := range r {
		s := size[i]
		if s == -1 {
			s = in[i] - begin[i]
		}
		if begin[i] < 0 || s < 0 || begin[i]+s > in[i] {
			return fmt.Errorf("begin %v and size %v leave input %v", begin, size, in)
		}
		start[i], count[i] = begin[i], s
	}
	return n.emitBox(in, start, count, ones(r))
}

func ones(r int) []int {
	v := make([]int, r)
	for i := range v {
		v[i] = 1
	}
	return v
}

// emitBox emits the gather of count[i] elements from start[i] by step[i]
// along each axis of input in.
func (n *node) emitBox(in, start, count, step []int) error {
	r := len(in)
	if want := n.shape(n.out[0]); !slices.Equal(want, count) {
		return fmt.Errorf("output %v; the slice of input %v has shape %v", want, in, count)
	}
	st := strides4(in)
	g := gather{out: [4]int{1, 1, 1, 1}}
	for d := range 4 {
		g.strides[d] = st[d]
		if i := d - (4 - r); i >= 0 {
			g.out[d] = count[i]
			g.strides[d] = st[d] * step[i]
			g.base += start[i] * st[d]
		}
	}
	return n.emitGather(n.in[0], n.out[0], 0, g)
}

// stridedSlice lowers STRIDED_SLICE with constant begin, end and strides,
// begin_mask and end_mask, negative indices and strides, as TFLite's
// reference (strided_slice_logic.h's StartForAxis and StopForAxis). The
// ellipsis, new-axis and shrink-axis masks are refused.
func (n *node) stridedSlice() error {
	o, ok := n.opts.(*schema.StridedSliceOptionsT)
	if !ok {
		return fmt.Errorf("no StridedSliceOptions")
	}
	if o.EllipsisMask != 0 || o.NewAxisMask != 0 || o.ShrinkAxisMask != 0 {
		return fmt.Errorf("ellipsis, new-axis or shrink-axis mask (%#x, %#x, %#x)", o.EllipsisMask, o.NewAxisMask, o.ShrinkAxisMask)
	}
	if err := n.inputs(4, 4); err != nil {
		return err
	}
	var vals [3][]int
	for i, what := range []string{"begin", "end", "strides"} {
		v, err := n.constInts(n.in[1+i], what)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	if err := n.io(n.in[0], false); err != nil {
		return err
	}
	in := n.shape(n.in[0])
	r := len(in)
	begin, end, strides := vals[0], vals[1], vals[2]
	if r < 1 || r > 4 || len(begin) > r || len(end) != len(begin) || len(strides) != len(begin) {
		return fmt.Errorf("begin %v, end %v, strides %v for input %v: want equal lengths up to the rank, 4 at most", begin, end, strides, in)
	}
	start, count, step := make([]int, r), make([]int, r), ones(r)
	for i := range r {
		if i >= len(begin) { // axes past the given entries are taken whole
			count[i] = in[i]
			continue
		}
		if strides[i] == 0 {
			return fmt.Errorf("stride of axis %d is zero", i)
		}
		lo, hi := sliceBounds(in[i], begin[i], end[i], strides[i], o.BeginMask&(1<<i) != 0, o.EndMask&(1<<i) != 0)
		start[i], count[i], step[i] = lo, sliceCount(lo, hi, strides[i]), strides[i]
	}
	return n.emitBox(in, start, count, step)
}

// sliceBounds are the first index and the stop of an axis of the given
// size, as TFLite's StartForAxis and StopForAxis compute them: a masked
// bound goes to the far end in the stride's direction, a negative one
// counts from the back, and both are clamped to the axis.
func sliceBounds(size, begin, end, stride int, beginMasked, endMasked bool) (start, stop int) {
	lo, hi := 0, size // clamp range for a forward stride
	if stride < 0 {
		lo, hi = -1, size-1
	}
	resolve := func(v int, masked, toEnd bool) int {
		if masked {
			v = math.MinInt32
			if toEnd {
				v = math.MaxInt32
			}
		}
		if v < 0 {
			v += size
		}
		return min(max(v, lo), hi)
	}
	return resolve(begin, beginMasked, stride < 0), resolve(end, endMasked, stride > 0)
}

// sliceCount is the number of indices start, start+stride, ... before stop.
func sliceCount(start, stop, stride int) int {
	switch {
	case stride > 0 && stop > start:
		return (stop - start + stride - 1) / stride
	case stride < 0 && stop < start:
		return (start - stop - stride - 1) / -stride
	}
	return 0
}

// --- DEQUANTIZE ----------------------------------------------------------------

// dequantizeHalf lowers DEQUANTIZE of constant FLOAT16 weights: the float32
// values are computed here, once, and the output becomes a constant its
// consumers read (a filter stays a constant filter). When the output leaves
// the partition, a copy kernel writes it from a constant holding the values.
// DEQUANTIZE of quantized values is quant.go's dequantize.
func (n *node) dequantizeHalf() error {
	if err := n.inputs(1, 1); err != nil {
		return err
	}
	vals, err := n.l.halfConst(n.in[0])
	if err != nil {
		return err
	}
	out := n.out[0]
	if err := n.l.use(out, false); err != nil {
		return err
	}
	tp := &n.l.p.tensors[out]
	if tp.bytes != len(vals) || !slices.Equal(tp.shape, n.l.sg.Tensor(n.in[0]).Shape) {
		return fmt.Errorf("input %v and output %v differ in shape", n.l.sg.Tensor(n.in[0]).Shape, tp.shape)
	}
	if !slices.Contains(n.l.sg.Outputs(), out) {
		tp.data = vals
		return nil
	}
	n.l.p.tensors = append(n.l.p.tensors, tensorPlan{used: true, shape: tp.shape, bytes: tp.bytes, data: vals, alias: -1})
	src := len(n.l.p.tensors) - 1
	s4 := pad4(tp.shape)
	return n.emitGather(src, out, 0, gather{out: [4]int(s4), strides: strides4(tp.shape)})
}

// halfConst is the narrow exception to use's FLOAT32 rule: constant
// FLOAT16 tensor ti, read by DEQUANTIZE, as float32 bytes. The tensor
// itself never goes to the device.
func (l *lowerer) halfConst(ti int) ([]byte, error) {
	if ti < 0 || ti >= l.sg.NumTensors() {
		return nil, fmt.Errorf("tensor %d does not exist", ti)
	}
	t := l.sg.Tensor(ti)
	data := l.m.Buffer(t.Buffer)
	if t.Type != tensor.Float16 || data == nil {
		return nil, fmt.Errorf("tensor %d is %s (constant: %t); the gpu delegate dequantizes constant FLOAT16 weights only",
			ti, t.Type, data != nil)
	}
	count := tensor.NumElements(t.Shape)
	if len(data) != 2*count || count == 0 {
		return nil, fmt.Errorf("constant tensor %d holds %d bytes, its shape %v needs %d", ti, len(data), t.Shape, 2*count)
	}
	out := make([]byte, 4*count)
	for i := range count {
		f := tensor.Float16ToFloat32(binary.LittleEndian.Uint16(data[2*i:]))
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out, nil
}
