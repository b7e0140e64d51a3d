package pool

import (
	"errors"
	"math"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// The expectations in these tests are worked out by hand from TFLite 2.9's
// rules (noted next to each case); the tricky ones were also confirmed by
// running the same single-op models through the real TFLite 2.9 library.

func TestPoolRegistrations(t *testing.T) {
	// The version ranges TFLite 2.9's BuiltinOpResolver registers (each
	// max+1 was also checked to be rejected by the real library).
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorAVERAGE_POOL_2D: {Min: 1, Max: 3},
		schema.BuiltinOperatorMAX_POOL_2D:     {Min: 1, Max: 3},
		schema.BuiltinOperatorL2_POOL_2D:      {Min: 1, Max: 1},
	}
	kerneltest.CheckRegistrations(t, Ops(), want)
}

func TestPoolFloat(t *testing.T) {
	in3x3 := kerneltest.SeqFrom(9, 1) // 1..9 in a 3x3 image
	cases := []struct {
		name  string
		kind  PoolKind
		p     PoolParams
		shape []int
		in    []float64
		oShp  []int
		want  []float64
	}{
		// SAME 2x2 stride 1: total padding 1, all of it after; border
		// windows average only the cells inside the image.
		{"avg same", PoolAverage, PoolParams{schema.PaddingSAME, 1, 1, 2, 2, 0}, []int{1, 3, 3, 1}, in3x3,
			[]int{1, 3, 3, 1}, []float64{3, 4, 4.5, 6, 7, 7.5, 7.5, 8.5, 9}},
		{"avg valid", PoolAverage, PoolParams{schema.PaddingVALID, 1, 1, 2, 2, 0}, []int{1, 3, 3, 1}, in3x3,
			[]int{1, 2, 2, 1}, []float64{3, 4, 6, 7}},
		// SAME 3x3 stride 2: output 2x2, padding 1 before.
		{"avg same stride 2", PoolAverage, PoolParams{schema.PaddingSAME, 2, 2, 3, 3, 0}, []int{1, 3, 3, 1}, in3x3,
			[]int{1, 2, 2, 1}, []float64{3, 4, 6, 7}},
		{"avg relu6", PoolAverage, PoolParams{schema.PaddingSAME, 1, 1, 2, 2, schema.ActivationFunctionTypeRELU6},
			[]int{1, 3, 3, 1}, in3x3, []int{1, 3, 3, 1}, []float64{3, 4, 4.5, 6, 6, 6, 6, 6, 6}},
		// Non-square stride and filter, two channels.
		{"avg 1x2 stride (1,2)", PoolAverage, PoolParams{schema.PaddingVALID, 2, 1, 2, 1, 0}, []int{1, 2, 4, 2},
			kerneltest.SeqFrom(16, 0), []int{1, 2, 2, 2}, []float64{1, 2, 5, 6, 9, 10, 13, 14}},
		{"max same", PoolMax, PoolParams{schema.PaddingSAME, 1, 1, 2, 2, 0}, []int{1, 3, 3, 1},
			kerneltest.SeqFrom(9, -5), []int{1, 3, 3, 1}, []float64{-1, 0, 0, 2, 3, 3, 2, 3, 3}},
		{"max relu", PoolMax, PoolParams{schema.PaddingVALID, 2, 2, 2, 2, schema.ActivationFunctionTypeRELU},
			[]int{1, 2, 2, 1}, []float64{-4, -3, -2, -1}, []int{1, 1, 1, 1}, []float64{0}},
		{"max relu_n1_to_1", PoolMax, PoolParams{schema.PaddingVALID, 1, 1, 1, 1, schema.ActivationFunctionTypeRELU_N1_TO_1},
			[]int{1, 1, 3, 1}, []float64{-4, 0.5, 2}, []int{1, 1, 3, 1}, []float64{-1, 0.5, 1}},
		// sqrt((3² + 4²) / 2)
		{"l2", PoolL2, PoolParams{schema.PaddingVALID, 2, 1, 2, 1, 0}, []int{1, 1, 2, 1},
			[]float64{3, 4}, []int{1, 1, 1, 1}, []float64{math.Sqrt(12.5)}},
		// Batches are pooled separately.
		{"max batch", PoolMax, PoolParams{schema.PaddingVALID, 1, 1, 2, 1, 0}, []int{2, 1, 2, 1},
			[]float64{1, 2, 7, 3}, []int{2, 1, 1, 1}, []float64{2, 7}},
	}
	for _, c := range cases {
		p := &Pool{Kind: c.kind, Params: c.p}
		out := tensor.NewTensor(tensor.Float32)
		if err := kerneltest.Run1(p, out, kerneltest.ValsT(tensor.Float32, c.shape, c.in...)); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		kerneltest.CheckOutput(t, c.name, out, c.oShp, c.want)
	}
}

