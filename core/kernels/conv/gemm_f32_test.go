package conv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// fgemmCase is a float GEMM of M rows, N channels and depth K; a non-nil
// geom takes the rows from an input image (im2col) instead, written one
// after another (rowMajor, CONV_2D's layout, whose windows inside the
// input the window kernel reads in place) or interleaved by k.
type fgemmCase struct {
	M, N, K  int
	geom     *convGeom
	rowMajor bool
}

func fgemmCases(t *testing.T) []fgemmCase {
	cases := []fgemmCase{
		{1, 1, 1, nil, false}, {1, 1001, 1024, nil, false}, {1, 17, 3, nil, false}, {2, 64, 9, nil, false},
		{5, 16, 16, nil, false}, {12, 16, 16, nil, false}, {13, 17, 5, nil, false}, {25, 33, 7, nil, false},
		{49, 24, 144, nil, false}, {30, 42, 11, nil, false}, {100, 70, 37, nil, false}, {37, 130, 1, nil, false}, {3, 3, 0, nil, false},
	}
	for _, c := range []struct {
		h, w, inC, k, stride, dil int
		pad                       schema.Padding
	}{
		{7, 9, 3, 3, 2, 1, schema.PaddingSAME}, {11, 5, 5, 3, 1, 2, schema.PaddingSAME},
		{6, 6, 17, 1, 2, 1, schema.PaddingSAME}, {4, 4, 8, 5, 1, 1, schema.PaddingSAME},
		// Output rows wide enough for whole tiles of windows inside the
		// input: a first layer's 3-channel image at stride 2, stride 1
		// with both paddings, a 1x1 filter at stride 2, dilation down
		// the rows only, and dilation across (copied).
		{9, 61, 3, 3, 2, 1, schema.PaddingSAME}, {5, 40, 5, 3, 1, 1, schema.PaddingSAME},
		{5, 31, 7, 3, 1, 1, schema.PaddingVALID}, {3, 50, 6, 1, 2, 1, schema.PaddingVALID},
		{12, 33, 2, 5, 1, 1, schema.PaddingSAME}, {9, 40, 4, 3, 1, 2, schema.PaddingSAME},
	} {
		dilH, dilW := c.dil, c.dil
		if c.w == 33 {
			dilH, dilW = 2, 1
		}
		g, err := windowGeom("test", c.pad, 2, c.h, c.w, c.inC, c.k, c.k, c.stride, c.stride, dilH, dilW)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 20, 28, 48} {
			cases = append(cases, fgemmCase{g.rows(), n, g.depth(), &g, false}, fgemmCase{g.rows(), n, g.depth(), &g, true})
		}
	}
	return cases
}

func (c fgemmCase) String() string {
	if c.geom != nil {
		layout := "interleaved"
		if c.rowMajor {
			layout = "rowmajor"
		}
		return fmt.Sprintf("im2col%dx%dx%d/k%d/s%d/d%dx%d/N%d/%s", c.geom.inH, c.geom.inW, c.geom.inC, c.geom.kH, c.geom.strideH,
			c.geom.dilH, c.geom.dilW, c.N, layout)
	}
	return fmt.Sprintf("M%d/N%d/K%d", c.M, c.N, c.K)
}

// prepare returns the GEMM on kernel set kern, its geometry and an input.
func (c fgemmCase) prepare(r *rand.Rand, kern *f32.Kernels) (*fGemm, *convGeom, []float32) {
	g := &fGemm{kern: kern, lo: -3, hi: 3, rowMajor: c.rowMajor}
	w := randF32(r, c.N*c.K)
	g.setWeights(w, c.N, c.K)
	g.setBias(randF32(r, c.N))
	geom := c.geom
	if geom == nil {
		fg := fcGeom(c.M, c.K)
		geom = &fg
	}
	in := randF32(r, geom.batches*geom.inH*geom.inW*geom.inC)
	return g, geom, in
}

