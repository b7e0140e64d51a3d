package shape

import (
	"fmt"
	"slices"
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The expectations in these tests are worked out by hand from TFLite 2.9's
// rules (noted next to each case); the tricky ones were also confirmed by
// running the same single-op models through the real TFLite 2.9 library.

func TestPadRegistrations(t *testing.T) {
	// The version ranges TFLite 2.9's BuiltinOpResolver registers (each
	// max+1 was also checked to be rejected by the real library).
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorPAD:        {Min: 1, Max: 4},
		schema.BuiltinOperatorPADV2:      {Min: 1, Max: 4},
		schema.BuiltinOperatorMIRROR_PAD: {Min: 1, Max: 2},
	}
	kerneltest.CheckRegistrations(t, padOps(), want)
}

func TestPad(t *testing.T) {
	x := func() *tensor.Tensor { return kerneltest.ValsT(tensor.Float32, []int{2, 2}, 1, 2, 3, 4) }
	pads := func(typ tensor.DType, v ...float64) *tensor.Tensor {
		return kerneltest.ConstT(kerneltest.ValsT(typ, []int{len(v) / 2, 2}, v...))
	}
	t.Run("float", func(t *testing.T) {
		out := tensor.NewTensor(tensor.Float32)
		if err := kerneltest.Run1(&Pad{}, out, x(), pads(tensor.Int32, 1, 0, 0, 2)); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckOutput(t, "pad", out, []int{3, 4}, []float64{0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0})
	})
	t.Run("zero paddings", func(t *testing.T) {
		out := tensor.NewTensor(tensor.Float32)
		if err := kerneltest.Run1(&Pad{}, out, x(), pads(tensor.Int32, 0, 0, 0, 0)); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckOutput(t, "identity", out, []int{2, 2}, []float64{1, 2, 3, 4})
	})
	t.Run("negative paddings", func(t *testing.T) {
		if err := kerneltest.Run1(&Pad{}, tensor.NewTensor(tensor.Float32), x(), pads(tensor.Int32, 0, -1, 0, 0)); err == nil {
			t.Error("no error for a negative padding")
		}
		// Non-constant paddings are checked in Eval.
		p := kerneltest.ValsT(tensor.Int32, []int{2, 2}, 0, 0, -1, 0)
		if err := kerneltest.Run1(&Pad{}, tensor.NewTensor(tensor.Float32), x(), p); err == nil {
			t.Error("no error for a negative non-constant padding")
		}
	})
	t.Run("bad paddings shape", func(t *testing.T) {
		if err := kerneltest.Run1(&Pad{}, tensor.NewTensor(tensor.Float32), x(), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{4}, 0, 0, 0, 0))); err == nil {
			t.Error("no error for 1-D paddings")
		}
	})
	t.Run("six dimensions", func(t *testing.T) {
		in := tensor.NewTensor(tensor.Float32, 1, 1, 1, 1, 1, 1)
		if err := kerneltest.Run1(&Pad{}, tensor.NewTensor(tensor.Float32), in, pads(tensor.Int32, make([]float64, 12)...)); err == nil {
			t.Error("no error for a 6-D input")
		}
	})
	t.Run("quantized zero point", func(t *testing.T) {
		in := kerneltest.WithQ(kerneltest.ValsT(tensor.Uint8, []int{3}, 1, 2, 3), 0.5, 7)
		out := kerneltest.WithQ(tensor.NewTensor(tensor.Uint8), 0.5, 7)
		if err := kerneltest.Run1(&Pad{}, out, in, pads(tensor.Int32, 1, 2)); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckOutput(t, "uint8", out, []int{6}, []float64{7, 1, 2, 3, 7, 7})
	})
	t.Run("padv2 constant", func(t *testing.T) {
		in := kerneltest.WithQ(kerneltest.ValsT(tensor.Int8, []int{2}, -1, 1), 0.5, -3)
		out := kerneltest.WithQ(tensor.NewTensor(tensor.Int8), 0.5, -3)
		cv := kerneltest.ConstT(kerneltest.WithQ(kerneltest.ValsT(tensor.Int8, []int{}, 9), 0.5, -3))
		if err := kerneltest.Run1(&Pad{}, out, in, pads(tensor.Int32, 1, 1), cv); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckOutput(t, "int8", out, []int{4}, []float64{9, -1, 1, 9})
		badCV := kerneltest.ConstT(kerneltest.WithQ(kerneltest.ValsT(tensor.Int8, []int{}, 9), 0.5, -2))
		if err := kerneltest.Run1(&Pad{}, kerneltest.WithQ(tensor.NewTensor(tensor.Int8), 0.5, -3), in, pads(tensor.Int32, 1, 1), badCV); err == nil {
			t.Error("no error for a constant with another zero point")
		}
	})
	t.Run("dynamic", func(t *testing.T) {
		out := tensor.NewTensor(tensor.Int64)
		in := kerneltest.ValsT(tensor.Int64, []int{1, 2}, 5, 6)
		if err := kerneltest.Run1(&Pad{}, out, in, kerneltest.ValsT(tensor.Int32, []int{2, 2}, 1, 0, 0, 1), kerneltest.ConstT(kerneltest.ValsT(tensor.Int64, []int{1}, -1))); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckOutput(t, "dynamic", out, []int{2, 3}, []float64{-1, -1, -1, 5, 6, -1})
	})
	t.Run("int64 paddings read as int32", func(t *testing.T) {
		// TFLite 2.9 reads the paddings buffer as int32 whatever its type:
		// INT64 [[1 1] [2 2]] is seen as [[1 0] [1 0]].
		out := tensor.NewTensor(tensor.Float32)
		if err := kerneltest.Run1(&Pad{}, out, x(), pads(tensor.Int64, 1, 1, 2, 2)); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckOutput(t, "int64", out, []int{3, 3}, []float64{0, 0, 0, 0, 1, 2, 0, 3, 4})
	})
}

