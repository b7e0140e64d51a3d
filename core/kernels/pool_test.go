package kernels

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/core/schema"
	"github.com/delego/delego/tensor"
)

// The expectations in these tests are worked out by hand from TFLite 2.9's
// rules (noted next to each case); the tricky ones were also confirmed by
// running the same single-op models through the real TFLite 2.9 library.

// poolCheck compares an output with the expected shape and values.
func poolCheck(t *testing.T, name string, out *tensor.Tensor, shape []int, want []float64) {
	t.Helper()
	if !slices.Equal(out.Shape, shape) {
		t.Errorf("%s: shape %v, want %v", name, out.Shape, shape)
		return
	}
	got := values(out)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-5*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s: values %v, want %v", name, got, want)
			return
		}
	}
}

func poolSeq(n int, from float64) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = from + float64(i)
	}
	return s
}

func TestPoolRegistrations(t *testing.T) {
	// The version ranges TFLite 2.9's BuiltinOpResolver registers (each
	// max+1 was also checked to be rejected by the real library).
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorAVERAGE_POOL_2D: {Min: 1, Max: 3},
		schema.BuiltinOperatorMAX_POOL_2D:     {Min: 1, Max: 3},
		schema.BuiltinOperatorL2_POOL_2D:      {Min: 1, Max: 1},
	}
	checkRegistrations(t, poolOps(), want)
}

func TestReduceRegistrations(t *testing.T) {
	// As for pooling: TFLite 2.9's ranges, max+1 checked to be rejected.
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorMEAN:        {Min: 1, Max: 3},
		schema.BuiltinOperatorSUM:         {Min: 1, Max: 2},
		schema.BuiltinOperatorREDUCE_PROD: {Min: 1, Max: 2},
		schema.BuiltinOperatorREDUCE_MAX:  {Min: 1, Max: 3},
		schema.BuiltinOperatorREDUCE_MIN:  {Min: 1, Max: 3},
	}
	checkRegistrations(t, reduceOps(), want)
}

func TestPadRegistrations(t *testing.T) {
	// As for pooling: TFLite 2.9's ranges, max+1 checked to be rejected.
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorPAD:        {Min: 1, Max: 4},
		schema.BuiltinOperatorPADV2:      {Min: 1, Max: 4},
		schema.BuiltinOperatorMIRROR_PAD: {Min: 1, Max: 2},
	}
	checkRegistrations(t, padOps(), want)
}

func TestResizeRegistrations(t *testing.T) {
	// As for pooling: TFLite 2.9's ranges, max+1 checked to be rejected.
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRESIZE_BILINEAR:         {Min: 1, Max: 4},
		schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR: {Min: 1, Max: 4},
	}
	checkRegistrations(t, resizeOps(), want)
}

func TestArgMinMaxRegistrations(t *testing.T) {
	// As for pooling: TFLite 2.9's ranges, max+1 checked to be rejected.
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorARG_MAX: {Min: 1, Max: 3},
		schema.BuiltinOperatorARG_MIN: {Min: 1, Max: 3},
	}
	checkRegistrations(t, argMinMaxOps(), want)
}