func randF32(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

// fgemmRef is the GEMM in float64 with the magnitude of each sum, from the
// packed weights (the layout's own reading of them).
func fgemmRef(g *fGemm, geom *convGeom, in []float32) (want, mag []float64) {
	M, N, K := geom.rows(), g.N, g.K
	row := make([]float32, K)
	want, mag = make([]float64, M*N), make([]float64, M*N)
	for p := range M {
		im2colPixel(geom, in, p, 0, row, 1)
		for c := range N {
			s, m := float64(g.bias[c]), math.Abs(float64(g.bias[c]))
			for k, x := range row {
				v := float64(x) * float64(g.packed[(c/f32.NR)*K*f32.NR+k*f32.NR+c%f32.NR])
				s += v
				m += math.Abs(v)
			}
			want[p*N+c] = min(max(s, float64(g.lo)), float64(g.hi))
			mag[p*N+c] = m
		}
	}
	return want, mag
}

// runFGemmThreads runs the GEMM split threads ways on a team of Workers.
func runFGemmThreads(g *fGemm, geom *convGeom, in []float32, threads int) []float32 {
	out := make([]float32, geom.rows()*g.N)
	ws := make([]fgemmWork, threads)
	team := kernel.NewWorkers(threads)
	defer team.Close()
	runFGemm(g, geom, in, out, team, threads, ws, &fgemmLoop{})
	return out
}

// TestFloatGEMMKernels holds every float kernel set this machine runs
// (assembly and Go twin) to a float64 reference on odd shapes: K not a
// multiple of the vector width, N=1, partial panels and tiles, im2col rows.
func TestFloatGEMMKernels(t *testing.T) {
	for _, kern := range f32.Sets() {
		for _, c := range fgemmCases(t) {
			t.Run(kern.Name+"/"+c.String(), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(c.M), uint64(c.N*1000+c.K)))
				g, geom, in := c.prepare(r, kern)
				got := runFGemmThreads(g, geom, in, 1)
				want, mag := fgemmRef(g, geom, in)
				for i, w := range want {
					if d := math.Abs(float64(got[i]) - w); !(d <= 1e-6*(mag[i]+1)) {
						t.Fatalf("element %d (row %d, channel %d): got %v, want %v", i, i/g.N, i%g.N, got[i], w)
					}
				}
			})
		}
	}
}

// TestFloatGEMMSplit checks that for each kernel set the split among 1, 2
// or 3 threads, and any cut into row and channel ranges, gives the same
// bits.
func TestFloatGEMMSplit(t *testing.T) {
	for _, kern := range f32.Sets() {
		for _, c := range fgemmCases(t) {
			t.Run(kern.Name+"/"+c.String(), func(t *testing.T) {
				r := rand.New(rand.NewPCG(7, uint64(c.N*1000+c.K)))
				g, geom, in := c.prepare(r, kern)
				one := runFGemmThreads(g, geom, in, 1)
				for _, threads := range []int{2, 3} {
					if got := runFGemmThreads(g, geom, in, threads); !slices.Equal(got, one) {
						t.Errorf("%d threads differ from 1", threads)
					}
				}
				// Rows cut at an odd place, channels on a panel boundary.
				M, N := geom.rows(), g.N
				out := make([]float32, M*N)
				var ws fgemmWork
				ws.ensure(g.K, kern)
				pc, cc := M/3+1, min(N, f32.NR)
				for _, pr := range [][2]int{{0, min(pc, M)}, {min(pc, M), M}} {
					fgemmRun(g, geom, in, out, pr[0], pr[1], 0, cc, &ws)
					fgemmRun(g, geom, in, out, pr[0], pr[1], cc, N, &ws)
				}
				if !slices.Equal(out, one) {
					t.Error("a cut into row and channel ranges differs from one run")
				}
			})
		}
	}
}

