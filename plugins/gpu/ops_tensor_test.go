package gpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// feed is one boundary input of a test graph.
type feed struct {
	shape []int
	data  []float32
}

// runGraph compiles b on the gpu delegate and invokes it twice with the
// given inputs; it returns every boundary output. The graph's other
// precisions are held to it too (checkPrecisions).
func runGraph(t *testing.T, b *modelbuild.Builder, ins []feed, outShapes ...[]int) [][]float32 {
	t.Helper()
	x, err := New().Compile(context.Background(), &delegate.Partition{Model: b.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	out := invokeTwice(t, x, ins, outShapes)
	checkPrecisions(t, b.Bytes(), ins, outShapes, out)
	return out
}

// invokeTwice invokes x twice (a second Invoke must give the same result)
// and returns its outputs.
func invokeTwice(t *testing.T, x delegate.Executable, ins []feed, outShapes [][]int) [][]float32 {
	t.Helper()
	var inTs, outTs []*tensor.Tensor
	for _, in := range ins {
		inTs = append(inTs, &tensor.Tensor{Type: tensor.Float32, Shape: in.shape, Data: raw(in.data)})
	}
	for _, s := range outShapes {
		outTs = append(outTs, &tensor.Tensor{Type: tensor.Float32, Shape: s, Data: make([]byte, 4*tensor.NumElements(s))})
	}
	for range 2 {
		if err := x.Invoke(context.Background(), inTs, outTs); err != nil {
			t.Fatal(err)
		}
	}
	out := make([][]float32, len(outTs))
	for i, o := range outTs {
		out[i] = append([]float32(nil), o.Float32s()...)
	}
	return out
}

func int32s(v ...int) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(x)))
	}
	return out
}

// index is the row-major offset of idx in shape.
func index(shape, idx []int) int {
	o := 0
	for i, d := range shape {
		o = o*d + idx[i]
	}
	return o
}

// pick gathers from in (of shape) the elements whose index along each axis
// runs over axes[axis], in row-major order of the output.
func pick(in []float32, shape []int, axes [][]int) []float32 {
	var out []float32
	idx := make([]int, len(shape))
	var walk func(d int)
	walk = func(d int) {
		if d == len(shape) {
			out = append(out, in[index(shape, idx)])
			return
		}
		for _, i := range axes[d] {
			idx[d] = i
			walk(d + 1)
		}
	}
	walk(0)
	return out
}

func span(from, count int) []int {
	v := make([]int, count)
	for i := range v {
		v[i] = from + i
	}
	return v
}

func TestTranspose(t *testing.T) {
	for _, tc := range []struct {
		shape, perm []int
	}{
		{[]int{7}, []int{0}},
		{[]int{3, 5}, []int{1, 0}},
		{[]int{2, 3, 5}, []int{2, 0, 1}},
		{[]int{2, 3, 4, 5}, []int{0, 3, 1, 2}},
		{[]int{2, 1, 7, 3}, []int{3, 2, 1, 0}},
		{[]int{1, 33, 65, 3}, []int{0, 2, 1, 3}},
	} {
		t.Run(fmt.Sprint(tc.shape, tc.perm), func(t *testing.T) {
			r := lcg(5)
			in := r.floats(tensor.NumElements(tc.shape))
			out := make([]int, len(tc.perm))
			for i, p := range tc.perm {
				out[i] = tc.shape[p]
			}
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, tc.shape)
			p := b.Const("perm", tensor.Int32, []int{len(tc.perm)}, int32s(tc.perm...))
			y := b.Tensor("out", tensor.Float32, out)
			b.Op(schema.BuiltinOperatorTRANSPOSE, 1, []int{x, p}, []int{y}, nil)
			b.Inputs(x)
			b.Outputs(y)
			want := make([]float32, len(in))
			oi := make([]int, len(out))
			ii := make([]int, len(out))
			for o := range want {
				for d, rem := len(out)-1, o; d >= 0; d-- {
					oi[d], rem = rem%out[d], rem/out[d]
				}
				for d, p := range tc.perm {
					ii[p] = oi[d]
				}
				want[o] = in[index(tc.shape, ii)]
			}
			compare(t, runGraph(t, b, []feed{{tc.shape, in}}, out)[0], want, 0)
		})
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		shape     []int
		axis, num int
	}{
		{[]int{1, 4, 5, 6}, 3, 3},
		{[]int{2, 6, 3, 5}, -3, 2},
		{[]int{2, 3, 5}, 0, 2},
		{[]int{3, 7}, 1, 7},
		{[]int{1, 1, 1, 1}, 2, 1},
	} {
		t.Run(fmt.Sprint(tc.shape, tc.axis, tc.num), func(t *testing.T) {
			r := lcg(9)
			in := r.floats(tensor.NumElements(tc.shape))
			axis := tc.axis
			if axis < 0 {
				axis += len(tc.shape)
			}
			size := tc.shape[axis] / tc.num
			oshape := append([]int(nil), tc.shape...)
			oshape[axis] = size
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, tc.shape)
			a := b.Const("axis", tensor.Int32, []int{}, int32s(tc.axis))
			var outs []int
			var shapes [][]int
			for k := range tc.num {
				outs = append(outs, b.Tensor(fmt.Sprint("out", k), tensor.Float32, oshape))
				shapes = append(shapes, oshape)
			}
			b.Op(schema.BuiltinOperatorSPLIT, 1, []int{a, x}, outs, modelbuild.Options(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: int32(tc.num)}))
			b.Inputs(x)
			b.Outputs(outs...)
			got := runGraph(t, b, []feed{{tc.shape, in}}, shapes...)
			for k := range tc.num {
				axes := make([][]int, len(tc.shape))
				for d, n := range tc.shape {
					axes[d] = span(0, n)
				}
				axes[axis] = span(k*size, size)
				compare(t, got[k], pick(in, tc.shape, axes), 0)
			}
		})
	}
}