func TestMirrorPad(t *testing.T) {
	row := func() *tensor.Tensor { return kerneltest.ValsT(tensor.Int32, []int{3}, 1, 2, 3) }
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
		{"reflect 2-D", schema.MirrorPadModeREFLECT, kerneltest.ValsT(tensor.Float32, []int{2, 3}, 1, 2, 3, 4, 5, 6), []float64{1, 0, 0, 1}, tensor.Int32,
			[]int{3, 4}, []float64{4, 5, 6, 5, 1, 2, 3, 2, 4, 5, 6, 5}},
		// A negative padding crops, as TFLite lets it.
		{"negative", schema.MirrorPadModeREFLECT, kerneltest.ValsT(tensor.Uint8, []int{2, 3}, 1, 2, 3, 4, 5, 6), []float64{-1, 0, 0, 0}, tensor.Int32,
			[]int{1, 3}, []float64{4, 5, 6}},
	}
	for _, c := range cases {
		m := &MirrorPad{Params: MirrorPadParams{Mode: c.mode}}
		out := tensor.NewTensor(c.in.Type)
		p := kerneltest.ConstT(kerneltest.ValsT(c.typ, []int{len(c.pads) / 2, 2}, c.pads...))
		if err := kerneltest.Run1(m, out, c.in, p); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		kerneltest.CheckOutput(t, c.name, out, c.shp, c.want)
	}
	if err := kerneltest.Run1(&MirrorPad{}, tensor.NewTensor(tensor.Int16), kerneltest.ValsT(tensor.Int16, []int{2}, 1, 2), kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{1, 2}, 1, 1))); err == nil {
		t.Error("no error for INT16, which TFLite 2.9 rejects")
	}
}