// TestFloatGEMMTwins compares each assembly set with the Go twin: they
// differ only by the fused multiply-add's single rounding.
func TestFloatGEMMTwins(t *testing.T) {
	for _, kern := range f32.Sets() {
		if kern == f32.Go() {
			continue
		}
		for _, c := range fgemmCases(t) {
			r := rand.New(rand.NewPCG(3, uint64(c.N*1000+c.K)))
			g, geom, in := c.prepare(r, kern)
			got := runFGemmThreads(g, geom, in, 1)
			g.kern = f32.Go()
			twin := runFGemmThreads(g, geom, in, 1)
			for i := range got {
				if d := math.Abs(float64(got[i] - twin[i])); d > 1e-5*float64(c.K+1) {
					t.Fatalf("%s %v element %d: %v, Go twin %v", kern.Name, c, i, got[i], twin[i])
				}
			}
		}
	}
}

// kernelClamps are the clamps the kernel tests run: one that bites on
// most sums and none at all.
var kernelClamps = [][2]float32{{-0.5, 0.5}, {float32(math.Inf(-1)), float32(math.Inf(1))}}

// guardF32 fills the floats around a kernel's output; none may change.
const guardF32 = 12345.5

// guarded returns n floats of guardF32.
func guarded(n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = guardF32
	}
	return s
}

// nearTwin reports whether got is the Go twin's want up to the rounding
// the twin's unfused multiply-adds add to a sum of magnitude mag.
func nearTwin(got, want float32, mag float64) bool {
	if got == want || math.IsNaN(float64(got)) && math.IsNaN(float64(want)) {
		return true
	}
	return math.Abs(float64(got)-float64(want)) <= 1e-6*(mag+1)
}

// TestFloatTileRowKernels calls each set's tile and row kernels directly on
// depths 0 to 67, clamps on and off, and a NaN input. Every row of a tile
// must have the bits the set's row1 and row4 give that row (how a GEMM is
// cut never changes a bit), be within rounding of the Go twin's row1, and
// leave every float outside its output alone.
func TestFloatTileRowKernels(t *testing.T) {
	for _, kern := range f32.Sets() {
		for _, k := range []int{0, 1, 2, 3, 5, 16, 67} {
			for _, cl := range kernelClamps {
				t.Run(fmt.Sprintf("%s/k%d/clamp%v", kern.Name, k, cl), func(t *testing.T) {
					testTileRows(t, kern, k, cl[0], cl[1])
				})
			}
		}
	}
}

func testTileRows(t *testing.T, kern *f32.Kernels, k int, lo, hi float32) {
	mr := kern.MR
	r := rand.New(rand.NewPCG(uint64(k), uint64(mr)))
	// Four panels ldb floats apart, the first the tile's; row 1 of the
	// tile reads a NaN when k > 0.
	ldb := k*f32.NR + 24
	b, bias, a := randF32(r, 4*ldb), randF32(r, 4*f32.NR), randF32(r, k*mr)
	if k > 0 {
		a[(k-1)*mr+1] = float32(math.NaN())
	}
	const ldc = f32.NR + 5
	tile := guarded((mr-1)*ldc + f32.NR + 3)
	kern.Tile(k, fPtr(a), &b[0], &bias[0], &tile[0], ldc, lo, hi)
	testRowsKernel(t, kern, k, a, b, bias, tile, ldc, lo, hi)
	for row := range mr {
		x := make([]float32, k)
		for i := range x {
			x[i] = a[i*mr+row]
		}
		r4 := guarded(4*f32.NR + 3)
		kern.Row4(k, fPtr(x), &b[0], &bias[0], &r4[0], ldb, lo, hi)
		for q := range 4 {
			r1, twin := guarded(f32.NR+3), guarded(f32.NR)
			kern.Row1(k, fPtr(x), &b[q*ldb], &bias[q*f32.NR], &r1[0], lo, hi)
			f32.Go().Row1(k, fPtr(x), &b[q*ldb], &bias[q*f32.NR], &twin[0], lo, hi)
			checkGuards(t, fmt.Sprintf("row1 (row %d, panel %d)", row, q), r1, f32.NR)
			for j := range f32.NR {
				if !sameF32(r4[q*f32.NR+j], r1[j]) {
					t.Fatalf("row %d channel %d: row4 %v, row1 %v", row, q*f32.NR+j, r4[q*f32.NR+j], r1[j])
				}
				if q == 0 && !sameF32(tile[row*ldc+j], r1[j]) {
					t.Fatalf("row %d channel %d: tile %v, row1 %v", row, j, tile[row*ldc+j], r1[j])
				}
				if mag := rowMagnitude(x, b[q*ldb+j:], bias[q*f32.NR+j]); !nearTwin(r1[j], twin[j], mag) {
					t.Fatalf("row %d channel %d: %v, Go twin %v", row, q*f32.NR+j, r1[j], twin[j])
				}
			}
		}
		checkGuards(t, fmt.Sprintf("row4 (row %d)", row), r4, 4*f32.NR)
		if row < mr-1 {
			checkGuards(t, fmt.Sprintf("tile row %d", row), tile[row*ldc:(row+1)*ldc], f32.NR)
		}
	}
	checkGuards(t, "tile", tile[(mr-1)*ldc:], f32.NR)
}