func TestSlice(t *testing.T) {
	for _, tc := range []struct {
		shape, begin, size []int
	}{
		{[]int{2, 5, 6, 7}, []int{1, 1, 2, 3}, []int{1, 3, -1, 4}},
		{[]int{3, 4, 5}, []int{0, 2, 0}, []int{-1, 1, 5}},
		{[]int{1, 9, 9, 3}, []int{0, 0, 0, 0}, []int{1, 9, 9, 3}},
		{[]int{1, 1, 1, 1}, []int{0, 0, 0, 0}, []int{-1, -1, -1, -1}},
	} {
		t.Run(fmt.Sprint(tc.shape, tc.begin, tc.size), func(t *testing.T) {
			r := lcg(13)
			in := r.floats(tensor.NumElements(tc.shape))
			axes := make([][]int, len(tc.shape))
			out := make([]int, len(tc.shape))
			for d := range tc.shape {
				out[d] = tc.size[d]
				if out[d] < 0 {
					out[d] = tc.shape[d] - tc.begin[d]
				}
				axes[d] = span(tc.begin[d], out[d])
			}
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, tc.shape)
			bg := b.Const("begin", tensor.Int32, []int{len(tc.begin)}, int32s(tc.begin...))
			sz := b.Const("size", tensor.Int32, []int{len(tc.size)}, int32s(tc.size...))
			y := b.Tensor("out", tensor.Float32, out)
			b.Op(schema.BuiltinOperatorSLICE, 1, []int{x, bg, sz}, []int{y}, nil)
			b.Inputs(x)
			b.Outputs(y)
			compare(t, runGraph(t, b, []feed{{tc.shape, in}}, out)[0], pick(in, tc.shape, axes), 0)
		})
	}
}

// refStridedAxis is TFLite's StartForAxis and StopForAxis (reference
// strided_slice_logic.h) and its loop, written out for one axis.
func refStridedAxis(size, begin, end, stride int, beginMask, endMask bool) []int {
	clamp := func(v, lo, hi int) int { return min(max(v, lo), hi) }
	start := begin
	if beginMask {
		if stride > 0 {
			start = math.MinInt32
		} else {
			start = math.MaxInt32
		}
	}
	if start < 0 {
		start += size
	}
	if stride > 0 {
		start = clamp(start, 0, size)
	} else {
		start = clamp(start, -1, size-1)
	}
	stop := end
	if endMask {
		if stride > 0 {
			stop = math.MaxInt32
		} else {
			stop = math.MinInt32
		}
	}
	if stop < 0 {
		stop += size
	}
	if stride > 0 {
		stop = clamp(stop, 0, size)
	} else {
		stop = clamp(stop, -1, size-1)
	}
	var idx []int
	for i := start; (stride > 0 && i < stop) || (stride < 0 && i > stop); i += stride {
		idx = append(idx, i)
	}
	return idx
}