func TestPoolQuantized(t *testing.T) {
	// 1-D windows of width w and stride w along a 1xNx1 image.
	win := func(w int) PoolParams { return PoolParams{schema.PaddingVALID, w, 1, w, 1, 0} }
	cases := []struct {
		name     string
		kind     PoolKind
		typ      tensor.DType
		p        PoolParams
		scale    float32
		zp       int64
		in, want []float64
	}{
		// (sum + count/2) / count: ties round up for uint8.
		{"avg u8 ties", PoolAverage, tensor.Uint8, win(2), 1, 0, []float64{1, 2, 0, 1, 254, 255}, []float64{2, 1, 255}},
		// int8 rounds half away from zero: -1.5 → -2, -0.5 → -1, 1.5 → 2.
		{"avg i8 ties", PoolAverage, tensor.Int8, win(2), 1, 0,
			[]float64{-1, -2, -1, 0, 1, 2, 1, 1, 0, -1, -1, 0}, []float64{-2, -1, 2, 1, -1, -1}},
		// count 3: 2/3 → 1, -2/3 → -1.
		{"avg i8 thirds", PoolAverage, tensor.Int8, win(3), 1, 0, []float64{1, 1, 0, -1, -1, 0}, []float64{1, -1}},
		{"avg i16", PoolAverage, tensor.Int16, win(2), 1, 0, []float64{-3, 0, 3, 0, 32767, 32767}, []float64{-2, 2, 32767}},
		{"max i8", PoolMax, tensor.Int8, win(3), 1, 0, []float64{-128, -128, -127, 5, -3, 4}, []float64{-127, 5}},
		// RELU6 on scale 0.5, zero point 10: clamp to [10, 22].
		{"avg u8 relu6", PoolAverage, tensor.Uint8, PoolParams{schema.PaddingVALID, 1, 1, 1, 1, schema.ActivationFunctionTypeRELU6},
			0.5, 10, []float64{0, 10, 15, 22, 200}, []float64{10, 10, 15, 22, 22}},
		// RELU on scale 0.5, zero point -5: clamp below at -5.
		{"max i8 relu", PoolMax, tensor.Int8, PoolParams{schema.PaddingVALID, 2, 1, 2, 1, schema.ActivationFunctionTypeRELU},
			0.5, -5, []float64{-9, -7, -6, 3}, []float64{-5, 3}},
		// RELU_N1_TO_1 on int16 scale 0.25: clamp to [-4, 4].
		{"max i16 relu_n1_to_1", PoolMax, tensor.Int16, PoolParams{schema.PaddingVALID, 1, 1, 1, 1, schema.ActivationFunctionTypeRELU_N1_TO_1},
			0.25, 0, []float64{-9, 3, 9}, []float64{-4, 3, 4}},
	}
	for _, c := range cases {
		p := &Pool{Kind: c.kind, Params: c.p}
		in := kerneltest.WithQ(kerneltest.ValsT(c.typ, []int{1, 1, len(c.in), 1}, c.in...), c.scale, c.zp)
		out := kerneltest.WithQ(tensor.NewTensor(c.typ), c.scale, c.zp)
		if err := kerneltest.Run1(p, out, in); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		kerneltest.CheckOutput(t, c.name, out, []int{1, 1, len(c.want), 1}, c.want)
	}
}

func TestPoolErrors(t *testing.T) {
	ok := PoolParams{schema.PaddingVALID, 1, 1, 1, 1, 0}
	cases := []struct {
		name string
		kind PoolKind
		p    PoolParams
		in   *tensor.Tensor
		out  *tensor.Tensor
	}{
		{"3-D input", PoolMax, ok, tensor.NewTensor(tensor.Float32, 2, 2, 1), tensor.NewTensor(tensor.Float32)},
		{"type mismatch", PoolMax, ok, tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), tensor.NewTensor(tensor.Uint8)},
		{"zero stride", PoolMax, PoolParams{schema.PaddingVALID, 0, 1, 1, 1, 0}, tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), tensor.NewTensor(tensor.Float32)},
		{"int32", PoolMax, ok, tensor.NewTensor(tensor.Int32, 1, 2, 2, 1), tensor.NewTensor(tensor.Int32)},
		{"quantized l2", PoolL2, ok, kerneltest.WithQ(tensor.NewTensor(tensor.Uint8, 1, 2, 2, 1), 1, 0), kerneltest.WithQ(tensor.NewTensor(tensor.Uint8), 1, 0)},
		{"filter larger than input", PoolMax, PoolParams{schema.PaddingVALID, 1, 1, 5, 5, 0}, tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), tensor.NewTensor(tensor.Float32)},
	}
	for _, c := range cases {
		if err := kerneltest.Run1(&Pool{Kind: c.kind, Params: c.p}, c.out, c.in); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestPoolOptionsFromModel(t *testing.T) {
	// Without a model the options take the schema defaults: pools then have
	// zero strides (an error, as in TFLite).
	for _, r := range Ops() {
		op, err := r.New(kernel.OpInfo{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		if o := op.(*Pool); o.Params != (PoolParams{}) {
			t.Errorf("%s: default params %+v", r.Name(), o.Params)
		}
	}
	if !errors.Is(kernel.Unsupported("x"), kernel.ErrUnsupported) {
		t.Fatal("Unsupported does not wrap ErrUnsupported")
	}
}

func TestPoolThreadsInvariant(t *testing.T) {
	// Large enough to be split across goroutines; every thread count must
	// give the same bytes.
	kerneltest.CheckThreadsInvariant(t, map[string]func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor){
		"avg float": func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor) {
			return &Pool{Kind: PoolAverage, Params: PoolParams{schema.PaddingSAME, 2, 2, 3, 3, 0}},
				[]*tensor.Tensor{kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 2, 33, 31, 40), 1)}, tensor.NewTensor(tensor.Float32)
		},
		"max int8": func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor) {
			return &Pool{Kind: PoolMax, Params: PoolParams{schema.PaddingVALID, 1, 1, 3, 3, schema.ActivationFunctionTypeRELU}},
				[]*tensor.Tensor{kerneltest.WithQ(kerneltest.LcgFill(tensor.NewTensor(tensor.Int8, 1, 40, 40, 48), 2), 0.1, 3)}, kerneltest.WithQ(tensor.NewTensor(tensor.Int8), 0.1, 3)
		},
	})
}