// testRowsKernel runs the set's rows kernel on the rows of the tile whose
// interleaved values are a, laid out lda = k+3 floats apart with other
// floats between them: it must give the tile's bits and write nothing
// else.
func testRowsKernel(t *testing.T, kern *f32.Kernels, k int, a, b, bias, tile []float32, ldc int, lo, hi float32) {
	t.Helper()
	mr, lda := kern.MR, k+3
	rows := guarded(mr * lda)
	for i := range k {
		for r := range mr {
			rows[r*lda+i] = a[i*mr+r]
		}
	}
	got := guarded(len(tile))
	kern.Rows(k, &rows[0], lda, &b[0], &bias[0], &got[0], ldc, lo, hi)
	for i := range got {
		if !sameF32(got[i], tile[i]) {
			t.Fatalf("rows kernel, float %d of the tile (row %d): %v, tile kernel %v", i, i/ldc, got[i], tile[i])
		}
	}
}

// rowMagnitude is |bias| + sum_k |x[k]*b[k*f32.NR]|.
func rowMagnitude(x, b []float32, bias float32) float64 {
	m := math.Abs(float64(bias))
	for i, v := range x {
		m += math.Abs(float64(v) * float64(b[i*f32.NR]))
	}
	return m
}

// sameF32 reports whether x and y have the same bits, or are both NaN.
func sameF32(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y
}

// checkGuards fails unless s[n:] still holds guardF32.
func checkGuards(t *testing.T, what string, s []float32, n int) {
	t.Helper()
	for i, v := range s[n:] {
		if v != guardF32 {
			t.Fatalf("%s wrote %v %d floats past its output", what, v, i)
		}
	}
}

// TestFloatDepthwiseKernelTwins calls each set's depthwise kernel directly
// on channel counts around its vector widths, with 0 to 9 taps at scattered
// offsets, clamps on and off and a NaN input: within rounding of the Go
// twin, nothing written past the output.
func TestFloatDepthwiseKernelTwins(t *testing.T) {
	for _, kern := range f32.Sets() {
		for _, c := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 20, 31, 33, 64, 70, 100} {
			for _, ntaps := range []int{0, 1, 9} {
				for _, cl := range kernelClamps {
					t.Run(fmt.Sprintf("%s/c%d/taps%d/clamp%v", kern.Name, c, ntaps, cl), func(t *testing.T) {
						testDepthwiseTwin(t, kern, c, ntaps, cl[0], cl[1])
					})
				}
			}
		}
	}
}