func TestStridedSlice(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		shape, begin, end, stride []int
		beginMask, endMask        int32
	}{
		{"4-D forward", []int{2, 6, 7, 5}, []int{0, 1, 0, 1}, []int{2, 6, 7, 5}, []int{1, 2, 3, 2}, 0, 0},
		{"negative indices", []int{2, 6, 7, 5}, []int{-1, -5, 1, -4}, []int{2, -1, -2, 5}, []int{1, 1, 2, 1}, 0, 0},
		{"negative strides", []int{1, 6, 7, 5}, []int{0, 5, -1, 4}, []int{1, 0, 0, -6}, []int{1, -1, -2, -2}, 0, 0},
		{"masks", []int{2, 6, 7, 5}, []int{1, 3, 5, 2}, []int{0, 1, 1, 3}, []int{1, -2, 1, 1}, 0b0101, 0b0011},
		{"out of range clamped", []int{3, 8, 4}, []int{-100, 2, 10}, []int{100, 100, -100}, []int{2, 3, -1}, 0, 0},
		{"fewer entries than dims", []int{3, 8, 4}, []int{1}, []int{3}, []int{1}, 0, 0},
		{"1x1", []int{1, 1, 1, 1}, []int{0, 0, 0, 0}, []int{1, 1, 1, 1}, []int{1, 1, 1, 1}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := lcg(17)
			in := r.floats(tensor.NumElements(tc.shape))
			axes := make([][]int, len(tc.shape))
			out := make([]int, len(tc.shape))
			for d := range tc.shape {
				if d >= len(tc.begin) {
					axes[d] = span(0, tc.shape[d])
				} else {
					axes[d] = refStridedAxis(tc.shape[d], tc.begin[d], tc.end[d], tc.stride[d], tc.beginMask&(1<<d) != 0, tc.endMask&(1<<d) != 0)
				}
				out[d] = len(axes[d])
			}
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, tc.shape)
			n := len(tc.begin)
			bg := b.Const("begin", tensor.Int32, []int{n}, int32s(tc.begin...))
			en := b.Const("end", tensor.Int32, []int{n}, int32s(tc.end...))
			st := b.Const("strides", tensor.Int32, []int{n}, int32s(tc.stride...))
			y := b.Tensor("out", tensor.Float32, out)
			b.Op(schema.BuiltinOperatorSTRIDED_SLICE, 1, []int{x, bg, en, st}, []int{y}, modelbuild.Options(schema.BuiltinOptionsStridedSliceOptions,
				&schema.StridedSliceOptionsT{BeginMask: tc.beginMask, EndMask: tc.endMask}))
			b.Inputs(x)
			b.Outputs(y)
			t.Logf("output %v", out)
			compare(t, runGraph(t, b, []feed{{tc.shape, in}}, out)[0], pick(in, tc.shape, axes), 0)
		})
	}
}

// halves are random binary16 values (normal, subnormal, zeros) and their
// float32 values computed from the definition.
func halves(r *lcg, n int) ([]byte, []float32) {
	bits := make([]byte, 2*n)
	vals := make([]float32, n)
	for i := range n {
		r.float()
		h := uint16(uint32(*r) >> 16)
		if h&0x7c00 == 0x7c00 { // no infinities or NaNs
			h &^= 0x4000
		}
		if i < 4 {
			h = []uint16{0x0000, 0x8000, 0x0001, 0x83ff}[i]
		}
		binary.LittleEndian.PutUint16(bits[2*i:], h)
		e, f := int(h>>10&0x1f), float64(h&0x3ff)
		v := math.Ldexp(f/1024, -14) // subnormal
		if e != 0 {
			v = math.Ldexp(1+f/1024, e-15)
		}
		if h&0x8000 != 0 {
			v = -v
		}
		vals[i] = float32(v)
	}
	return bits, vals
}

