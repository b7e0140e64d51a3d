package kernels

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/delego/delego/tensor"
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
// a model is), pack the filter once per kind and read the same packed
// weights, and compute what a kernel with its own copy computes.
func TestQuantGemmWeightsShared(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	in := qT(tensor.Uint8, []int{1, 5, 5, 24}, 0.05, 120)
	for i := range in.Data {
		in.Data[i] = byte(r.IntN(256))
	}
	filter := constT(qT(tensor.Uint8, []int{20, 1, 1, 24}, 0.02, 131))
	for i := range filter.Data {
		filter.Data[i] = byte(r.IntN(256))
	}
	fcIn := qT(tensor.Uint8, []int{3, 24}, 0.05, 120)
	copy(fcIn.Data, in.Data)
	fcFilter := constT(qT(tensor.Uint8, []int{20, 24}, 0.02, 131))
	copy(fcFilter.Data, filter.Data)

	store := &countingStore{values: map[any]any{}}
	run := func(op Op, shared Sharer, ins ...*tensor.Tensor) []byte {
		t.Helper()
		out := qOut(tensor.Uint8, 0.1, 128)
		n := &Node{Inputs: ins, Outputs: []*tensor.Tensor{out}, Threads: 1, Shared: shared}
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
	if store.builds != 2 {
		t.Errorf("%d packings for two filters, want 2", store.builds)
	}
	if !bytes.Equal(outA, outOwn) || !bytes.Equal(outB, outOwn) || !bytes.Equal(outFA, outFB) {
		t.Error("the kernels with shared weights compute something else than one with its own")
	}
	if packedData(&a.qg) != packedData(&b.qg) || packedData(&a.qg) == packedData(&own.qg) || packedData(&fa.qg) != packedData(&fb.qg) {
		t.Error("kernels sharing a store do not read one copy of the packed weights")
	}
}

// packedData is where g's packed weights start, whichever layout it uses.
func packedData(g *qGemm) unsafe.Pointer {
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
	filter := constT(tensor.NewTensor(tensor.Float32, 7, 3, 3, 10))
	for i := range filter.Float32s() {
		filter.Float32s()[i] = r.Float32() - 0.5
	}
	store := &countingStore{values: map[any]any{}}
	var convs [2]*Conv2D
	var outs [2][]byte
	for i := range convs {
		convs[i] = &Conv2D{Params: Conv2DParams{StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
		out := outT(tensor.Float32)
		n := &Node{Inputs: []*tensor.Tensor{in, filter}, Outputs: []*tensor.Tensor{out}, Threads: 1, Shared: store}
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