func testDepthwiseTwin(t *testing.T, kern *f32.Kernels, c, ntaps int, lo, hi float32) {
	const npix = 3
	r := rand.New(rand.NewPCG(uint64(c), uint64(ntaps)))
	xstep := c + 5
	xoff, woff := make([]int, max(ntaps, 1)), make([]int, max(ntaps, 1))
	for i := range ntaps {
		xoff[i], woff[i] = r.IntN(4*c+7), r.IntN(ntaps)*c
	}
	in := randF32(r, npix*xstep+4*c+7+c)
	in[xoff[0]+c-1] = float32(math.NaN()) // the last channel of pixel 0
	w, bias := randF32(r, ntaps*c+1), randF32(r, c)
	got, twin := guarded(npix*c+5), guarded(npix*c)
	kern.DW(c, npix, &got[0], &bias[0], &in[0], &w[0], &xoff[0], &woff[0], ntaps, xstep, lo, hi)
	f32.Go().DW(c, npix, &twin[0], &bias[0], &in[0], &w[0], &xoff[0], &woff[0], ntaps, xstep, lo, hi)
	checkGuards(t, "dw", got, npix*c)
	for i, want := range twin {
		if !nearTwin(got[i], want, float64(ntaps+1)) {
			t.Fatalf("pixel %d channel %d: %v, Go twin %v", i/c, i%c, got[i], want)
		}
	}
}