// TestPadNHWC pads 4-D tensors in the ways image models do (height and
// width only, channels only, batch only, everything) and compares each
// output element with the input element it comes from, computed from its
// coordinates.
func TestPadNHWC(t *testing.T) {
	shape := []int{2, 3, 4, 5}
	for _, pad := range [][]int{
		{0, 0, 1, 1, 1, 1, 0, 0}, // height and width (a 3x3 SAME conv's)
		{0, 0, 0, 1, 0, 1, 0, 0}, // bottom and right (a stride-2 conv's)
		{0, 0, 0, 0, 0, 0, 0, 4}, // channels
		{1, 0, 0, 0, 0, 0, 0, 0}, // batch: every inner dimension merged
		{1, 2, 0, 1, 2, 0, 3, 1}, // everything
		{0, 0, 0, 0, 0, 0, 0, 0}, // nothing
	} {
		t.Run(fmt.Sprint(pad), func(t *testing.T) {
			vals := make([]float64, 2*3*4*5)
			for i := range vals {
				vals[i] = float64(i + 1)
			}
			padVals := make([]float64, len(pad))
			for i, v := range pad {
				padVals[i] = float64(v)
			}
			out := tensor.NewTensor(tensor.Float32)
			cv := kerneltest.ConstT(kerneltest.ValsT(tensor.Float32, []int{}, -7))
			if err := kerneltest.Run1(&Pad{}, out, kerneltest.ValsT(tensor.Float32, shape, vals...),
				kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{4, 2}, padVals...)), cv); err != nil {
				t.Fatal(err)
			}
			os := make([]int, 4)
			for d := range os {
				os[d] = shape[d] + pad[2*d] + pad[2*d+1]
			}
			if !slices.Equal(out.Shape, os) {
				t.Fatalf("shape %v, want %v", out.Shape, os)
			}
			got := out.Float32s()
			for i := range got {
				want, rest, src := float32(0), i, 0
				inside := true
				for d := 3; d >= 0; d-- {
					c := rest%os[d] - pad[2*d]
					rest /= os[d]
					inside = inside && c >= 0 && c < shape[d]
				}
				if inside {
					rest = i
					stride := 1
					for d := 3; d >= 0; d-- {
						src += (rest%os[d] - pad[2*d]) * stride
						rest /= os[d]
						stride *= shape[d]
					}
					want = float32(vals[src])
				} else {
					want = -7
				}
				if got[i] != want {
					t.Fatalf("output %d is %v, want %v", i, got[i], want)
				}
			}
		})
	}
}

// TestMergeUnpadded checks which dimensions padFill merges: the trailing
// ones without padding, into the one before them.
func TestMergeUnpadded(t *testing.T) {
	in, out, before := make([]int, 4), make([]int, 4), make([]int, 4)
	nd := mergeUnpadded([]int{1, 256, 256, 3}, []int{1, 258, 258, 3}, []int{0, 1, 1, 0}, in, out, before)
	if nd != 3 || !slices.Equal(in[:nd], []int{1, 256, 768}) || !slices.Equal(out[:nd], []int{1, 258, 774}) || !slices.Equal(before[:nd], []int{0, 1, 3}) {
		t.Errorf("HW padding merged to %d dimensions: in %v out %v before %v", nd, in[:nd], out[:nd], before[:nd])
	}
	nd = mergeUnpadded([]int{2, 3}, []int{2, 3}, []int{0, 0}, in, out, before)
	if nd != 1 || in[0] != 6 || out[0] != 6 {
		t.Errorf("no padding merged to %d dimensions: in %v out %v", nd, in[:nd], out[:nd])
	}
}

// BenchmarkPadNHWC pads a 256x256x3 image by one pixel on each side, as
// the first PAD of MediaPipe's pose landmark models.
func BenchmarkPadNHWC(b *testing.B) {
	in := tensor.NewTensor(tensor.Float32, 1, 256, 256, 3)
	pads := kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{4, 2}, 0, 0, 1, 1, 1, 1, 0, 0))
	out := tensor.NewTensor(tensor.Float32)
	n := &kernel.Node{Inputs: []*tensor.Tensor{in, pads}, Outputs: []*tensor.Tensor{out}}
	p := &Pad{}
	if err := p.Prepare(n); err != nil {
		b.Fatal(err)
	}
	out.Data = tensor.NewTensor(tensor.Float32, out.Shape...).Data
	for b.Loop() {
		if err := p.Eval(n); err != nil {
			b.Fatal(err)
		}
	}
}
