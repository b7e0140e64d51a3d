package gpu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

func TestMaxPool(t *testing.T) {
	type poolCase struct {
		n, h, w, c, kh, kw, sh, sw int
		same                       bool
		act                        schema.ActivationFunctionType
	}
	cases := []poolCase{
		{n: 1, h: 97, w: 103, c: 5, kh: 3, kw: 3, sh: 2, sw: 2, same: true},
		{n: 1, h: 1, w: 1, c: 3, kh: 1, kw: 1, sh: 1, sw: 1},
		{n: 1, h: 1, w: 1, c: 3, kh: 2, kw: 2, sh: 2, sw: 2, same: true},
		{n: 2, h: 9, w: 8, c: 6, kh: 3, kw: 2, sh: 2, sw: 3},
	}
	for _, a := range activations {
		cases = append(cases, poolCase{n: 1, h: 7, w: 6, c: 7, kh: 2, kw: 3, sh: 1, sw: 2, same: true, act: a})
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%+v", tc), func(t *testing.T) {
			oh, ow := tensor.WindowOutSize(tc.same, tc.h, tc.kh, tc.sh, 1), tensor.WindowOutSize(tc.same, tc.w, tc.kw, tc.sw, 1)
			r := lcg(13)
			in := r.scaled(tc.n*tc.h*tc.w*tc.c, 3)
			pad := schema.PaddingVALID
			pt, pl := 0, 0
			if tc.same {
				pad = schema.PaddingSAME
				pt, _ = tensor.WindowPadding(tc.sh, 1, tc.h, tc.kh, oh)
				pl, _ = tensor.WindowPadding(tc.sw, 1, tc.w, tc.kw, ow)
			}
			inShape, outShape := []int{tc.n, tc.h, tc.w, tc.c}, []int{tc.n, oh, ow, tc.c}
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, inShape)
			y := b.Tensor("out", tensor.Float32, outShape)
			b.Op(schema.BuiltinOperatorMAX_POOL_2D, 1, []int{x}, []int{y}, modelbuild.Options(schema.BuiltinOptionsPool2DOptions,
				&schema.Pool2DOptionsT{Padding: pad, StrideH: int32(tc.sh), StrideW: int32(tc.sw), FilterHeight: int32(tc.kh),
					FilterWidth: int32(tc.kw), FusedActivationFunction: tc.act}))
			b.Inputs(x)
			b.Outputs(y)
			want := make([]float32, 0, tensor.NumElements(outShape))
			for n := range tc.n {
				for oy := range oh {
					for ox := range ow {
						for c := range tc.c {
							m := float32(-math.MaxFloat32)
							for ky := range tc.kh {
								for kx := range tc.kw {
									iy, ix := oy*tc.sh-pt+ky, ox*tc.sw-pl+kx
									if iy >= 0 && iy < tc.h && ix >= 0 && ix < tc.w {
										m = max(m, in[((n*tc.h+iy)*tc.w+ix)*tc.c+c])
									}
								}
							}
							want = append(want, act(m, tc.act))
						}
					}
				}
			}
			compare(t, run(t, b, in, inShape, outShape), want, actTol(tc.act))
		})
	}
}