// BenchmarkFloatGEMM times each kernel set on MobileNet-like 1x1 layers
// (one thread) and a matrix-vector product; GMAC/s over the clock gives
// MACs per cycle.
func BenchmarkFloatGEMM(b *testing.B) {
	for _, kern := range f32.Sets() {
		for _, c := range []fgemmCase{{3136, 144, 24, nil, false}, {784, 192, 32, nil, false}, {196, 384, 64, nil, false}, {49, 960, 160, nil, false}, {1, 1001, 1280, nil, false}} {
			b.Run(kern.Name+"/"+c.String(), func(b *testing.B) {
				g, geom, in := c.prepare(rand.New(rand.NewPCG(1, 2)), kern)
				out := make([]float32, c.M*c.N)
				ws := make([]fgemmWork, 1)
				for b.Loop() {
					runFGemm(g, geom, in, out, nil, 1, ws, &fgemmLoop{})
				}
				b.ReportMetric(float64(c.M*c.N*c.K)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
			})
		}
	}
}

// BenchmarkFMALatency runs one chain of dependent fused multiply-adds
// (the row kernel over a single panel): at 4 cycles each on current x86
// cores, ns/op/(4*k) is the clock period.
func BenchmarkFMALatency(b *testing.B) {
	const k = 1 << 16
	a, w, bias, c := make([]float32, k), make([]float32, k*f32.NR), make([]float32, f32.NR), make([]float32, f32.NR)
	for b.Loop() {
		f32.Best().Row1(k, &a[0], &w[0], &bias[0], &c[0], -1, 1)
	}
	b.ReportMetric(4*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GHz@4cyc")
}

// depthwiseFloatRows is the float depthwise convolution in plain Go, the
// kernels' reference: output rows [rlo, rhi) (b*outH+oy), bias, then the
// taps in (ky, kx) order, then the clamp.
func depthwiseFloatRows(g *convGeom, mult int, in, w, bias, out []float32, lo, hi float32, rlo, rhi int) {
	inC := g.inC
	outC := inC * mult
	{
		for r := rlo; r < rhi; r++ {
			b, oy := r/g.outH, r%g.outH
			y0 := oy*g.strideH - g.padH
			for ox := range g.outW {
				o := out[(r*g.outW+ox)*outC : (r*g.outW+ox+1)*outC]
				if bias != nil {
					copy(o, bias[:outC])
				} else {
					clear(o)
				}
				x0 := ox*g.strideW - g.padW
				for ky := range g.kH {
					iy := y0 + ky*g.dilH
					if iy < 0 || iy >= g.inH {
						continue
					}
					rowBase := (b*g.inH + iy) * g.inW
					if g.kW == 3 && mult == 1 && x0 >= 0 && x0+2*g.dilW < g.inW {
						p0 := (rowBase + x0) * inC
						p1 := p0 + g.dilW*inC
						p2 := p1 + g.dilW*inC
						xa, xb, xc := in[p0:p0+inC], in[p1:p1+inC], in[p2:p2+inC]
						wr := w[ky*3*outC : (ky+1)*3*outC]
						wa, wb, wc := wr[:inC], wr[inC:2*inC], wr[2*inC:3*inC]
						a := o[:len(xa)]
						xb, xc, wa, wb, wc = xb[:len(xa)], xc[:len(xa)], wa[:len(xa)], wb[:len(xa)], wc[:len(xa)]
						for c, v := range xa {
							a[c] = a[c] + v*wa[c] + xb[c]*wb[c] + xc[c]*wc[c]
						}
						continue
					}
					for kx := range g.kW {
						ix := x0 + kx*g.dilW
						if ix < 0 || ix >= g.inW {
							continue
						}
						x := in[(rowBase+ix)*inC : (rowBase+ix+1)*inC]
						t := ky*g.kW + kx
						wt := w[t*outC : (t+1)*outC]
						if mult == 1 {
							a := o[:len(x)]
							wt = wt[:len(x)]
							for c, v := range x {
								a[c] += v * wt[c]
							}
							continue
						}
						for ic, v := range x {
							a := o[ic*mult : ic*mult+mult]
							wm := wt[ic*mult : ic*mult+mult]
							for m := range a {
								a[m] += v * wm[m]
							}
						}
					}
				}
				for c, a := range o {
					o[c] = kernel.ClampF32(a, lo, hi)
				}
			}
		}
	}
}

// TestFGemmPacksBothLayouts checks that weights laid out [K][N] pack into
// the same panels as their transpose laid out [N][K], for channel counts
// around the panel width.
func TestFGemmPacksBothLayouts(t *testing.T) {
	for _, N := range []int{1, f32.NR - 1, f32.NR, 2*f32.NR + 3} {
		const K = 7
		nk, kn := make([]float32, N*K), make([]float32, N*K)
		for c := range N {
			for k := range K {
				nk[c*K+k] = float32(c*100 + k)
				kn[k*N+c] = float32(c*100 + k)
			}
		}
		var a, b fGemm
		a.setWeights(nk, N, K)
		b.setWeightsKN(kn, N, K)
		if !slices.Equal(a.packed, b.packed) {
			t.Errorf("N=%d: weights packed from [K][N] differ from their [N][K] transpose's", N)
		}
	}
}

// rowMajorCase is a float CONV_2D whose im2col rows the GEMM writes one
// after another for the rows kernel.
type rowMajorCase struct {
	inH, inW, inC, outC, k, stride, dil int
	padding                             schema.Padding
}

// TestConvRowMajorIm2colKeepsTileBits runs float convolutions (a first
// layer's 3x3 stride 2 over RGB, stride 1 over more channels, dilation,
// both paddings, partial channel panels) with im2col rows written one
// after another for the rows kernel and interleaved for the tile kernel,
// with every float kernel set, on 1 and 2 threads, with NaN, infinite and
// -0 inputs, with and without a fused exact RELU6: the bits must agree.
func TestConvRowMajorIm2colKeepsTileBits(t *testing.T) {
	cases := []rowMajorCase{
		{33, 31, 3, 32, 3, 2, 1, schema.PaddingSAME},
		{17, 20, 5, 24, 3, 1, 1, schema.PaddingVALID},
		{15, 26, 16, 17, 3, 1, 2, schema.PaddingSAME},
		{9, 40, 2, 40, 5, 2, 1, schema.PaddingSAME},
	}
	for _, kern := range f32.Sets() {
		for _, c := range cases {
			for _, exact := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%+v/exact%v", kern.Name, c, exact), func(t *testing.T) {
					for _, threads := range []int{1, 2} {
						r := rand.New(rand.NewPCG(uint64(c.inW), uint64(c.inC)))
						in := tensor.NewTensor(tensor.Float32, 1, c.inH, c.inW, c.inC)
						filter := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, c.outC, c.k, c.k, c.inC))
						bias := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, c.outC))
						convFillRandF(r, in, 2)
						convFillRandF(r, filter, 1)
						convFillRandF(r, bias, 1)
						x := in.Float32s()
						x[3], x[len(x)/2], x[len(x)-1] = float32(math.NaN()), float32(math.Inf(1)), float32(math.Copysign(0, -1))
						team := kernel.NewWorkers(threads)
						t.Cleanup(team.Close)
						out := tensor.NewTensor(tensor.Float32)
						n := &kernel.Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: threads, Workers: team}
						op := &Conv2D{Params: Conv2DParams{Padding: c.padding, StrideW: c.stride, StrideH: c.stride,
							DilationW: c.dil, DilationH: c.dil, Activation: schema.ActivationFunctionTypeNONE}}
						if err := op.Prepare(n); err != nil {
							t.Fatal(err)
						}
						if !op.fg.rowMajor || op.geom.direct || op.planar.on {
							t.Fatalf("row-major im2col %v, direct %v, planar %v; want row-major im2col", op.fg.rowMajor, op.geom.direct, op.planar.on)
						}
						if exact {
							op.ClampExactly(0, 6)
						}
						op.fg.kern = kern
						out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
						op.fg.rowMajor = false
						if err := op.Eval(n); err != nil {
							t.Fatal(err)
						}
						want := append([]float32(nil), out.Float32s()...)
						op.fg.rowMajor = true
						clear(out.Float32s())
						if err := op.Eval(n); err != nil {
							t.Fatal(err)
						}
						nans := 0
						for i, got := range out.Float32s() {
							if got != got {
								nans++
							}
							if !sameF32(got, want[i]) {
								t.Fatalf("%d threads: output %d is %v (bits %#x), tile kernel %v (bits %#x)",
									threads, i, got, math.Float32bits(got), want[i], math.Float32bits(want[i]))
							}
						}
						if exact != (nans == 0) {
							t.Fatalf("%d threads, exact clamp %v: %d NaN outputs", threads, exact, nans)
						}
					}
				})
			}
		}
	}
}

