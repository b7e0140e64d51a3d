package reduce

import (
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The expectations in these tests are worked out by hand from TFLite 2.9's
// rules (noted next to each case); the tricky ones were also confirmed by
// running the same single-op models through the real TFLite 2.9 library.

func TestReduceRegistrations(t *testing.T) {
	// The version ranges TFLite 2.9's BuiltinOpResolver registers (each
	// max+1 was also checked to be rejected by the real library).
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorMEAN:        {Min: 1, Max: 3},
		schema.BuiltinOperatorSUM:         {Min: 1, Max: 2},
		schema.BuiltinOperatorREDUCE_PROD: {Min: 1, Max: 2},
		schema.BuiltinOperatorREDUCE_MAX:  {Min: 1, Max: 3},
		schema.BuiltinOperatorREDUCE_MIN:  {Min: 1, Max: 3},
		schema.BuiltinOperatorREDUCE_ANY:  {Min: 1, Max: 1},
		schema.BuiltinOperatorREDUCE_ALL:  {Min: 1, Max: 1},
	}
	kerneltest.CheckRegistrations(t, reduceOps(), want)
}

func TestReduceFloat(t *testing.T) {
	x := kerneltest.SeqFrom(6, 1) // [[1 2 3] [4 5 6]]
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
		axes := kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{len(c.axes)}, c.axes...))
		if err := kerneltest.Run1(r, out, kerneltest.ValsT(tensor.Float32, []int{2, 3}, x...), axes); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		kerneltest.CheckOutput(t, c.name, out, c.shape, c.want)
	}
}

func TestReduceAxisNotConst(t *testing.T) {
	r := &Reduce{Kind: ReduceMean}
	out := tensor.NewTensor(tensor.Float32)
	in := kerneltest.ValsT(tensor.Float32, []int{2, 3}, kerneltest.SeqFrom(6, 1)...)
	axes := kerneltest.ValsT(tensor.Int32, []int{1}, 0)
	if err := kerneltest.Run1(r, out, in, axes); err != nil {
		t.Fatal(err)
	}
	if !out.Dynamic {
		t.Error("output not Dynamic for a non-constant axis")
	}
	kerneltest.CheckOutput(t, "dynamic mean", out, []int{3}, []float64{2.5, 3.5, 4.5})
}

func TestReduceIntegers(t *testing.T) {
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
		in := kerneltest.ValsT(c.typ, c.shape, c.in...)
		out := tensor.NewTensor(c.typ)
		if c.inQ[0] != 0 {
			kerneltest.WithQ(in, float32(c.inQ[0]), int64(c.inQ[1]))
			kerneltest.WithQ(out, float32(c.outQ[0]), int64(c.outQ[1]))
		}
		axes := kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{len(c.axes)}, c.axes...))
		if err := kerneltest.Run1(r, out, in, axes); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		kerneltest.CheckOutput(t, c.name, out, c.wantShape, c.want)
	}
}