func TestConcat(t *testing.T) {
	type catCase struct {
		shapes [][]int
		axis   int
		act    schema.ActivationFunctionType
	}
	cases := []catCase{
		{shapes: [][]int{{1, 4, 5, 3}, {1, 4, 5, 2}}, axis: 3},
		{shapes: [][]int{{1, 4, 5, 3}, {1, 4, 5, 1}, {1, 4, 5, 6}}, axis: -1},
		{shapes: [][]int{{2, 3, 5, 3}, {2, 1, 5, 3}, {2, 4, 5, 3}, {2, 2, 5, 3}}, axis: 1},
		{shapes: [][]int{{1, 3, 2, 5}, {1, 3, 7, 5}}, axis: 2},
		{shapes: [][]int{{1, 1, 1, 3}, {2, 1, 1, 3}}, axis: 0},
		{shapes: [][]int{{1, 97, 103, 5}, {1, 97, 103, 3}}, axis: 3},
		{shapes: [][]int{{6, 5}, {6, 7}}, axis: 1},
	}
	for _, a := range activations {
		cases = append(cases, catCase{shapes: [][]int{{1, 2, 3, 5}, {1, 2, 3, 2}}, axis: 3, act: a})
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v axis %d %s", tc.shapes, tc.axis, actName(tc.act)), func(t *testing.T) {
			r := lcg(17)
			rank := len(tc.shapes[0])
			axis := (tc.axis + rank) % rank
			outShape := append([]int(nil), tc.shapes[0]...)
			outShape[axis] = 0
			b := modelbuild.New()
			var ins [][]float32
			var ids []int
			for i, s := range tc.shapes {
				outShape[axis] += s[axis]
				ins = append(ins, r.scaled(tensor.NumElements(s), 3))
				ids = append(ids, b.Tensor(fmt.Sprint("in", i), tensor.Float32, s))
			}
			y := b.Tensor("out", tensor.Float32, outShape)
			b.Op(schema.BuiltinOperatorCONCATENATION, 1, ids, []int{y}, modelbuild.Options(schema.BuiltinOptionsConcatenationOptions,
				&schema.ConcatenationOptionsT{Axis: int32(tc.axis), FusedActivationFunction: tc.act}))
			b.Inputs(ids...)
			b.Outputs(y)
			inner := tensor.NumElements(outShape[axis+1:])
			var want []float32
			for o := range tensor.NumElements(outShape[:axis]) {
				for i, s := range tc.shapes {
					slab := s[axis] * inner
					for _, v := range ins[i][o*slab : (o+1)*slab] {
						want = append(want, act(v, tc.act))
					}
				}
			}
			compare(t, runMany(t, b, ins, tc.shapes, outShape), want, actTol(tc.act))
		})
	}
}

func TestPad(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		pads  []int32
		int64 bool
	}{
		{[]int{1, 4, 5, 3}, []int32{0, 0, 1, 2, 3, 0, 0, 1}, false},
		{[]int{1, 1, 1, 3}, []int32{0, 0, 1, 1, 1, 1, 0, 0}, true},
		{[]int{2, 3, 4, 5}, []int32{1, 0, 0, 2, 2, 1, 3, 2}, false},
		{[]int{4, 5, 6}, []int32{1, 1, 0, 3, 2, 0}, false},
		{[]int{1, 97, 103, 5}, []int32{0, 0, 1, 1, 2, 2, 0, 0}, false},
	} {
		t.Run(fmt.Sprintf("%v pads %v int64 %v", tc.shape, tc.pads, tc.int64), func(t *testing.T) {
			r := lcg(19)
			in := r.floats(tensor.NumElements(tc.shape))
			outShape := make([]int, len(tc.shape))
			for i, d := range tc.shape {
				outShape[i] = d + int(tc.pads[2*i]+tc.pads[2*i+1])
			}
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, tc.shape)
			var p int
			if tc.int64 {
				data := make([]byte, 8*len(tc.pads))
				for i, v := range tc.pads {
					copy(data[8*i:], raw32([]int32{v, 0}))
				}
				p = b.Const("pads", tensor.Int64, []int{len(tc.shape), 2}, data)
			} else {
				p = b.Const("pads", tensor.Int32, []int{len(tc.shape), 2}, raw32(tc.pads))
			}
			y := b.Tensor("out", tensor.Float32, outShape)
			b.Op(schema.BuiltinOperatorPAD, 1, []int{x, p}, []int{y}, nil)
			b.Inputs(x)
			b.Outputs(y)
			i4, o4 := pad4(tc.shape), pad4(outShape)
			p4 := make([]int, 4)
			for i := range tc.shape {
				p4[4-len(tc.shape)+i] = int(tc.pads[2*i])
			}
			want := make([]float32, 0, tensor.NumElements(outShape))
			for c0 := range o4[0] {
				for c1 := range o4[1] {
					for c2 := range o4[2] {
						for c3 := range o4[3] {
							i0, i1, i2, i3 := c0-p4[0], c1-p4[1], c2-p4[2], c3-p4[3]
							v := float32(0)
							if i0 >= 0 && i0 < i4[0] && i1 >= 0 && i1 < i4[1] && i2 >= 0 && i2 < i4[2] && i3 >= 0 && i3 < i4[3] {
								v = in[((i0*i4[1]+i1)*i4[2]+i2)*i4[3]+i3]
							}
							want = append(want, v)
						}
					}
				}
			}
			compare(t, run(t, b, in, tc.shape, outShape), want, 0)
		})
	}
}