// TestFloatGEMMWindowSameBits checks that the window kernel, reading
// windows in place and storing partial panels itself, gives the bits of
// copying the rows out first and the partial panels' tiles back (the rows
// kernel), on every direct and row-major im2col case.
func TestFloatGEMMWindowSameBits(t *testing.T) {
	for _, kern := range f32.Sets() {
		if kern.Window == nil {
			continue
		}
		copied := *kern
		copied.Window = nil
		for _, c := range fgemmCases(t) {
			if c.geom != nil && !c.rowMajor {
				continue
			}
			t.Run(kern.Name+"/"+c.String(), func(t *testing.T) {
				r := rand.New(rand.NewPCG(11, uint64(c.N*1000+c.K)))
				g, geom, in := c.prepare(r, kern)
				if len(in) > 0 {
					in[len(in)/2] = float32(math.NaN())
				}
				got := runFGemmThreads(g, geom, in, 1)
				g.kern = &copied
				if want := runFGemmThreads(g, geom, in, 1); !slices.EqualFunc(got, want, sameF32) {
					t.Error("windows read in place differ from their rows copied out")
				}
			})
		}
	}
}

// TestFloatGEMMWindowTiles checks that the cases meant to read windows in
// place do, so that TestFloatGEMMWindowSameBits tests something.
func TestFloatGEMMWindowTiles(t *testing.T) {
	for _, kern := range f32.Sets() {
		if kern.Window == nil {
			continue
		}
		for _, c := range fgemmCases(t) {
			if c.geom == nil || !c.rowMajor || c.geom.inW < 31 || c.geom.dilW != 1 {
				continue
			}
			n := 0
			for p := 0; p+kern.MR <= c.geom.rows(); p += kern.MR {
				if windowTile(c.geom, kern, p) >= 0 {
					n++
				}
			}
			if n == 0 {
				t.Errorf("%s %v: no tile reads its windows in place", kern.Name, c)
			}
		}
	}
}