func TestReduceErrors(t *testing.T) {
	x := func() *tensor.Tensor {
		return kerneltest.ValsT(tensor.Float32, []int{2, 3}, kerneltest.SeqFrom(6, 1)...)
	}
	q := func(s float32) *tensor.Tensor {
		return kerneltest.WithQ(kerneltest.ValsT(tensor.Int8, []int{2}, 1, 2), s, 0)
	}
	cases := []struct {
		name string
		kind ReduceKind
		keep bool
		in   *tensor.Tensor
		axes *tensor.Tensor
		out  *tensor.Tensor
	}{
		{"axis out of range", ReduceMean, false, x(), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 2)), tensor.NewTensor(tensor.Float32)},
		// With keep_dims TFLite only notices the bad axis in Eval.
		{"axis out of range keep", ReduceMean, true, x(), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, -3)), tensor.NewTensor(tensor.Float32)},
		{"int64 axis", ReduceSum, false, x(), kerneltest.ConstT(kerneltest.ValsT(tensor.Int64, []int{1}, 0)), tensor.NewTensor(tensor.Float32)},
		{"bool input", ReduceMean, false, kerneltest.ValsT(tensor.Bool, []int{2}, 1, 0), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 0)), tensor.NewTensor(tensor.Bool)},
		{"max needs equal quantization", ReduceMax, false, q(0.5), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 0)), kerneltest.WithQ(tensor.NewTensor(tensor.Int8), 0.25, 0)},
		{"int16 zero point", ReduceMean, false, kerneltest.WithQ(kerneltest.ValsT(tensor.Int16, []int{2}, 1, 2), 1, 3), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 0)), kerneltest.WithQ(tensor.NewTensor(tensor.Int16), 1, 3)},
	}
	for _, c := range cases {
		r := &Reduce{Kind: c.kind, Params: ReduceParams{KeepDims: c.keep}}
		if err := kerneltest.Run1(r, c.out, c.in, c.axes); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func TestReduceEmpty(t *testing.T) {
	// MEAN of an empty input is NaN; SUM is 0 and MAX the lowest float.
	for _, c := range []struct {
		kind ReduceKind
		want float64
	}{{ReduceMean, math.NaN()}, {ReduceSum, 0}, {ReduceMax, -math.MaxFloat32}} {
		r := &Reduce{Kind: c.kind, Params: ReduceParams{KeepDims: true}}
		out := tensor.NewTensor(tensor.Float32)
		err := kerneltest.Run1(r, out, tensor.NewTensor(tensor.Float32, 2, 0), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 1)))
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

func TestReduceNaN(t *testing.T) {
	// TFLite 2.9's max keeps the running value when the comparison with NaN
	// is false, so a NaN is skipped wherever it is.
	for _, vals := range [][]float64{{math.NaN(), 1, 2}, {1, math.NaN(), 2}} {
		r := &Reduce{Kind: ReduceMax}
		out := tensor.NewTensor(tensor.Float32)
		if err := kerneltest.Run1(r, out, kerneltest.ValsT(tensor.Float32, []int{3}, vals...), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1}, 0))); err != nil {
			t.Fatal(err)
		}
		if got := out.Float32s()[0]; got != 2 {
			t.Errorf("max of %v = %v, want 2", vals, got)
		}
	}
}

// TestReduceMeanFloatRowOrder holds float MEAN, whose rows of channels go
// through the pooling row kernel, to the sum TFLite's reference takes:
// each output's inputs added in row-major order, then divided by their
// count, bit for bit (a global average pool of 1152 channels, a mean over
// height only, over width and channels).
func TestReduceMeanFloatRowOrder(t *testing.T) {
	shape := []int{2, 7, 5, 1152}
	in := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, shape...), 9)
	src := in.Float32s()
	for _, axes := range [][]float64{{1, 2}, {1}, {2, 3}} {
		r := &Reduce{Kind: ReduceMean}
		out := tensor.NewTensor(tensor.Float32)
		ax := kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{len(axes)}, axes...))
		if err := kerneltest.Run1(r, out, in, ax); err != nil {
			t.Fatal(err)
		}
		reduced := func(d int) bool { return slices.Contains(axes, float64(d)) }
		sums := map[[4]int]float32{}
		var keys [][4]int
		count := 1
		for d, n := range shape {
			if reduced(d) {
				count *= n
			}
		}
		i := 0
		for a := range shape[0] {
			for b := range shape[1] {
				for c := range shape[2] {
					for d := range shape[3] {
						k := [4]int{a, b, c, d}
						for dim := range k {
							if reduced(dim) {
								k[dim] = 0
							}
						}
						if _, ok := sums[k]; !ok {
							keys = append(keys, k)
						}
						sums[k] += src[i]
						i++
					}
				}
			}
		}
		slices.SortFunc(keys, func(x, y [4]int) int { return slices.Compare(x[:], y[:]) })
		got := out.Float32s()
		for j, k := range keys {
			if want := sums[k] / float32(count); math.Float32bits(got[j]) != math.Float32bits(want) {
				t.Fatalf("MEAN over %v, output %d: %g, want %g", axes, j, got[j], want)
			}
		}
	}
}