// refResize is TFLite's reference RESIZE_BILINEAR (resize_bilinear.h) and
// RESIZE_NEAREST_NEIGHBOR (resize_nearest_neighbor.h), in float32.
func refResize(in []float32, s []int, oh, ow int, nearest, align, half bool) []float32 {
	scale := func(i, o int) float32 {
		if align && o > 1 {
			return float32(i-1) / float32(o-1)
		}
		return float32(i) / float32(o)
	}
	hs, ws := scale(s[1], oh), scale(s[2], ow)
	interp := func(v int, sc float32, size int) (float32, int, int) {
		var src float32
		if half {
			src = float32(float32(float32(v)+0.5)*sc) - 0.5
		} else {
			src = float32(v) * sc
		}
		return src, max(int(math.Floor(float64(src))), 0), min(int(math.Ceil(float64(src))), size-1)
	}
	near := func(v int, sc float32, size int) int {
		off := float32(0)
		if half {
			off = 0.5
		}
		x := float32(float32(v)+off) * sc
		var o int
		if align {
			o = int(math.Round(float64(x)))
		} else {
			o = int(math.Floor(float64(x)))
		}
		o = min(o, size-1)
		if half {
			o = max(o, 0)
		}
		return o
	}
	h, w, c := s[1], s[2], s[3]
	var out []float32
	for n := range s[0] {
		at := func(y, x, ch int) float32 { return in[((n*h+y)*w+x)*c+ch] }
		for y := range oh {
			for x := range ow {
				for ch := range c {
					if nearest {
						out = append(out, at(near(y, hs, h), near(x, ws, w), ch))
						continue
					}
					sy, y0, y1 := interp(y, hs, h)
					sx, x0, x1 := interp(x, ws, w)
					dy, dx := sy-float32(y0), sx-float32(x0)
					v := at(y0, x0, ch) * ((1 - dy) * (1 - dx))
					v += at(y0, x1, ch) * ((1 - dy) * dx)
					v += at(y1, x0, ch) * (dy * (1 - dx))
					v += at(y1, x1, ch) * (dy * dx)
					out = append(out, v)
				}
			}
		}
	}
	return out
}

func TestResize(t *testing.T) {
	type sizeCase struct {
		in     []int
		oh, ow int
	}
	sizes := []sizeCase{
		{[]int{1, 4, 5, 3}, 9, 7},
		{[]int{2, 6, 7, 2}, 3, 4},
		{[]int{1, 1, 1, 3}, 3, 2},
		{[]int{1, 97, 103, 5}, 41, 150},
	}
	flags := []struct{ align, half bool }{{false, false}, {true, false}, {false, true}, {true, true}}
	for _, nearest := range []bool{false, true} {
		for _, fl := range flags {
			if fl.align && fl.half && !nearest {
				continue // TFLite refuses both flags for bilinear
			}
			for si, sc := range sizes {
				if si == 3 && (fl.align || fl.half) && !nearest {
					continue // the large case once per op and flags, to keep the test short
				}
				name := fmt.Sprintf("nearest %v align %v half %v %v to %dx%d", nearest, fl.align, fl.half, sc.in, sc.oh, sc.ow)
				t.Run(name, func(t *testing.T) {
					r := lcg(23)
					in := r.floats(tensor.NumElements(sc.in))
					outShape := []int{sc.in[0], sc.oh, sc.ow, sc.in[3]}
					b := modelbuild.New()
					x := b.Tensor("in", tensor.Float32, sc.in)
					size := b.Const("size", tensor.Int32, []int{2}, raw32([]int32{int32(sc.oh), int32(sc.ow)}))
					y := b.Tensor("out", tensor.Float32, outShape)
					if nearest {
						b.Op(schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, 3, []int{x, size}, []int{y}, modelbuild.Options(schema.BuiltinOptionsResizeNearestNeighborOptions,
							&schema.ResizeNearestNeighborOptionsT{AlignCorners: fl.align, HalfPixelCenters: fl.half}))
					} else {
						b.Op(schema.BuiltinOperatorRESIZE_BILINEAR, 3, []int{x, size}, []int{y}, modelbuild.Options(schema.BuiltinOptionsResizeBilinearOptions,
							&schema.ResizeBilinearOptionsT{AlignCorners: fl.align, HalfPixelCenters: fl.half}))
					}
					b.Inputs(x)
					b.Outputs(y)
					compare(t, run(t, b, in, sc.in, outShape), refResize(in, sc.in, sc.oh, sc.ow, nearest, fl.align, fl.half), 1e-6)
				})
			}
		}
	}
}