// TestFloatWindowKernel calls each set's window kernel directly on
// segments of 0 to 19 values, 0 to 3 of them, overlapping rows (lda below
// kseg, as at stride 1) and not, 1 to 16 channels stored, 1 or 3 tiles,
// clamps on and off and a NaN: each tile must have the bits of the rows
// kernel on its segments laid end to end, and nothing else be written.
func TestFloatWindowKernel(t *testing.T) {
	for _, kern := range f32.Sets() {
		if kern.Window == nil {
			continue
		}
		for _, kseg := range []int{0, 1, 3, 9, 19} {
			for _, nseg := range []int{0, 1, 3} {
				for _, cols := range []int{1, 7, 8, 9, 15, 16} {
					for _, cl := range kernelClamps {
						t.Run(fmt.Sprintf("%s/kseg%d/nseg%d/cols%d/clamp%v", kern.Name, kseg, nseg, cols, cl), func(t *testing.T) {
							testWindowKernel(t, kern, kseg, nseg, cols, cl[0], cl[1])
						})
					}
				}
			}
		}
	}
}

func testWindowKernel(t *testing.T, kern *f32.Kernels, kseg, nseg, cols int, lo, hi float32) {
	mr, k := kern.MR, kseg*nseg
	r := rand.New(rand.NewPCG(uint64(kseg), uint64(nseg)))
	lda := max(kseg/2, 1)
	sega := (mr-1)*lda + kseg + 7
	const tiles, ldc = 3, f32.NR + 5
	astep := mr*lda + 2 // tile i's rows at img[i*astep:]
	img := randF32(r, (tiles-1)*astep+nseg*sega+1)
	if k > 0 {
		img[astep+(nseg-1)*sega+lda+kseg-1] = float32(math.NaN()) // tile 1, row 1's last value
	}
	b, bias := randF32(r, max(k, 1)*f32.NR), randF32(r, f32.NR)
	// The rows kernel reads each tile's segments laid end to end.
	want := guarded(tiles*mr*ldc + 3)
	rows := make([]float32, mr*max(k, 1))
	for tile := range tiles {
		for row := range mr {
			for s := range nseg {
				from := tile*astep + s*sega + row*lda
				copy(rows[row*k+s*kseg:], img[from:from+kseg])
			}
		}
		kern.Rows(k, &rows[0], k, &b[0], &bias[0], &want[tile*mr*ldc], ldc, lo, hi)
	}
	for _, n := range []int{1, tiles} {
		got := guarded(tiles*mr*ldc + 3)
		kern.Window(kseg, nseg, &img[0], lda, sega, &b[0], &bias[0], &got[0], ldc, cols, n, astep, lo, hi)
		for row := range n * mr {
			for j := range cols {
				if i := row*ldc + j; !sameF32(got[i], want[i]) {
					t.Fatalf("%d tiles, row %d channel %d: window kernel %v, rows kernel %v", n, row, j, got[i], want[i])
				}
			}
			checkGuards(t, fmt.Sprintf("%d tiles, row %d", n, row), got[row*ldc:(row+1)*ldc], cols)
		}
		checkGuards(t, fmt.Sprintf("%d tiles", n), got[n*mr*ldc:], 0)
	}
}
