package resize

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/resizerow"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// refResizeFloat is TFLite 2.9's generic float RESIZE_BILINEAR
// (reference_ops::ResizeBilinear): per output pixel, the four corners'
// weighted values added in order, each product and sum rounded to
// float32.
func refResizeFloat(p ResizeParams, src []float32, b, inH, inW, c, outH, outW int) []float32 {
	dst := make([]float32, b*outH*outW*c)
	hs, ws := resizeScales(p, inH, inW, outH, outW)
	o := 0
	for bi := range b {
		for y := range outH {
			iy, y0, y1 := resizeInterp(y, hs, p.HalfPixelCenters, inH)
			for x := range outW {
				ix, x0, x1 := resizeInterp(x, ws, p.HalfPixelCenters, inW)
				dy, dx := iy-float32(y0), ix-float32(x0)
				at := func(y, x, ch int) float32 { return src[((bi*inH+y)*inW+x)*c+ch] }
				for ch := range c {
					v := float32(at(y0, x0, ch) * float32((1-dy)*(1-dx)))
					v = float32(v + float32(at(y0, x1, ch)*float32((1-dy)*dx)))
					v = float32(v + float32(at(y1, x0, ch)*float32(dy*(1-dx))))
					dst[o] = float32(v + float32(at(y1, x1, ch)*float32(dy*dx)))
					o++
				}
			}
		}
	}
	return dst
}

// sameFloat reports whether x and y have the same bits, or are both NaN.
func sameFloat(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y
}

// TestResizeBilinearFloatBits runs the float RESIZE_BILINEAR (on the row
// kernel this build and CPU have) over channel counts around the vector
// width, up- and downscales, both pixel conventions and align_corners,
// with NaN, infinities and negative zeros among the inputs, on 1 and 2
// threads: every output must have the bits of TFLite's generic loop
// (which TFLite runs for all but an exact 2x upscale without flags).
func TestResizeBilinearFloatBits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, c := range []int{1, 3, 8, 15, 16, 17, 33} {
		for _, sz := range [][4]int{{4, 5, 8, 10}, {9, 7, 3, 4}, {16, 16, 32, 32}, {5, 3, 5, 3}} {
			for _, p := range []ResizeParams{{}, {HalfPixelCenters: true}, {AlignCorners: true}} {
				if p == (ResizeParams{}) && sz[2] == 2*sz[0] && sz[3] == 2*sz[1] {
					continue // TFLite's exact 2x special case, not the generic loop
				}
				name := fmt.Sprintf("c%d/%v/%+v", c, sz, p)
				in := tensor.NewTensor(tensor.Float32, 2, sz[0], sz[1], c)
				x := in.Float32s()
				for i := range x {
					x[i] = r.Float32()*8 - 4
				}
				x[0], x[len(x)/3], x[len(x)/2], x[len(x)-1] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1))
				want := refResizeFloat(p, x, 2, sz[0], sz[1], c, sz[2], sz[3])
				for _, threads := range []int{1, 2} {
					out := kerneltest.OutT(tensor.Float32)
					size := kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, float64(sz[2]), float64(sz[3])))
					kerneltest.MustRun(t, &ResizeBilinear{Params: p}, threads, out, in, size)
					got := out.Float32s()
					if len(got) != len(want) {
						t.Fatalf("%s: %d outputs, want %d", name, len(got), len(want))
					}
					for i := range want {
						if !sameFloat(got[i], want[i]) {
							t.Fatalf("%s, %d threads: output %d is %v, TFLite's loop gives %v", name, threads, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestResizeRowF32AsmMatchesGo holds the float row kernel this build runs
// to its pure-Go twin bit for bit; floats after the row stay untouched.
func TestResizeRowF32AsmMatchesGo(t *testing.T) {
	if !resizerow.HasAsmF32() {
		t.Skip("no assembly float row kernel in this build: the twin is the kernel (TestResizeBilinearFloatBits runs it)")
	}
	r := rand.New(rand.NewPCG(9, 10))
	for _, c := range []int{1, 3, 8, 15, 16, 17, 21, 32, 40} {
		for _, sz := range [][2]int{{3, 10}, {10, 3}, {33, 513}, {1, 5}} {
			inW, outW := sz[0], sz[1]
			p := ResizeParams{HalfPixelCenters: true}
			_, ws := resizeScales(p, 2, inW, 2, outW)
			var cols resizeCols
			cols.set(p, ws, inW, outW, c)
			top, bot := make([]float32, inW*c), make([]float32, inW*c)
			for i := range top {
				top[i], bot[i] = r.Float32()*2-1, r.Float32()*2-1
			}
			dy := r.Float32()
			out := func(kernel func(*resizerow.ArgsF32)) []float32 {
				dst := make([]float32, outW*c+32)
				for i := range dst {
					dst[i] = 1234.5
				}
				a := cols.rowArgsF32(c, inW)
				a.Top, a.Bot, a.WY, a.Dst = &top[0], &bot[0], [2]float32{1 - dy, dy}, &dst[0]
				kernel(&a)
				return dst
			}
			want, got := out(resizerow.RowF32Go), out(resizerow.RowF32)
			for i := range want {
				if !sameFloat(got[i], want[i]) {
					t.Fatalf("c%d %dto%d: float %d: assembly %v, Go %v (past the row: %v)", c, inW, outW, i, got[i], want[i], i >= outW*c)
				}
			}
		}
	}
}

// BenchmarkResizeBilinearFloat times the float resizes of MediaPipe's
// pose (128x128x8 to 256x256x8, half-pixel centers) and selfie
// segmentation (16x16x128 to 32x32x128) models.
func BenchmarkResizeBilinearFloat(b *testing.B) {
	for _, c := range []struct {
		name         string
		inH, inW, ch int
	}{{"pose", 128, 128, 8}, {"selfie", 16, 16, 128}} {
		b.Run(c.name, func(b *testing.B) {
			in := tensor.NewTensor(tensor.Float32, 1, c.inH, c.inW, c.ch)
			size := kerneltest.ConstT(kerneltest.ValsT(tensor.Int32, []int{2}, float64(2*c.inH), float64(2*c.inW)))
			out := tensor.NewTensor(tensor.Float32)
			n := &kernel.Node{Inputs: []*tensor.Tensor{in, size}, Outputs: []*tensor.Tensor{out}, Threads: 1}
			op := &ResizeBilinear{Params: ResizeParams{HalfPixelCenters: true}}
			if err := op.Prepare(n); err != nil {
				b.Fatal(err)
			}
			out.Data = tensor.NewTensor(tensor.Float32, out.Shape...).Data
			for b.Loop() {
				if err := op.Eval(n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