// TestDequantizeFloat16 dequantizes FLOAT16 weights for a FULLY_CONNECTED
// (the weights become a constant of the plan) and, as a second output of
// the partition, on their own (a copy kernel writes them).
func TestDequantizeFloat16(t *testing.T) {
	const units, k = 5, 6
	r := lcg(21)
	bits, w := halves(&r, units*k)
	in := r.floats(2 * k)
	b := modelbuild.New()
	x := b.Tensor("in", tensor.Float32, []int{2, k})
	wh := b.Const("w16", tensor.Float16, []int{units, k}, bits)
	wf := b.Tensor("w", tensor.Float32, []int{units, k})
	y := b.Tensor("out", tensor.Float32, []int{2, units})
	b.Op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{wh}, []int{wf}, nil)
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, wf, -1}, []int{y}, modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
	b.Inputs(x)
	b.Outputs(y, wf)
	got := runGraph(t, b, []feed{{[]int{2, k}, in}}, []int{2, units}, []int{units, k})
	compare(t, got[1], w, 0)
	compare(t, got[0], refFC(in, w, nil, 2, k, units, schema.ActivationFunctionTypeNONE), 1e-5)

	// Only the output: no consumer.
	b = modelbuild.New()
	x = b.Tensor("in", tensor.Float32, []int{units, k})
	wh = b.Const("w16", tensor.Float16, []int{units, k}, bits)
	wf = b.Tensor("w", tensor.Float32, []int{units, k})
	y = b.Tensor("out", tensor.Float32, []int{units, k})
	b.Op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{wh}, []int{wf}, nil)
	b.Op(schema.BuiltinOperatorADD, 1, []int{x, wf}, []int{y}, modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{}))
	b.Inputs(x)
	b.Outputs(y)
	in = r.floats(units * k)
	want := make([]float32, len(in))
	for i := range in {
		want[i] = in[i] + w[i]
	}
	compare(t, runGraph(t, b, []feed{{[]int{units, k}, in}}, []int{units, k})[0], want, 0)
}

// TestTensorOpsRefused: what the lowerer cannot do it refuses with a
// reason CheckNodes reports.
func TestTensorOpsRefused(t *testing.T) {
	b := modelbuild.New()
	x := b.Tensor("in", tensor.Float32, []int{1, 4, 4, 3})
	q := b.Const("q", tensor.Int16, []int{3}, []byte{1, 0, 2, 0, 3, 0}, modelbuild.Quant(0.5, 0))
	qf := b.Tensor("qf", tensor.Float32, []int{3})
	a := b.Tensor("axis", tensor.Int32, []int{}) // not constant
	s0 := b.Tensor("s0", tensor.Float32, []int{1, 4, 4, 1})
	s1 := b.Tensor("s1", tensor.Float32, []int{1, 4, 4, 1})
	s2 := b.Tensor("s2", tensor.Float32, []int{1, 4, 4, 1})
	perm := b.Tensor("perm", tensor.Int32, []int{4})
	tr := b.Tensor("tr", tensor.Float32, []int{1, 3, 4, 4})
	b.Op(schema.BuiltinOperatorDEQUANTIZE, 2, []int{q}, []int{qf}, nil)
	b.Op(schema.BuiltinOperatorSPLIT, 1, []int{a, x}, []int{s0, s1, s2}, modelbuild.Options(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: 3}))
	b.Op(schema.BuiltinOperatorTRANSPOSE, 1, []int{x, perm}, []int{tr}, nil)
	w := b.Const("w", tensor.Float32, []int{2, 48}, raw(make([]float32, 96)))
	fc := b.Tensor("fc", tensor.Float32, []int{1, 2})
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{x, w, -1}, []int{fc}, modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions,
		&schema.FullyConnectedOptionsT{FusedActivationFunction: schema.ActivationFunctionTypeTANH}))
	b.Inputs(x, a, perm)
	b.Outputs(qf, s0, s1, s2, tr, fc)
	vs, err := New().CheckNodes(t.Context(), b.Bytes(), []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		"INT16",
		"SPLIT: the axis is not constant",
		"TRANSPOSE: tensor 7 \"perm\" is not constant",
	} {
		if vs[i].Accept || !strings.Contains(vs[i].Reason, want) {
			t.Errorf("node %d: %+v, want a refusal containing %q", i, vs[i], want)
		}
		t.Logf("node %d: %s", i, vs[i].Reason)
	}
	if !vs[3].Accept { // TFLite's GPU delegate fuses TANH, and so does the lowering
		t.Errorf("FULLY_CONNECTED with a fused TANH: %+v, want it taken", vs[3])
	}
}
