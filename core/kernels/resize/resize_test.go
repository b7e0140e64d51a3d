package resize

import (
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

func TestResizeRegistrations(t *testing.T) {
	// The version ranges TFLite 2.9's BuiltinOpResolver registers (each
	// max+1 was also checked to be rejected by the real library).
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRESIZE_BILINEAR:         {Min: 1, Max: 4},
		schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR: {Min: 1, Max: 4},
	}
	kerneltest.CheckRegistrations(t, Ops(), want)
}

func TestResizeBilinear(t *testing.T) {
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
		in := kerneltest.ValsT(c.typ, c.inShp, c.in...)
		out := tensor.NewTensor(c.typ)
		if c.typ != tensor.Float32 {
			kerneltest.WithQ(in, 1, 0)
			kerneltest.WithQ(out, 1, 0)
		}
		size := kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, c.size[0], c.size[1]))
		if err := kerneltest.Run1(r, out, in, size); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		kerneltest.CheckOutput(t, c.name, out, []int{c.inShp[0], int(c.size[0]), int(c.size[1]), c.inShp[3]}, c.want)
	}
	// Both flags are refused when the size is constant.
	r := &ResizeBilinear{Params: ResizeParams{AlignCorners: true, HalfPixelCenters: true}}
	if err := kerneltest.Run1(r, tensor.NewTensor(tensor.Float32), tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 3, 3))); err == nil {
		t.Error("no error for align_corners with half_pixel_centers")
	}
	if err := kerneltest.Run1(&ResizeBilinear{}, tensor.NewTensor(tensor.Float32), tensor.NewTensor(tensor.Float32, 1, 2, 2, 1), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 0, 3))); err == nil {
		t.Error("no error for a zero output size")
	}
}

func TestResizeBilinear8x(t *testing.T) {
	// TFLite's uint8 x8 half-pixel kernel steps in 8.8 fixed point. Along a
	// row from 0 to 255 the 8 outputs of the span sit at 1/16, 3/16, ...
	// 15/16 of the step: (128 + k·(255<<4)) >> 8 for odd k, after four
	// copies of the edge pixel on each side.
	in := kerneltest.WithQ(kerneltest.ValsT(tensor.Uint8, []int{1, 1, 2, 8}, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255), 1, 0)
	out := kerneltest.WithQ(tensor.NewTensor(tensor.Uint8), 1, 0)
	r := &ResizeBilinear{Params: ResizeParams{HalfPixelCenters: true}}
	if err := kerneltest.Run1(r, out, in, kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 8, 16))); err != nil {
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
	got := kerneltest.Values(out)
	for row := range 8 {
		for x := range 16 {
			if g := got[(row*16+x)*8+3]; g != want[x] {
				t.Fatalf("row %d x %d: %v, want %v (row %v)", row, x, g, want[x], want)
			}
		}
	}
}

func TestResizeNearest(t *testing.T) {
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
		if err := kerneltest.Run1(r, out, kerneltest.ValsT(c.typ, []int{1, 1, 3, 1}, row...), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 1, 5))); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		kerneltest.CheckOutput(t, c.name, out, []int{1, 1, 5, 1}, c.want)
	}
	// 6 → 74 columns, column 37: the float rule gives floor(37·6/74) = 2
	// (37·0.08108108 rounds below 3), the uint8 kernel's 16-bit scale
	// (6<<16)/74+1 gives 3.
	for _, c := range []struct {
		typ  tensor.DType
		want float64
	}{{tensor.Int8, 2}, {tensor.Uint8, 3}} {
		out := tensor.NewTensor(c.typ)
		if err := kerneltest.Run1(&ResizeNearestNeighbor{}, out, kerneltest.ValsT(c.typ, []int{1, 1, 6, 1}, 0, 1, 2, 3, 4, 5), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 1, 74))); err != nil {
			t.Fatal(err)
		}
		if got := kerneltest.Values(out)[37]; got != c.want {
			t.Errorf("%s column 37: %v, want %v", c.typ, got, c.want)
		}
	}
	// A size that is not constant makes the output Dynamic.
	out := tensor.NewTensor(tensor.Float32)
	if err := kerneltest.Run1(&ResizeNearestNeighbor{}, out, kerneltest.ValsT(tensor.Float32, []int{1, 1, 3, 1}, row...), kerneltest.ValsT(tensor.Int32, []int{2}, 2, 2)); err != nil {
		t.Fatal(err)
	}
	if !out.Dynamic {
		t.Error("output not Dynamic")
	}
	kerneltest.CheckOutput(t, "dynamic", out, []int{1, 2, 2, 1}, []float64{1, 2, 1, 2})
}

func TestResizeThreadsInvariant(t *testing.T) {
	// Large enough to be split across goroutines; every thread count must
	// give the same bytes.
	kerneltest.CheckThreadsInvariant(t, map[string]func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor){
		"bilinear float": func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{Params: ResizeParams{HalfPixelCenters: true}},
				[]*tensor.Tensor{kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 2, 17, 13, 16), 3), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 61, 47))}, tensor.NewTensor(tensor.Float32)
		},
		"bilinear float 2x": func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{}, []*tensor.Tensor{kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 1, 40, 40, 16), 4), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 80, 80))}, tensor.NewTensor(tensor.Float32)
		},
		"bilinear uint8": func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{Params: ResizeParams{AlignCorners: true}},
				[]*tensor.Tensor{kerneltest.WithQ(kerneltest.LcgFill(tensor.NewTensor(tensor.Uint8, 1, 20, 30, 24), 5), 1, 0), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 77, 55))}, kerneltest.WithQ(tensor.NewTensor(tensor.Uint8), 1, 0)
		},
		"bilinear int8": func() (kernel.Op, []*tensor.Tensor, *tensor.Tensor) {
			return &ResizeBilinear{}, []*tensor.Tensor{kerneltest.WithQ(kerneltest.LcgFill(tensor.NewTensor(tensor.Int8, 1, 20, 30, 24), 6), 1, 0), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, 77, 55))}, kerneltest.WithQ(tensor.NewTensor(tensor.Int8), 1, 0)
		},
	})
}