func TestMean(t *testing.T) {
	for _, tc := range []struct {
		shape []int
		axes  []int32
		keep  bool
	}{
		{[]int{1, 5, 6, 7}, []int32{1, 2}, true},
		{[]int{2, 5, 6, 7}, []int32{2, 1}, false},
		{[]int{1, 4, 3, 9}, []int32{3}, true},
		{[]int{2, 4, 3, 9}, []int32{-1}, false},
		{[]int{1, 1, 1, 3}, []int32{1, 2}, false},
		{[]int{1, 97, 103, 5}, []int32{1, 2}, true},
		{[]int{3, 4, 5}, []int32{0, 2}, false},
	} {
		t.Run(fmt.Sprintf("%v axes %v keep %v", tc.shape, tc.axes, tc.keep), func(t *testing.T) {
			r := lcg(29)
			in := r.floats(tensor.NumElements(tc.shape))
			red := make([]bool, len(tc.shape))
			for _, a := range tc.axes {
				red[(int(a)+len(tc.shape))%len(tc.shape)] = true
			}
			var outShape []int
			for i, d := range tc.shape {
				switch {
				case !red[i]:
					outShape = append(outShape, d)
				case tc.keep:
					outShape = append(outShape, 1)
				}
			}
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, tc.shape)
			ax := b.Const("axes", tensor.Int32, []int{len(tc.axes)}, raw32(tc.axes))
			y := b.Tensor("out", tensor.Float32, outShape)
			b.Op(schema.BuiltinOperatorMEAN, 1, []int{x, ax}, []int{y}, modelbuild.Options(schema.BuiltinOptionsReducerOptions, &schema.ReducerOptionsT{KeepDims: tc.keep}))
			b.Inputs(x)
			b.Outputs(y)
			// Sums in float64 over the reduced axes, element by element.
			sums := make([]float64, tensor.NumElements(outShape))
			count := 1
			for i, d := range tc.shape {
				if red[i] {
					count *= d
				}
			}
			for i, v := range in {
				o, stride, rest := 0, 1, i
				for k := len(tc.shape) - 1; k >= 0; k-- {
					c := rest % tc.shape[k]
					rest /= tc.shape[k]
					if !red[k] {
						o += c * stride
						stride *= tc.shape[k]
					}
				}
				sums[o] += float64(v)
			}
			want := make([]float32, len(sums))
			for i, s := range sums {
				want[i] = float32(s / float64(count))
			}
			compare(t, run(t, b, in, tc.shape, outShape), want, 1e-6)
		})
	}
}

// TestLowerRefuses: what TFLite's GPU delegate takes but the kernels
// cannot do stays on the CPU with the reason (CheckNodes), never a failed
// Compile.
func TestLowerRefuses(t *testing.T) {
	b := modelbuild.New()
	x := b.Tensor("in", tensor.Float32, []int{1, 2, 2, 3})
	p := b.Const("pads", tensor.Int32, []int{4, 2}, raw32([]int32{0, 0, 1, -1, 0, 0, 0, 0}))
	y := b.Tensor("padded", tensor.Float32, []int{1, 2, 2, 3})
	z := b.Tensor("out", tensor.Float32, []int{1, 2, 2, 3})
	b.Op(schema.BuiltinOperatorPAD, 1, []int{x, p}, []int{y}, nil)
	b.Op(schema.BuiltinOperatorRELU, 1, []int{y}, []int{z}, nil)
	b.Inputs(x)
	b.Outputs(z)
	vs, err := New().CheckNodes(t.Context(), b.Bytes(), []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if vs[0].Accept || !strings.Contains(vs[0].Reason, "PAD: delego's gpu delegate has no OpenCL kernel for it yet (paddings [0 0 1 -1 0 0 0 0]") {
		t.Errorf("PAD with a negative padding: %+v", vs[0])
	}
	if !vs[1].Accept {
		t.Errorf("RELU: %+v", vs[1])
	}
}
