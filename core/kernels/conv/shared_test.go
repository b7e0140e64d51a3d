package conv

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// countingStore is a Sharer that counts its builds.
type countingStore struct {
	values map[any]any
	builds int
}

func (s *countingStore) Derived(key any, build func() any) any {
	if v, ok := s.values[key]; ok {
		return v
	}
	s.builds++
	v := build()
	s.values[key] = v
	return v
}

// TestQuantGemmWeightsShared: two uint8 CONV_2Ds and two FULLY_CONNECTEDs
// on one constant filter, prepared with one store (as every interpreter of
// a model is), pack the filter and compute its constant terms once per
// kind, read the same copies, and compute what a kernel with its own
// computes.
func TestQuantGemmWeightsShared(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	in := kerneltest.QT(tensor.Uint8, []int{1, 5, 5, 24}, 0.05, 120)
	for i := range in.Data {
		in.Data[i] = byte(r.IntN(256))
	}
	filter := kerneltest.ConstT(kerneltest.QT(tensor.Uint8, []int{20, 1, 1, 24}, 0.02, 131))
	for i := range filter.Data {
		filter.Data[i] = byte(r.IntN(256))
	}
	fcIn := kerneltest.QT(tensor.Uint8, []int{3, 24}, 0.05, 120)
	copy(fcIn.Data, in.Data)
	fcFilter := kerneltest.ConstT(kerneltest.QT(tensor.Uint8, []int{20, 24}, 0.02, 131))
	copy(fcFilter.Data, filter.Data)

	store := &countingStore{values: map[any]any{}}
	run := func(op kernel.Op, shared kernel.Sharer, ins ...*tensor.Tensor) []byte {
		t.Helper()
		out := kerneltest.QOut(tensor.Uint8, 0.1, 128)
		n := &kernel.Node{Inputs: ins, Outputs: []*tensor.Tensor{out}, Threads: 1, Shared: shared}
		if err := op.Prepare(n); err != nil {
			t.Fatal(err)
		}
		out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
		if err := op.Eval(n); err != nil {
			t.Fatal(err)
		}
		return out.Data
	}
	conv := func() *Conv2D {
		return &Conv2D{Params: Conv2DParams{StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
	}
	a, b, own := conv(), conv(), conv()
	outA, outB, outOwn := run(a, store, in, filter), run(b, store, in, filter), run(own, nil, in, filter)
	fa, fb := &FullyConnected{}, &FullyConnected{}
	outFA, outFB := run(fa, store, fcIn, fcFilter), run(fb, store, fcIn, fcFilter)
	if store.builds != 4 {
		t.Errorf("%d packings and constant terms for two filters, want 4", store.builds)
	}
	if !bytes.Equal(outA, outOwn) || !bytes.Equal(outB, outOwn) || !bytes.Equal(outFA, outFB) {
		t.Error("the kernels with shared weights compute something else than one with its own")
	}
	if packedData(&a.qg) != packedData(&b.qg) || packedData(&a.qg) == packedData(&own.qg) || packedData(&fa.qg) != packedData(&fb.qg) {
		t.Error("kernels sharing a store do not read one copy of the packed weights")
	}
	if constData(&a.qg) != constData(&b.qg) || constData(&a.qg) == constData(&own.qg) || constData(&fa.qg) != constData(&fb.qg) {
		t.Error("kernels sharing a store do not read one copy of the constant terms")
	}
}

// constData is where g's per-channel constant terms start.
func constData(g *qGemm) unsafe.Pointer {
	if g.vnni() {
		return unsafe.Pointer(unsafe.SliceData(g.v.qp))
	}
	return unsafe.Pointer(unsafe.SliceData(g.qp))
}

// packedData is where g's packed weights start, whichever layout it uses.
func packedData(g *qGemm) unsafe.Pointer {
	if g.kern.Wide() {
		return unsafe.Pointer(unsafe.SliceData(g.v.wide))
	}
	if g.vnni() {
		return unsafe.Pointer(unsafe.SliceData(g.v.w))
	}
	return unsafe.Pointer(unsafe.SliceData(g.packed))
}

// TestFloatGemmWeightsShared: two float CONV_2Ds on one constant filter,
// prepared with one store, pack it once and read one copy.
func TestFloatGemmWeightsShared(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	in := tensor.NewTensor(tensor.Float32, 1, 6, 6, 10)
	for i := range in.Float32s() {
		in.Float32s()[i] = r.Float32() - 0.5
	}
	filter := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 7, 3, 3, 10))
	for i := range filter.Float32s() {
		filter.Float32s()[i] = r.Float32() - 0.5
	}
	store := &countingStore{values: map[any]any{}}
	var convs [2]*Conv2D
	var outs [2][]byte
	for i := range convs {
		convs[i] = &Conv2D{Params: Conv2DParams{StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
		out := kerneltest.OutT(tensor.Float32)
		n := &kernel.Node{Inputs: []*tensor.Tensor{in, filter}, Outputs: []*tensor.Tensor{out}, Threads: 1, Shared: store}
		if err := convs[i].Prepare(n); err != nil {
			t.Fatal(err)
		}
		out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
		if err := convs[i].Eval(n); err != nil {
			t.Fatal(err)
		}
		outs[i] = out.Data
	}
	if store.builds != 1 || unsafe.SliceData(convs[0].fg.packed) != unsafe.SliceData(convs[1].fg.packed) {
		t.Errorf("%d packings, shared copy %v; want one", store.builds, unsafe.SliceData(convs[0].fg.packed) == unsafe.SliceData(convs[1].fg.packed))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("the two convolutions differ")
	}
}

// TestDepthwiseWeightsShared: two 8-bit DEPTHWISE_CONV_2Ds on one constant
// filter and bias, prepared with one store, prepare the vector kernel's
// weights once and read one copy (the packed kernel, which the vector one
// replaces where the CPU has it, keeps its own), and compute what a kernel
// with its own computes.
func TestDepthwiseWeightsShared(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	in := randQ(r, tensor.Int8, []int{1, 7, 7, 40}, 0.05, -3)
	filter := kerneltest.ConstT(randQ(r, tensor.Int8, []int{1, 3, 3, 40}, 0.02, 0))
	filter.Quant.Scale = make([]float32, 40)
	filter.Quant.ZeroPoint, filter.Quant.Axis = make([]int64, 40), 3
	for c := range filter.Quant.Scale {
		filter.Quant.Scale[c] = 0.01 + 0.001*float32(c)
	}
	bias := kerneltest.ConstT(tensor.NewTensor(tensor.Int32, 40))
	for i := range bias.Int32s() {
		bias.Int32s()[i] = int32(r.IntN(2000) - 1000)
	}
	store := &countingStore{values: map[any]any{}}
	var dws [3]*DepthwiseConv2D
	var outs [3][]byte
	for i := range dws {
		dws[i] = &DepthwiseConv2D{Params: DepthwiseConv2DParams{StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1, DepthMultiplier: 1}}
		out := kerneltest.QOut(tensor.Int8, 0.1, 2)
		n := &kernel.Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: 1}
		if i < 2 {
			n.Shared = store
		}
		if err := dws[i].Prepare(n); err != nil {
			t.Fatal(err)
		}
		out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
		if err := dws[i].Eval(n); err != nil {
			t.Fatal(err)
		}
		outs[i] = out.Data
	}
	if !bytes.Equal(outs[0], outs[2]) || !bytes.Equal(outs[1], outs[2]) {
		t.Error("the kernels with shared weights compute something else than one with its own")
	}
	w := func(i int) *int32 { return unsafe.SliceData(dws[i].vd.w) }
	switch {
	case !dws[0].vec && store.builds != 0:
		t.Errorf("the packed kernel used the store %d times, want none", store.builds)
	case dws[0].vec && (store.builds != 1 || w(0) != w(1) || w(0) == w(2)):
		t.Errorf("%d preparations, shared copy %v; want one", store.builds, w(0) == w(1))
	}
}

// TestScratchShared: kernels of different shapes on one Scratch (as the
// nodes of an interpreter are) leave it as large as the largest depthwise
// node needs alone plus the largest GEMM, and compute what kernels with their own compute, whatever ran
// on the scratch before (a depthwise node with another input zero point
// among them).
func TestScratchShared(t *testing.T) {
	type node struct {
		op kernel.Op
		n  *kernel.Node
	}
	build := func(scr *kernel.Scratch) []node {
		var nodes []node
		for i, shape := range [][]int{{1, 9, 9, 16}, {1, 20, 20, 48}, {1, 5, 5, 8}} {
			r := rand.New(rand.NewPCG(uint64(i), 1))
			in := randQ(r, tensor.Uint8, shape, 0.05, int64(100+20*i))
			filter := kerneltest.ConstT(randQ(r, tensor.Uint8, []int{1, 3, 3, shape[3]}, 0.02, 120))
			out := kerneltest.QOut(tensor.Uint8, 0.1, 128)
			dw := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1, DepthMultiplier: 1}}
			nodes = append(nodes, node{dw, &kernel.Node{Inputs: []*tensor.Tensor{in, filter}, Outputs: []*tensor.Tensor{out}, Threads: 2, Scratch: scr}})
			cfilter := kerneltest.ConstT(randQ(r, tensor.Uint8, []int{24, 1, 1, shape[3]}, 0.02, 131))
			cout := kerneltest.QOut(tensor.Uint8, 0.1, 128)
			conv := &Conv2D{Params: Conv2DParams{StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
			nodes = append(nodes, node{conv, &kernel.Node{Inputs: []*tensor.Tensor{in, cfilter}, Outputs: []*tensor.Tensor{cout}, Threads: 2, Scratch: scr}})
		}
		for _, nd := range nodes {
			if err := nd.op.Prepare(nd.n); err != nil {
				t.Fatal(err)
			}
			nd.n.Outputs[0].Data = tensor.NewTensor(nd.n.Outputs[0].Type, nd.n.Outputs[0].Shape...).Data
		}
		return nodes
	}
	var one kernel.Scratch
	shared := build(&one)
	own := build(nil)
	var largest [2]int // depthwise, GEMM
	for i, nd := range own {
		largest[i%2] = max(largest[i%2], nd.n.Scratch.Size())
	}
	if one.Size() != largest[0]+largest[1] {
		t.Errorf("shared scratch is %d bytes, the largest nodes' own %d", one.Size(), largest[0]+largest[1])
	}
	for _, i := range []int{0, 1, 2, 3, 4, 5, 2, 0, 4, 1} {
		for _, nodes := range [][]node{shared, own} {
			if err := nodes[i].op.Eval(nodes[i].n); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(shared[i].n.Outputs[0].Data, own[i].n.Outputs[0].Data) {
			t.Errorf("node %d on the shared scratch computes something else than on its own", i)
		}
	}
}

// randQ is qT filled with random bytes.
func randQ(r *rand.Rand, typ tensor.DType, shape []int, scale float32, zp int64) *tensor.Tensor {
	t := kerneltest.QT(typ, shape, scale, zp)
	for i := range t.Data {
		t.Data[i] = byte(r.IntN(256))
	}
	return t
}
