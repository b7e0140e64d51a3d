package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/dwf32"
	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
)

// dwCase is a depthwise convolution with multiplier 1.
type dwCase struct {
	h, w, c, k, stride, dil int
	pad                     schema.Padding
}

func dwCases() []dwCase {
	same, valid := schema.PaddingSAME, schema.PaddingVALID
	return []dwCase{
		{5, 5, 1, 3, 1, 1, same}, {7, 6, 7, 3, 2, 1, same}, {8, 8, 16, 3, 1, 1, same},
		{6, 9, 17, 3, 2, 2, same}, {4, 5, 64, 3, 1, 1, valid}, {9, 9, 80, 5, 1, 1, same},
		{3, 3, 100, 3, 1, 1, same}, {2, 2, 33, 5, 1, 2, same}, {10, 3, 72, 1, 1, 1, valid},
		// Rows long enough for runs of pixels (dwRep) with and without
		// a remainder.
		{6, 40, 8, 3, 1, 1, same}, {5, 37, 3, 3, 1, 2, same}, {4, 21, 24, 3, 1, 1, valid},
		{3, 70, 1, 3, 1, 1, same}, {4, 19, 16, 5, 1, 1, same}, {4, 12, 32, 3, 1, 1, same},
	}
}

// TestFloatDepthwiseKernels holds each kernel set's depthwise kernel to a
// float64 reference and to the bits of the f32 kernel of its instruction
// set one pixel at a time (the kernels before package dwf32), and its
// results to the same bits with 1, 2 and 3 threads, rows whole or cut
// into 2 or 3 pieces of pixels, and with runs of pixels taken as one
// (dwRep) or not.
func TestFloatDepthwiseKernels(t *testing.T) {
	for _, kern := range append(dwf32.Kernels(), dwf32.Go) {
		for _, c := range dwCases() {
			name := fmt.Sprintf("%v/%dx%dx%d/k%d/s%d/d%d/pad%d", kern, c.h, c.w, c.c, c.k, c.stride, c.dil, c.pad)
			t.Run(name, func(t *testing.T) {
				g, err := windowGeom("test", c.pad, 2, c.h, c.w, c.c, c.k, c.k, c.stride, c.stride, c.dil, c.dil)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewPCG(uint64(c.c), uint64(c.h)))
				in, w, bias := randF32(r, 2*c.h*c.w*c.c), randF32(r, c.k*c.k*c.c), randF32(r, c.c)
				var outs [][]float32
				splits := [][3]int{{1, 1, 0}, {2, 1, 0}, {3, 1, 0}, {2, 2, 0}, {3, 3, 0}, // threads, pieces per row, runs
					{1, 1, 1}, {2, 1, 1}, {3, 3, 1}}
				for _, sp := range splits {
					threads, parts := sp[0], sp[1]
					rep := dwRep{m: 1}
					if sp[2] == 1 {
						if rep.prepare(c.c, c.stride); c.stride == 1 && c.c <= 32 && rep.m < 2 {
							t.Fatalf("%d channels at stride 1 run one pixel at a time", c.c)
						}
						rep.set(w, bias, c.c, c.k*c.k)
					}
					out := make([]float32, g.rows()*c.c)
					ws := make([]dwFloatWork, threads)
					for i := range ws {
						ws[i].xoff, ws[i].woff = make([]int, c.k*c.k), make([]int, c.k*c.k)
					}
					kernel.ParallelFor(g.batches*g.outH*parts, threads, 1, func(wk, lo, hi int) {
						dwFloatRows(&g, kern, in, w, bias, out, -2, 2, lo, hi, parts, &ws[wk], &rep)
					})
					outs = append(outs, out)
				}
				for i := 1; i < len(outs); i++ {
					if !slices.Equal(outs[i], outs[0]) {
						t.Errorf("%d threads, rows in %d pieces, runs %v differ from 1 thread", splits[i][0], splits[i][1], splits[i][2] == 1)
					}
				}
				prev := pixelByPixel(&g, f32Named(t, kern.String()), in, w, bias, -2, 2)
				for i, v := range prev {
					if got := outs[0][i]; math.Float32bits(got) != math.Float32bits(v) {
						t.Fatalf("element %d: %v, f32 kernels one pixel at a time %v", i, got, v)
					}
				}
				want := make([]float32, len(outs[0]))
				depthwiseFloatRows(&g, 1, in, w, bias, want, -2, 2, 0, g.batches*g.outH)
				for i := range want {
					if d := math.Abs(float64(outs[0][i] - want[i])); d > 1e-5 {
						t.Fatalf("element %d: got %v, want %v", i, outs[0][i], want[i])
					}
				}
			})
		}
	}
}

// f32Named is the f32 kernel set of the instruction set name names
// ("AVX-512", "AVX2", "NEON", "Go").
func f32Named(t *testing.T, name string) *f32.Kernels {
	name = strings.ToLower(strings.ReplaceAll(name, "-", ""))
	for _, s := range append(f32.Sets(), f32.Go()) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no f32 kernel set %q", name)
	return nil
}

// pixelByPixel is a depthwise convolution with multiplier 1 computed by
// kern's depthwise kernel one output pixel at a time, with the taps that
// fall inside the input (dwTaps).
func pixelByPixel(g *convGeom, kern *f32.Kernels, in, w, bias []float32, lo, hi float32) []float32 {
	C := g.inC
	out := make([]float32, g.rows()*C)
	xoff, woff := make([]int, g.kH*g.kW), make([]int, g.kH*g.kW)
	for r := range g.batches * g.outH {
		for ox := range g.outW {
			n := dwTaps(g, r/g.outH, r%g.outH, ox, xoff, woff)
			for t := range n {
				woff[t] *= C
			}
			kern.DW(C, 1, &out[(r*g.outW+ox)*C], &bias[0], &in[0], &w[0], &xoff[0], &woff[0], n, 0, lo, hi)
		}
	}
	return out
}