func TestPoolFloat(t *testing.T) {
	in3x3 := poolSeq(9, 1) // 1..9 in a 3x3 image
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
			poolSeq(16, 0), []int{1, 2, 2, 2}, []float64{1, 2, 5, 6, 9, 10, 13, 14}},
		{"max same", PoolMax, PoolParams{schema.PaddingSAME, 1, 1, 2, 2, 0}, []int{1, 3, 3, 1},
			poolSeq(9, -5), []int{1, 3, 3, 1}, []float64{-1, 0, 0, 2, 3, 3, 2, 3, 3}},
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
		if err := run1(p, out, valsT(tensor.Float32, c.shape, c.in...)); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		poolCheck(t, c.name, out, c.oShp, c.want)
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
		in := withQ(valsT(c.typ, []int{1, 1, len(c.in), 1}, c.in...), c.scale, c.zp)
		out := withQ(tensor.NewTensor(c.typ), c.scale, c.zp)
		if err := run1(p, out, in); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		poolCheck(t, c.name, out, []int{1, 1, len(c.want), 1}, c.want)
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
		{"quantized l2", PoolL2, ok, withQ(tensor.NewTensor(tensor.Uint8, 1, 2, 2, 1), 1, 0), withQ(tensor.NewTensor(tensor.Uint8), 1, 0)},
		{"filter larger than input", PoolMax, PoolParams{schema.PaddingVALID, 1, 1, 5, 5, 0}, tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), tensor.NewTensor(tensor.Float32)},
	}
	for _, c := range cases {
		if err := run1(&Pool{Kind: c.kind, Params: c.p}, c.out, c.in); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestPoolReduceFloat(t *testing.T) {
	x := poolSeq(6, 1) // [[1 2 3] [4 5 6]]
	cases := []struct {
		name  string
		kind  ReduceKind
		keep  bool
		axes  []float64
		shape []int
		want  []float64
	}{
		{"mean axis 1", ReduceMean, false, []float64{1}, []int{2}, []float64{2, 5}},
		{"mean axis 0 keep", ReduceMean, true, []float64{0}, []int{1, 3}, []float64{2.5, 3.5, 4.5}},
		{"mean negative and duplicate axes", ReduceMean, false, []float64{-1, 1}, []int{2}, []float64{2, 5}},
		{"mean all", ReduceMean, false, []float64{0, 1}, []int{}, []float64{3.5}},
		{"mean all keep", ReduceMean, true, []float64{1, 0}, []int{1, 1}, []float64{3.5}},
		{"mean no axes", ReduceMean, false, nil, []int{2, 3}, x},
		{"sum axis 0", ReduceSum, false, []float64{0}, []int{3}, []float64{5, 7, 9}},
		{"prod axis 1", ReduceProd, true, []float64{-1}, []int{2, 1}, []float64{6, 120}},
		{"max axis 0", ReduceMax, false, []float64{0}, []int{3}, []float64{4, 5, 6}},
		{"min all", ReduceMin, false, []float64{1, 0}, []int{}, []float64{1}},
	}
	for _, c := range cases {
		r := &Reduce{Kind: c.kind, Params: ReduceParams{KeepDims: c.keep}}
		out := tensor.NewTensor(tensor.Float32)
		axes := constT(valsT(tensor.Int32, []int{len(c.axes)}, c.axes...))
		if err := run1(r, out, valsT(tensor.Float32, []int{2, 3}, x...), axes); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		poolCheck(t, c.name, out, c.shape, c.want)
	}
}

func TestPoolReduceAxisNotConst(t *testing.T) {
	r := &Reduce{Kind: ReduceMean}
	out := tensor.NewTensor(tensor.Float32)
	in := valsT(tensor.Float32, []int{2, 3}, poolSeq(6, 1)...)
	axes := valsT(tensor.Int32, []int{1}, 0)
	if err := run1(r, out, in, axes); err != nil {
		t.Fatal(err)
	}
	if !out.Dynamic {
		t.Error("output not Dynamic for a non-constant axis")
	}
	poolCheck(t, "dynamic mean", out, []int{3}, []float64{2.5, 3.5, 4.5})
}

func TestPoolReduceIntegers(t *testing.T) {
	type tc struct {
		name      string
		kind      ReduceKind
		typ       tensor.DType
		keep      bool
		shape     []int
		axes      []float64
		in        []float64
		inQ, outQ [2]float64 // scale, zero point; scale 0 = not quantized
		wantShape []int
		want      []float64
	}
	ax12 := []float64{1, 2}
	cases := []tc{
		// Integer means truncate toward zero.
		{"mean int32", ReduceMean, tensor.Int32, false, []int{2, 2}, []float64{1}, []float64{1, 2, -1, -2}, [2]float64{}, [2]float64{}, []int{2}, []float64{1, -1}},
		{"mean int64", ReduceMean, tensor.Int64, false, []int{3}, []float64{0}, []float64{1, 1, 2}, [2]float64{}, [2]float64{}, []int{}, []float64{1}},
		// 4-D spatial mean with keep_dims: integer rescale, then
		// (acc ± n/2) / n: 0.25 → 0, 0.5 → 1, -0.5 → -1, 2.25 → 2.
		{"mean int8 4-D keep", ReduceMean, tensor.Int8, true, []int{4, 2, 2, 1}, ax12,
			[]float64{1, 0, 0, 0, 1, 1, 0, 0, -1, -1, 0, 0, 1, 2, 3, 3}, [2]float64{1, 0}, [2]float64{1, 0},
			[]int{4, 1, 1, 1}, []float64{0, 1, -1, 2}},
		// Same data without keep_dims: equal quantization takes the
		// truncating integer mean (0.5 → 0).
		{"mean int8 truncating", ReduceMean, tensor.Int8, false, []int{4, 2, 2, 1}, ax12,
			[]float64{1, 0, 0, 0, 1, 1, 0, 0, -1, -1, 0, 0, 1, 2, 3, 3}, [2]float64{1, 0}, [2]float64{1, 0},
			[]int{4, 1}, []float64{0, 0, 0, 2}},
		// UINT8 4-D: sum · (1/4) in fixed point with double rounding makes
		// 0.25 → 1 (round(1·0.5) = 1, then 1/2 → 1).
		{"mean uint8 4-D keep", ReduceMean, tensor.Uint8, true, []int{2, 2, 2, 1}, ax12,
			[]float64{1, 0, 0, 0, 1, 1, 0, 0}, [2]float64{1, 0}, [2]float64{1, 0}, []int{2, 1, 1, 1}, []float64{1, 1}},
		// UINT8 4-D with a rescale: bias = zp_out - round(zp_in·s_in/s_out)
		// = 3 - round(10·0.5/0.25) = -17; mean of raw (20+22+30+40)/4 = 28
		// scaled by 2 → 56; 56 - 17 = 39.
		{"mean uint8 4-D rescale", ReduceMean, tensor.Uint8, true, []int{1, 2, 2, 1}, ax12,
			[]float64{20, 22, 30, 40}, [2]float64{0.5, 10}, [2]float64{0.25, 3}, []int{1, 1, 1, 1}, []float64{39}},
		// Different quantization elsewhere: float mean, rounded half away
		// from zero: rows [1 0] [-1 0] [1 2] at scale 0.5 into scale
		// 0.25, zero point 1: 1+1, -1+1, 3+1.
		{"mean int8 float path", ReduceMean, tensor.Int8, false, []int{3, 2}, []float64{1},
			[]float64{1, 0, -1, 0, 1, 2}, [2]float64{0.5, 0}, [2]float64{0.25, 1}, []int{3}, []float64{2, 0, 4}},
		{"mean int16 4-D", ReduceMean, tensor.Int16, true, []int{1, 2, 2, 1}, ax12,
			[]float64{1000, 1001, -7, 2}, [2]float64{0.5, 0}, [2]float64{0.25, 0}, []int{1, 1, 1, 1}, []float64{998}},
		// SUM with rescale does not clamp: 381 · 2 = 762 wraps to -6.
		{"sum int8 wraps", ReduceSum, tensor.Int8, false, []int{3}, []float64{0}, []float64{127, 127, 127},
			[2]float64{1, 0}, [2]float64{0.5, 0}, []int{}, []float64{-6}},
		// Same quantization: summed in uint8, 300 wraps to 44.
		{"sum uint8 same scale", ReduceSum, tensor.Uint8, false, []int{2}, []float64{0}, []float64{200, 100},
			[2]float64{1, 0}, [2]float64{1, 0}, []int{}, []float64{44}},
		{"sum int32", ReduceSum, tensor.Int32, true, []int{2, 2}, []float64{0}, []float64{1, 2, 3, 4}, [2]float64{}, [2]float64{}, []int{1, 2}, []float64{4, 6}},
		// Quantized product, rescaled after every step: (1·2) → 2 at scale 1.
		{"prod int8 quantized", ReduceProd, tensor.Int8, false, []int{2}, []float64{0}, []float64{2, 4},
			[2]float64{0.5, 0}, [2]float64{1, 0}, []int{}, []float64{2}},
		{"prod int32 wraps", ReduceProd, tensor.Int32, false, []int{2}, []float64{0}, []float64{65536, 65536},
			[2]float64{}, [2]float64{}, []int{}, []float64{0}},
		{"max int8", ReduceMax, tensor.Int8, true, []int{2, 2}, []float64{1}, []float64{-128, -5, 7, 3},
			[2]float64{0.1, 2}, [2]float64{0.1, 2}, []int{2, 1}, []float64{-5, 7}},
		{"min uint8", ReduceMin, tensor.Uint8, false, []int{2, 2}, []float64{0}, []float64{9, 0, 4, 255},
			[2]float64{0.1, 2}, [2]float64{0.1, 2}, []int{2}, []float64{4, 0}},
	}
	for _, c := range cases {
		r := &Reduce{Kind: c.kind, Params: ReduceParams{KeepDims: c.keep}}
		in := valsT(c.typ, c.shape, c.in...)
		out := tensor.NewTensor(c.typ)
		if c.inQ[0] != 0 {
			withQ(in, float32(c.inQ[0]), int64(c.inQ[1]))
			withQ(out, float32(c.outQ[0]), int64(c.outQ[1]))
		}
		axes := constT(valsT(tensor.Int32, []int{len(c.axes)}, c.axes...))
		if err := run1(r, out, in, axes); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		poolCheck(t, c.name, out, c.wantShape, c.want)
	}
}

func TestPoolReduceErrors(t *testing.T) {
	x := func() *tensor.Tensor { return valsT(tensor.Float32, []int{2, 3}, poolSeq(6, 1)...) }
	q := func(s float32) *tensor.Tensor { return withQ(valsT(tensor.Int8, []int{2}, 1, 2), s, 0) }
	cases := []struct {
		name string
		kind ReduceKind
		keep bool
		in   *tensor.Tensor
		axes *tensor.Tensor
		out  *tensor.Tensor
	}{
		{"axis out of range", ReduceMean, false, x(), constT(valsT(tensor.Int32, []int{1}, 2)), tensor.NewTensor(tensor.Float32)},
		// With keep_dims TFLite only notices the bad axis in Eval.
		{"axis out of range keep", ReduceMean, true, x(), constT(valsT(tensor.Int32, []int{1}, -3)), tensor.NewTensor(tensor.Float32)},
		{"int64 axis", ReduceSum, false, x(), constT(valsT(tensor.Int64, []int{1}, 0)), tensor.NewTensor(tensor.Float32)},
		{"bool input", ReduceMean, false, valsT(tensor.Bool, []int{2}, 1, 0), constT(valsT(tensor.Int32, []int{1}, 0)), tensor.NewTensor(tensor.Bool)},
		{"max needs equal quantization", ReduceMax, false, q(0.5), constT(valsT(tensor.Int32, []int{1}, 0)), withQ(tensor.NewTensor(tensor.Int8), 0.25, 0)},
		{"int16 zero point", ReduceMean, false, withQ(valsT(tensor.Int16, []int{2}, 1, 2), 1, 3), constT(valsT(tensor.Int32, []int{1}, 0)), withQ(tensor.NewTensor(tensor.Int16), 1, 3)},
	}
	for _, c := range cases {
		r := &Reduce{Kind: c.kind, Params: ReduceParams{KeepDims: c.keep}}
		if err := run1(r, c.out, c.in, c.axes); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestPoolReduceEmpty(t *testing.T) {
	// MEAN of an empty input is NaN; SUM is 0 and MAX the lowest float.
	for _, c := range []struct {
		kind ReduceKind
		want float64
	}{{ReduceMean, math.NaN()}, {ReduceSum, 0}, {ReduceMax, -math.MaxFloat32}} {
		r := &Reduce{Kind: c.kind, Params: ReduceParams{KeepDims: true}}
		out := tensor.NewTensor(tensor.Float32)
		err := run1(r, out, tensor.NewTensor(tensor.Float32, 2, 0), constT(valsT(tensor.Int32, []int{1}, 1)))
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		got := out.Float32s()
		if !slices.Equal(out.Shape, []int{2, 1}) || len(got) != 2 {
			t.Fatalf("%s: shape %v", c.kind, out.Shape)
		}
		if math.IsNaN(c.want) != math.IsNaN(float64(got[0])) || (!math.IsNaN(c.want) && float64(got[0]) != float64(float32(c.want))) {
			t.Errorf("%s: %v, want %v", c.kind, got, c.want)
		}
	}
}

func TestPoolReduceNaN(t *testing.T) {
	// TFLite 2.9's max keeps the running value when the comparison with NaN
	// is false, so a NaN is skipped wherever it is.
	for _, vals := range [][]float64{{math.NaN(), 1, 2}, {1, math.NaN(), 2}} {
		r := &Reduce{Kind: ReduceMax}
		out := tensor.NewTensor(tensor.Float32)
		if err := run1(r, out, valsT(tensor.Float32, []int{3}, vals...), constT(valsT(tensor.Int32, []int{1}, 0))); err != nil {
			t.Fatal(err)
		}
		if got := out.Float32s()[0]; got != 2 {
			t.Errorf("max of %v = %v, want 2", vals, got)
		}
	}
}

func TestPoolPad(t *testing.T) {
	x := func() *tensor.Tensor { return valsT(tensor.Float32, []int{2, 2}, 1, 2, 3, 4) }
	pads := func(typ tensor.DType, v ...float64) *tensor.Tensor {
		return constT(valsT(typ, []int{len(v) / 2, 2}, v...))
	}
	t.Run("float", func(t *testing.T) {
		out := tensor.NewTensor(tensor.Float32)
		if err := run1(&Pad{}, out, x(), pads(tensor.Int32, 1, 0, 0, 2)); err != nil {
			t.Fatal(err)
		}
		poolCheck(t, "pad", out, []int{3, 4}, []float64{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0})
	})
	t.Run("zero paddings", func(t *testing.T) {
		out := tensor.NewTensor(tensor.Float32)
		if err := run1(&Pad{}, out, x(), pads(tensor.Int32, 0, 0, 0, 0)); err != nil {
			t.Fatal(err)
		}
		poolCheck(t, "identity", out, []int{2, 2}, []float64{1, 2, 3, 4})
	})
	t.Run("negative paddings", func(t *testing.T) {
		if err := run1(&Pad{}, tensor.NewTensor(tensor.Float32), x(), pads(tensor.Int32, 0, -1, 0, 0)); err == nil {
			t.Error("no error for a negative padding")
		}
		// Non-constant paddings are checked in Eval.
		p := valsT(tensor.Int32, []int{2, 2}, 0, 0, -1, 0)
		if err := run1(&Pad{}, tensor.NewTensor(tensor.Float32), x(), p); err == nil {
			t.Error("no error for a negative non-constant padding")
		}
	})
	t.Run("bad paddings shape", func(t *testing.T) {
		if err := run1(&Pad{}, tensor.NewTensor(tensor.Float32), x(), constT(valsT(tensor.Int32, []int{4}, 0, 0, 0, 0))); err == nil {
			t.Error("no error for 1-D paddings")
		}
	})
	t.Run("six dimensions", func(t *testing.T) {
		in := tensor.NewTensor(tensor.Float32, 1, 1, 1, 1, 1, 1)
		if err := run1(&Pad{}, tensor.NewTensor(tensor.Float32), in, pads(tensor.Int32, make([]float64, 12)...)); err == nil {
			t.Error("no error for a 6-D input")
		}
	})
	t.Run("quantized zero point", func(t *testing.T) {
		in := withQ(valsT(tensor.Uint8, []int{3}, 1, 2, 3), 0.5, 7)
		out := withQ(tensor.NewTensor(tensor.Uint8), 0.5, 7)
		if err := run1(&Pad{}, out, in, pads(tensor.Int32, 1, 2)); err != nil {
			t.Fatal(err)
		}
		poolCheck(t, "uint8", out, []int{6}, []float64{7, 1, 2, 3, 7, 7})
	})
	t.Run("padv2 constant", func(t *testing.T) {
		in := withQ(valsT(tensor.Int8, []int{2}, -1, 1), 0.5, -3)
		out := withQ(tensor.NewTensor(tensor.Int8), 0.5, -3)
		cv := constT(withQ(valsT(tensor.Int8, []int{}, 9), 0.5, -3))
		if err := run1(&Pad{}, out, in, pads(tensor.Int32, 1, 1), cv); err != nil {
			t.Fatal(err)
		}
		poolCheck(t, "int8", out, []int{4}, []float64{9, -1, 1, 9})
		badCV := constT(withQ(valsT(tensor.Int8, []int{}, 9), 0.5, -2))
		if err := run1(&Pad{}, withQ(tensor.NewTensor(tensor.Int8), 0.5, -3), in, pads(tensor.Int32, 1, 1), badCV); err == nil {
			t.Error("no error for a constant with another zero point")
		}
	})
	t.Run("dynamic", func(t *testing.T) {
		out := tensor.NewTensor(tensor.Int64)
		in := valsT(tensor.Int64, []int{1, 2}, 5, 6)
		if err := run1(&Pad{}, out, in, valsT(tensor.Int32, []int{2, 2}, 1, 0, 0, 1), constT(valsT(tensor.Int64, []int{1}, -1))); err != nil {
			t.Fatal(err)
		}
		poolCheck(t, "dynamic", out, []int{2, 3}, []float64{-1, -1, -1, 5, 6, -1})
	})
	t.Run("int64 paddings read as int32", func(t *testing.T) {
		// TFLite 2.9 reads the paddings buffer as int32 whatever its type:
		// INT64 [[1 1] [2 2]] is seen as [[1 0] [1 0]].
		out := tensor.NewTensor(tensor.Float32)
		if err := run1(&Pad{}, out, x(), pads(tensor.Int64, 1, 1, 2, 2)); err != nil {
			t.Fatal(err)
		}
		poolCheck(t, "int64", out, []int{3, 3}, []float64{0, 0, 0, 0, 1, 2, 0, 3, 4})
	})
}

func TestPoolMirrorPad(t *testing.T) {
	row := func() *tensor.Tensor { return valsT(tensor.Int32, []int{3}, 1, 2, 3) }
	cases := []struct {
		name string
		mode schema.MirrorPadMode
		in   *tensor.Tensor
		pads []float64
		typ  tensor.DType
		shp  []int
		want []float64
	}{
		{"reflect", schema.MirrorPadModeREFLECT, row(), []float64{2, 2}, tensor.Int32, []int{7}, []float64{3, 2, 1, 2, 3, 2, 1}},
		{"symmetric", schema.MirrorPadModeSYMMETRIC, row(), []float64{2, 3}, tensor.Int64, []int{8}, []float64{2, 1, 1, 2, 3, 3, 2, 1}},
		{"reflect 2-D", schema.MirrorPadModeREFLECT, valsT(tensor.Float32, []int{2, 3}, 1, 2, 3, 4, 5, 6), []float64{1, 0, 0, 1}, tensor.Int32,
			[]int{3, 4}, []float64{4, 5, 6, 5, 1, 2, 3, 2, 4, 5, 6, 5}},
		// A negative padding crops, as TFLite lets it.
		{"negative", schema.MirrorPadModeREFLECT, valsT(tensor.Uint8, []int{2, 3}, 1, 2, 3, 4, 5, 6), []float64{-1, 0, 0, 0}, tensor.Int32,
			[]int{1, 3}, []float64{4, 5, 6}},
	}
	for _, c := range cases {
		m := &MirrorPad{Params: MirrorPadParams{Mode: c.mode}}
		out := tensor.NewTensor(c.in.Type)
		p := constT(valsT(c.typ, []int{len(c.pads) / 2, 2}, c.pads...))
		if err := run1(m, out, c.in, p); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		poolCheck(t, c.name, out, c.shp, c.want)
	}
	if err := run1(&MirrorPad{}, tensor.NewTensor(tensor.Int16), valsT(tensor.Int16, []int{2}, 1, 2), constT(valsT(tensor.Int32, []int{1, 2}, 1, 1))); err == nil {
		t.Error("no error for INT16, which TFLite 2.9 rejects")
	}
}

func TestPoolResizeBilinear(t *testing.T) {
	none, align, half := ResizeParams{}, ResizeParams{AlignCorners: true}, ResizeParams{HalfPixelCenters: true}
	cases := []struct {
		name  string
		p     ResizeParams
		typ   tensor.DType
		in    []float64
		inShp []int
		size  [2]float64
		want  []float64
	}{
		// Source x = 0.5·x: 0, 0.5, 1, 1.5 (clamped to the last pixel).
		{"float", none, tensor.Float32, []float64{0, 10}, []int{1, 1, 2, 1}, [2]float64{1, 4}, []float64{0, 5, 10, 10}},
		// align_corners: x·(1/3).
		{"float align", align, tensor.Float32, []float64{0, 10}, []int{1, 1, 2, 1}, [2]float64{1, 4}, []float64{0, 10.0 / 3, 20.0 / 3, 10}},
		// half_pixel_centers: (x+0.5)·0.5-0.5 = -0.25, 0.25, 0.75, 1.25.
		{"float half", half, tensor.Float32, []float64{0, 10}, []int{1, 1, 2, 1}, [2]float64{1, 4}, []float64{0, 2.5, 7.5, 10}},
		// Exact 2x: TFLite's 2x2 kernel (averages of neighbours).
		{"float 2x", none, tensor.Float32, []float64{0, 4, 8, 12}, []int{1, 2, 2, 1}, [2]float64{4, 4},
			[]float64{0, 2, 4, 4, 4, 6, 8, 8, 8, 10, 12, 12, 8, 10, 12, 12}},
		// uint8: float interpolation, then +0.5 and truncation.
		{"uint8 half", half, tensor.Uint8, []float64{0, 10}, []int{1, 1, 2, 1}, [2]float64{1, 4}, []float64{0, 3, 8, 10}},
		// int8: 10-bit fixed point, rounding half away from zero.
		{"int8 half", half, tensor.Int8, []float64{0, -10}, []int{1, 1, 2, 1}, [2]float64{1, 4}, []float64{0, -3, -8, -10}},
		{"int16 align", align, tensor.Int16, []float64{0, 300}, []int{1, 1, 2, 1}, [2]float64{1, 3}, []float64{0, 150, 300}},
		// Downscale 1x4 → 1x2: source x 0 and 2.
		{"uint8 down", none, tensor.Uint8, []float64{10, 20, 30, 40}, []int{1, 1, 4, 1}, [2]float64{1, 2}, []float64{10, 30}},
	}
	for _, c := range cases {
		r := &ResizeBilinear{Params: c.p}
		in := valsT(c.typ, c.inShp, c.in...)
		out := tensor.NewTensor(c.typ)
		if c.typ != tensor.Float32 {
			withQ(in, 1, 0)
			withQ(out, 1, 0)
		}
		size := constT(valsT(tensor.Int32, []int{2}, c.size[0], c.size[1]))
		if err := run1(r, out, in, size); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		poolCheck(t, c.name, out, []int{c.inShp[0], int(c.size[0]), int(c.size[1]), c.inShp[3]}, c.want)
	}
	// Both flags are refused when the size is constant.
	r := &ResizeBilinear{Params: ResizeParams{AlignCorners: true, HalfPixelCenters: true}}
	if err := run1(r, tensor.NewTensor(tensor.Float32), tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), constT(valsT(tensor.Int32, []int{2}, 3, 3))); err == nil {
		t.Error("no error for align_corners with half_pixel_centers")
	}
	if err := run1(&ResizeBilinear{}, tensor.NewTensor(tensor.Float32), tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), constT(valsT(tensor.Int32, []int{2}, 0, 3))); err == nil {
		t.Error("no error for a zero output size")
	}
}

func TestPoolResizeBilinear8x(t *testing.T) {
	// TFLite's uint8 x8 half-pixel kernel steps in 8.8 fixed point. Along a
	// row from 0 to 255 the 8 outputs of the span sit at 1/16, 3/16, ...
	// 15/16 of the step: (128 + k·(255<<4)) >> 8 for odd k, after four
	// copies of the edge pixel on each side.
	in := withQ(valsT(tensor.Uint8, []int{1, 1, 2, 8}, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255), 1, 0)
	out := withQ(tensor.NewTensor(tensor.Uint8), 1, 0)
	r := &ResizeBilinear{Params: ResizeParams{HalfPixelCenters: true}}
	if err := run1(r, out, in, constT(valsT(tensor.Int32, []int{2}, 8, 16))); err != nil {
		t.Fatal(err)
	}
	var want []float64
	for range 4 {
		want = append(want, 0)
	}
	for k := 1; k < 16; k += 2 {
		want = append(want, math.Floor((128+float64(k)*4080)/256))
	}
	for range 4 {
		want = append(want, 255)
	}
	got := values(out)
	for row := range 8 {
		for x := range 16 {
			if g := got[(row*16+x)*8+3]; g != want[x] {
				t.Fatalf("row %d x %d: %v, want %v (row %v)", row, x, g, want[x], want)
			}
		}
	}
}

func TestPoolResizeNearest(t *testing.T) {
	none, align, half := ResizeParams{}, ResizeParams{AlignCorners: true}, ResizeParams{HalfPixelCenters: true}
	row := []float64{1, 2, 3}
	cases := []struct {
		name string
		p    ResizeParams
		typ  tensor.DType
		want []float64
	}{
		// floor(x·0.6): 0, 0, 1, 1, 2.
		{"float", none, tensor.Float32, []float64{1, 1, 2, 2, 3}},
		// round(x·0.5), half away from zero: 0, 1, 1, 2, 2.
		{"align", align, tensor.Float32, []float64{1, 2, 2, 3, 3}},
		// floor((x+0.5)·0.6): 0, 0, 1, 2, 2.
		{"half", half, tensor.Int8, []float64{1, 1, 2, 3, 3}},
		{"uint8 fixed point", none, tensor.Uint8, []float64{1, 1, 2, 2, 3}},
		{"int16 align", align, tensor.Int16, []float64{1, 2, 2, 3, 3}},
	}
	for _, c := range cases {
		r := &ResizeNearestNeighbor{Params: c.p}
		out := tensor.NewTensor(c.typ)
		if err := run1(r, out, valsT(c.typ, []int{1, 1, 3, 1}, row...), constT(valsT(tensor.Int32, []int{2}, 1, 5))); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		poolCheck(t, c.name, out, []int{1, 1, 5, 1}, c.want)
	}
	// 6 → 74 columns, column 37: the float rule gives floor(37·6/74) = 2
	// (37·0.08108108 rounds below 3), the uint8 kernel's 16-bit scale
	// (6<<16)/74+1 gives 3.
	for _, c := range []struct {
		typ  tensor.DType
		want float64
	}{{tensor.Int8, 2}, {tensor.Uint8, 3}} {
		out := tensor.NewTensor(c.typ)
		if err := run1(&ResizeNearestNeighbor{}, out, valsT(c.typ, []int{1, 1, 6, 1}, 0, 1, 2, 3, 4, 5), constT(valsT(tensor.Int32, []int{2}, 1, 74))); err != nil {
			t.Fatal(err)
		}
		if got := values(out)[37]; got != c.want {
			t.Errorf("%s column 37: %v, want %v", c.typ, got, c.want)
		}
	}
	// A size that is not constant makes the output Dynamic.
	out := tensor.NewTensor(tensor.Float32)
	if err := run1(&ResizeNearestNeighbor{}, out, valsT(tensor.Float32, []int{1, 1, 3, 1}, row...), valsT(tensor.Int32, []int{2}, 2, 2)); err != nil {
		t.Fatal(err)
	}
	if !out.Dynamic {
		t.Error("output not Dynamic")
	}
	poolCheck(t, "dynamic", out, []int{1, 2, 2, 1}, []float64{1, 2, 1, 2})
}

func TestPoolArgMinMax(t *testing.T) {
	cases := []struct {
		name  string
		isMax bool
		outT  tensor.DType
		in    *tensor.Tensor
		axis  *tensor.Tensor
		shp   []int
		want  []float64
	}{
		// Ties keep the lowest index.
		{"argmax ties", true, tensor.Int32, valsT(tensor.Float32, []int{3}, 3, 1, 3), valsT(tensor.Int32, []int{1}, 0), []int{}, []float64{0}},
		{"argmin ties", false, tensor.Int64, valsT(tensor.Int8, []int{3}, 2, 1, 1), valsT(tensor.Int64, []int{1}, 0), []int{}, []float64{1}},
		{"argmax axis 0", true, tensor.Int32, valsT(tensor.Int32, []int{2, 2}, 1, 5, 4, 5), valsT(tensor.Int32, []int{1}, 0), []int{2}, []float64{1, 0}},
		{"argmin axis -1", false, tensor.Int32, valsT(tensor.Uint8, []int{2, 3}, 9, 0, 0, 7, 8, 6), valsT(tensor.Int32, []int{1}, -1), []int{2}, []float64{1, 2}},
		{"argmax bool", true, tensor.Int32, valsT(tensor.Bool, []int{4}, 0, 0, 1, 1), valsT(tensor.Int32, []int{1}, 0), []int{}, []float64{2}},
		{"argmax middle axis", true, tensor.Int64, valsT(tensor.Float32, []int{2, 2, 2}, 1, 2, 3, 0, -1, -2, -3, -4), valsT(tensor.Int32, []int{1}, 1), []int{2, 2}, []float64{1, 0, 0, 0}},
	}
	for _, c := range cases {
		for _, constAxis := range []bool{true, false} {
			a := &ArgMinMax{IsMax: c.isMax, Params: ArgMinMaxParams{OutputType: c.outT}}
			axis := *c.axis
			axis.Const = constAxis
			out := tensor.NewTensor(c.outT)
			if err := run1(a, out, c.in, &axis); err != nil {
				t.Errorf("%s: %v", c.name, err)
				continue
			}
			if out.Dynamic == constAxis {
				t.Errorf("%s: Dynamic = %v with constant axis %v", c.name, out.Dynamic, constAxis)
			}
			poolCheck(t, c.name, out, c.shp, c.want)
		}
	}
	bad := []struct {
		name string
		a    *ArgMinMax
		in   *tensor.Tensor
		axis *tensor.Tensor
		out  *tensor.Tensor
	}{
		{"float index type", &ArgMinMax{IsMax: true, Params: ArgMinMaxParams{OutputType: tensor.Float32}}, valsT(tensor.Float32, []int{2}, 1, 2), constT(valsT(tensor.Int32, []int{1}, 0)), tensor.NewTensor(tensor.Float32)},
		{"axis out of range", &ArgMinMax{IsMax: true, Params: ArgMinMaxParams{OutputType: tensor.Int32}}, valsT(tensor.Float32, []int{2}, 1, 2), constT(valsT(tensor.Int32, []int{1}, 1)), tensor.NewTensor(tensor.Int32)},
		{"int64 input", &ArgMinMax{Params: ArgMinMaxParams{OutputType: tensor.Int32}}, valsT(tensor.Int64, []int{2}, 1, 2), constT(valsT(tensor.Int32, []int{1}, 0)), tensor.NewTensor(tensor.Int32)},
		{"two axis values", &ArgMinMax{Params: ArgMinMaxParams{OutputType: tensor.Int32}}, valsT(tensor.Float32, []int{2}, 1, 2), constT(valsT(tensor.Int32, []int{2}, 0, 0)), tensor.NewTensor(tensor.Int32)},
	}
	for _, c := range bad {
		if err := run1(c.a, c.out, c.in, c.axis); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestPoolOptionsFromModel(t *testing.T) {
	// Without a model the options take the schema defaults: pools then have
	// zero strides (an error, as in TFLite).
	for _, r := range poolOps() {
		op, err := r.New(OpInfo{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		if o := op.(*Pool); o.Params != (PoolParams{}) {
			t.Errorf("%s: default params %+v", r.Name(), o.Params)
		}
	}
	if !errors.Is(Unsupported("x"), ErrUnsupported) {
		t.Fatal("Unsupported does not wrap ErrUnsupported")
	}
}

func TestArgMinMaxOptionsFromModel(t *testing.T) {
	// Without a model the options take the schema defaults: ARG_MAX and
	// ARG_MIN then have no valid index type.
	for _, r := range argMinMaxOps() {
		op, err := r.New(OpInfo{Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		err = run1(op, tensor.NewTensor(tensor.Int32), valsT(tensor.Float32, []int{2}, 1, 2), constT(valsT(tensor.Int32, []int{1}, 0)))
		if err == nil {
			t.Errorf("%s: no error without an output_type", r.Name())
		}
	}
}

// poolLCG fills a tensor with a deterministic pseudo-random byte pattern.
func poolLCG(t *tensor.Tensor, seed uint32) *tensor.Tensor {
	s := seed
	for i := range t.Data {
		s = s*1664525 + 1013904223
		t.Data[i] = byte(s >> 24)
	}
	if t.Type == tensor.Float32 {
		f := t.Float32s()
		for i := range f {
			s = s*1664525 + 1013904223
			f[i] = float32(s>>8)/(1<<24)*2 - 1
		}
	}
	return t
}

func TestPoolThreadsInvariant(t *testing.T) {
	// Large enough to be split across goroutines; every thread count must
	// give the same bytes.
	type mk func() (Op, []*tensor.Tensor, *tensor.Tensor)
	cases := map[string]mk{
		"avg float": func() (Op, []*tensor.Tensor, *tensor.Tensor) {
			return &Pool{Kind: PoolAverage, Params: PoolParams{schema.PaddingSAME, 2, 2, 3, 3, 0}},
				[]*tensor.Tensor{poolLCG(tensor.NewTensor(tensor.Float32, 2, 33, 31, 40), 1)}, tensor.NewTensor(tensor.Float32)
		},
		"max int8": func() (Op, []*tensor.Tensor, *tensor.Tensor) {
			return &Pool{Kind: PoolMax, Params: PoolParams{schema.PaddingVALID, 1, 1, 3, 3, schema.ActivationFunctionTypeRELU}},
				[]*tensor.Tensor{withQ(poolLCG(tensor.NewTensor(tensor.Int8, 1, 40, 40, 48), 2), 0.1, 3)}, withQ(tensor.NewTensor(tensor.Int8), 0.1, 3)
		},
		"bilinear float": func() (Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{Params: ResizeParams{HalfPixelCenters: true}},
				[]*tensor.Tensor{poolLCG(tensor.NewTensor(tensor.Float32, 2, 17, 13, 16), 3), constT(valsT(tensor.Int32, []int{2}, 61, 47))}, tensor.NewTensor(tensor.Float32)
		},
		"bilinear float 2x": func() (Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{}, []*tensor.Tensor{poolLCG(tensor.NewTensor(tensor.Float32, 1, 40, 40, 16), 4), constT(valsT(tensor.Int32, []int{2}, 80, 80))}, tensor.NewTensor(tensor.Float32)
		},
		"bilinear uint8": func() (Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{Params: ResizeParams{AlignCorners: true}},
				[]*tensor.Tensor{withQ(poolLCG(tensor.NewTensor(tensor.Uint8, 1, 20, 30, 24), 5), 1, 0), constT(valsT(tensor.Int32, []int{2}, 77, 55))}, withQ(tensor.NewTensor(tensor.Uint8), 1, 0)
		},
		"bilinear int8": func() (Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{}, []*tensor.Tensor{withQ(poolLCG(tensor.NewTensor(tensor.Int8, 1, 20, 30, 24), 6), 1, 0), constT(valsT(tensor.Int32, []int{2}, 77, 55))}, withQ(tensor.NewTensor(tensor.Int8), 1, 0)
		},
	}
	for name, mkOp := range cases {
		var ref []byte
		for _, threads := range []int{1, 3, 8} {
			op, ins, out := mkOp()
			n := &Node{Inputs: ins, Outputs: []*tensor.Tensor{out}, Threads: threads}
			if err := op.Prepare(n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
			if err := op.Eval(n); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ref == nil {
				ref = out.Data
			} else if string(ref) != string(out.Data) {
				t.Errorf("%s: %d threads differ from 1", name, threads)
			}
		}
	}
}
