package conv

import (
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/internal/asm/f32elem"
	"github.com/delego/delego/core/kernels/kernel"
)

// fGemm is the prepared right-hand side of a float GEMM
// out[p][c] = clamp(sum_k x[p][k]*w[c][k] + bias[c]).
//
// The weights are packed once, in panels of f32.NR channels ([ceil(N/f32.NR)][K][f32.NR],
// zero-padded), for the micro-kernels of internal/asm/f32; full tiles of
// kern.MR rows go through the tile kernel, leftover rows through the row
// kernels, and both give each element the same bits (see internal/asm/f32),
// so neither the tiling nor the split among threads changes the result.
type fGemm struct {
	K, N   int
	packed []float32 // [ceil(N/f32.NR)][K][f32.NR]
	bias   []float32 // ceil(N/f32.NR)*f32.NR values, zeros when absent
	lo, hi float32
	// exact is a standalone RELU or RELU6 fused into the op, applied to
	// each block of rows once computed, while it is in cache.
	exact kernel.ExactClamp
	kern  *f32.Kernels // nil: the process's set (f32.Best)
	// rowMajor says im2col rows are written one after another and read
	// by the rows kernel, not interleaved for the tile kernel.
	rowMajor bool
	// shared says packed comes from the model's store (shareWeights):
	// read-only, never packed into.
	shared bool
}

// fgemmKey names a float GEMM's packed weights in the model's store: the
// constant they come from, the matrix's shape and its layout.
type fgemmKey struct {
	data   *float32
	N, K   int
	kMajor bool
}

// shareWeights gives g the packed weights of constant w, laid out [N][K],
// from the model's store (Node.Derived): packed once, read by every
// interpreter of it.
func (g *fGemm) shareWeights(n *kernel.Node, w []float32, N, K int) {
	g.shareLaidOut(n, w, N, K, false)
}

// shareWeightsKN is shareWeights for weights laid out [K][N] (a DHWIO
// filter).
func (g *fGemm) shareWeightsKN(n *kernel.Node, w []float32, N, K int) {
	g.shareLaidOut(n, w, N, K, true)
}

// shareLaidOut is shareWeights for weights laid out [K][N] (kMajor) or
// [N][K].
func (g *fGemm) shareLaidOut(n *kernel.Node, w []float32, N, K int, kMajor bool) {
	g.packed = n.Derived(fgemmKey{unsafe.SliceData(w), N, K, kMajor}, func() any {
		var p fGemm
		p.pack(w, N, K, kMajor)
		return p.packed
	}).([]float32)
	g.N, g.K, g.shared = N, K, true
}

// kernels is the micro-kernel set g runs on.
func (g *fGemm) kernels() *f32.Kernels {
	if g.kern == nil {
		return f32.Best()
	}
	return g.kern
}

// panels is the number of f32.NR-channel weight panels.
func (g *fGemm) panels() int { return (g.N + f32.NR - 1) / f32.NR }

// setWeights packs weights w laid out [N][K].
func (g *fGemm) setWeights(w []float32, N, K int) { g.pack(w, N, K, false) }

// setWeightsKN packs weights w laid out [K][N] (a DHWIO filter).
func (g *fGemm) setWeightsKN(w []float32, N, K int) { g.pack(w, N, K, true) }

// reserve makes g's own room for N x K weights, so that packing weights
// that are not constant allocates nothing in Eval.
func (g *fGemm) reserve(N, K int) {
	if g.shared {
		g.packed, g.shared = nil, false
	}
	g.packed = kernel.Sized(g.packed, (N+f32.NR-1)/f32.NR*K*f32.NR)
}

// pack packs w, laid out [K][N] (kMajor) or [N][K], into panels.
func (g *fGemm) pack(w []float32, N, K int, kMajor bool) {
	g.reserve(N, K)
	g.N, g.K = N, K
	if N%f32.NR != 0 {
		clear(g.packed[(N/f32.NR)*K*f32.NR:])
	}
	if K == 0 {
		return
	}
	for c := range N {
		dst := g.packed[(c/f32.NR)*K*f32.NR+c%f32.NR:]
		if kMajor {
			for k := range K {
				dst[k*f32.NR] = w[k*N+c]
			}
			continue
		}
		for k, v := range w[c*K : c*K+K] {
			dst[k*f32.NR] = v
		}
	}
}

func (g *fGemm) setBias(bias []float32) {
	size := (g.N + f32.NR - 1) / f32.NR * f32.NR
	if cap(g.bias) < size {
		g.bias = make([]float32, size)
	}
	g.bias = g.bias[:size]
	clear(g.bias)
	if bias != nil {
		copy(g.bias, bias[:g.N])
	}
}

// fgemmWork is one worker's scratch: the rows of a row block, one im2col
// row, one tile for partial panels, and the block's runs of tiles.
type fgemmWork struct {
	panel []float32
	row   []float32
	tile  []float32
	// runs are the row block's runs of tiles for the window kernel.
	runs []tileRun
}

// fgemmRowBlock is the number of rows packed at once: whole tiles of mr
// rows, about 128 KiB of them (they stay in L2 while every weight panel
// passes over them).
func fgemmRowBlock(K, mr int) int {
	return max(1, min(32, 32768/(max(K, 1)*mr))) * mr
}

func (w *fgemmWork) ensure(K int, kern *f32.Kernels) {
	rb := fgemmRowBlock(K, kern.MR)
	w.panel = grow(w.panel, rb*K)
	w.row = grow(w.row, K)
	w.tile = grow(w.tile, kern.MR*f32.NR)
	w.runs = grow(w.runs, rb/kern.MR)[:0]
}

// grow returns s resized to n, reallocated only when too small.
func grow[E any](s []E, n int) []E {
	if cap(s) < n {
		return make([]E, n)
	}
	return s[:n]
}

// fgemmRun computes output rows [p0,p1) and channels [c0,c1) (c0 a
// multiple of f32.NR).
func fgemmRun(g *fGemm, geom *convGeom, in, out []float32, p0, p1, c0, c1 int, ws *fgemmWork) {
	kern := g.kernels()
	mr := kern.MR
	rb := fgemmRowBlock(g.K, mr)
	for pb := p0; pb < p1; pb += rb {
		pe := min(pb+rb, p1)
		full := pb + (pe-pb)/mr*mr
		fgemmTiles(g, kern, geom, in, out, pb, full, c0, c1, ws)
		for p := full; p < pe; p++ {
			fgemmRow(g, kern, geom, in, out, p, c0, c1, ws)
		}
		g.clampRows(out, pb, pe, c0, c1)
	}
}

// clampRows applies g's exact clamp, if it has one, to rows [p0,p1) and
// channels [c0,c1) of out.
func (g *fGemm) clampRows(out []float32, p0, p1, c0, c1 int) {
	lo, hi, ok := g.exact.Range()
	if !ok {
		return
	}
	N := g.N
	c1 = min(c1, N)
	if c0 == 0 && c1 == N {
		z := out[p0*N : p1*N]
		f32elem.Unary(f32elem.MaxMin, z, z, lo, hi, 0)
		return
	}
	for p := p0; p < p1; p++ {
		z := out[p*N+c0 : p*N+c1]
		f32elem.Unary(f32elem.MaxMin, z, z, lo, hi, 0)
	}
}

// fgemmTiles computes rows [p0,p1), whole tiles of kern.MR rows, for
// channels [c0,c1): it copies or interleaves the im2col rows of the tiles
// that need it (direct rows are read in place by the rows kernel), then
// runs every tile against each weight panel in turn. A set with a window
// kernel takes fgemmWindowTiles.
func fgemmTiles(g *fGemm, kern *f32.Kernels, geom *convGeom, in, out []float32, p0, p1, c0, c1 int, ws *fgemmWork) {
	K, N, mr := g.K, g.N, kern.MR
	if p0 >= p1 {
		return
	}
	tiles := (p1 - p0) / mr
	inPlace := geom.direct && K > 0
	rowMajor := !inPlace && K > 0 && g.rowMajor
	if kern.Window != nil && (inPlace || rowMajor) {
		fgemmWindowTiles(g, kern, geom, in, out, p0, tiles, c0, c1, ws)
		return
	}
	panel := ws.panel[:tiles*mr*K]
	switch {
	case rowMajor:
		im2colRowMajor(geom, in, p0, tiles*mr, 0, panel)
	case !inPlace && K > 0:
		for t := range tiles {
			im2colRows(geom, in, p0+t*mr, mr, 0, panel[t*mr*K:(t+1)*mr*K])
		}
	}
	for q := c0 / f32.NR; q*f32.NR < c1; q++ {
		b := fPtr(g.packed[q*K*f32.NR : (q+1)*K*f32.NR])
		bias := &g.bias[q*f32.NR : (q+1)*f32.NR][0]
		cols := min(f32.NR, c1-q*f32.NR)
		for t := range tiles {
			p := p0 + t*mr
			c, ldc := &ws.tile[:mr*f32.NR][0], f32.NR // a partial panel's tile
			if cols == f32.NR {
				c, ldc = &out[p*N+q*f32.NR : (p+mr-1)*N+(q+1)*f32.NR][0], N
			}
			switch {
			case inPlace:
				kern.Rows(K, &in[p*K : (p+mr)*K][0], K, b, bias, c, ldc, g.lo, g.hi)
			case rowMajor:
				kern.Rows(K, &panel[t*mr*K : (t+1)*mr*K][0], K, b, bias, c, ldc, g.lo, g.hi)
			default:
				kern.Tile(K, fPtr(panel[t*mr*K:(t+1)*mr*K]), b, bias, c, ldc, g.lo, g.hi)
			}
			if cols == f32.NR {
				continue
			}
			for r := range mr {
				copy(out[(p+r)*N+q*f32.NR:(p+r)*N+q*f32.NR+cols], ws.tile[r*f32.NR:])
			}
		}
	}
}

// tileRun is a run of tiles of a row block that the window kernel
// computes in one call: n tiles from tile t, read in place from the input
// from offset off (direct rows, or windows), or copied into the block's
// rows.
type tileRun struct {
	t, n    int
	inPlace bool
	off     int
}

// fgemmWindowTiles is fgemmTiles on a set with a window kernel, for the
// tiles tiles from row p0 of a direct or row-major GEMM: it copies out the
// rows of the tiles whose windows are not all inside the input, then runs
// the tiles, in runs that each take one call, against each weight panel
// in turn; the kernel stores a partial panel's channels itself.
func fgemmWindowTiles(g *fGemm, kern *f32.Kernels, geom *convGeom, in, out []float32, p0, tiles, c0, c1 int, ws *fgemmWork) {
	K, N, mr := g.K, g.N, kern.MR
	panel := ws.panel[:tiles*mr*K]
	// A window's rows are kseg-float segments, one per filter row.
	kseg, nseg, lda, sega := geom.kW*geom.inC, geom.kH, geom.strideW*geom.inC, geom.dilH*geom.inW*geom.inC
	var runs []tileRun
	if geom.direct {
		kseg, nseg, lda, sega = K, 1, K, 0
		runs = append(ws.runs[:0], tileRun{0, tiles, true, p0 * K})
	} else {
		runs = windowRuns(geom, kern, in, p0, tiles, K, lda, panel, ws.runs[:0])
	}
	ws.runs = runs
	for q := c0 / f32.NR; q*f32.NR < c1; q++ {
		b := fPtr(g.packed[q*K*f32.NR : (q+1)*K*f32.NR])
		bias := &g.bias[q*f32.NR : (q+1)*f32.NR][0]
		cols := min(f32.NR, c1-q*f32.NR)
		for _, r := range runs {
			p := p0 + r.t*mr
			c := &out[p*N+q*f32.NR : (p+r.n*mr-1)*N+q*f32.NR+cols][0]
			if r.inPlace {
				kern.Window(kseg, nseg, &in[r.off], lda, sega, b, bias, c, N, cols, r.n, mr*lda, g.lo, g.hi)
			} else {
				kern.Window(K, 1, &panel[r.off], K, 0, b, bias, c, N, cols, r.n, mr*K, g.lo, g.hi)
			}
		}
	}
}

// windowRuns appends to runs the runs of the tiles tiles from row p0 of a
// row-major im2col GEMM of depth K: the tiles whose windows lie inside the
// input, read in place, in runs whose windows follow each other lda*MR
// floats apart; the others, whose rows it copies into panel, in runs of
// consecutive tiles.
func windowRuns(geom *convGeom, kern *f32.Kernels, in []float32, p0, tiles, K, lda int, panel []float32, runs []tileRun) []tileRun {
	mr := kern.MR
	for t := range tiles {
		run := tileRun{t: t, n: 1, off: windowTile(geom, kern, p0+t*mr)}
		if run.inPlace = run.off >= 0; !run.inPlace {
			run.off = t * mr * K
			im2colRowMajor(geom, in, p0+t*mr, mr, 0, panel[run.off:run.off+mr*K])
		}
		step := K // floats from one row to the next, and so from tile to tile
		if run.inPlace {
			step = lda
		}
		last := len(runs) - 1
		if last >= 0 && runs[last].inPlace == run.inPlace && runs[last].off+runs[last].n*mr*step == run.off {
			runs[last].n++
			continue
		}
		runs = append(runs, run)
	}
	return runs
}

// windowTile is the offset in the input of the window of GEMM row p when
// kern has a window kernel and the tile of kern.MR rows from p can take
// it: the rows lie in one output row, their windows inside the input
// (padding is copied as zeros, whose products a sum must still add) and
// each filter row's taps side by side (no dilation across). Otherwise -1.
func windowTile(g *convGeom, kern *f32.Kernels, p int) int {
	ox := p % g.outW
	if kern.Window == nil || g.dilW != 1 || ox+kern.MR > g.outW || !g.insideRow((p/g.outW)%g.outH) {
		return -1
	}
	if lo, hi := g.insideCols(); ox < lo || ox+kern.MR > hi {
		return -1
	}
	b, y0, x0 := g.window(p)
	return ((b*g.inH+y0)*g.inW + x0) * g.inC
}

// fgemmRow computes row p for channels [c0,c1) with the row kernels.
func fgemmRow(g *fGemm, kern *f32.Kernels, geom *convGeom, in, out []float32, p, c0, c1 int, ws *fgemmWork) {
	K, N := g.K, g.N
	var row []float32
	if geom.direct {
		row = in[p*K : p*K+K]
	} else {
		im2colPixel(geom, in, p, 0, ws.row, 1)
		row = ws.row[:K]
	}
	a := fPtr(row)
	o := out[p*N : p*N+N]
	q := c0 / f32.NR
	for ; (q+4)*f32.NR <= c1; q += 4 {
		b := fPtr(g.packed[q*K*f32.NR : (q+4)*K*f32.NR])
		kern.Row4(K, a, b, &g.bias[q*f32.NR : (q+4)*f32.NR][0], &o[q*f32.NR : (q+4)*f32.NR][0], K*f32.NR, g.lo, g.hi)
	}
	for ; q*f32.NR < c1; q++ {
		b := fPtr(g.packed[q*K*f32.NR : (q+1)*K*f32.NR])
		bias := &g.bias[q*f32.NR : (q+1)*f32.NR][0]
		if (q+1)*f32.NR <= c1 {
			kern.Row1(K, a, b, bias, &o[q*f32.NR : (q+1)*f32.NR][0], g.lo, g.hi)
			continue
		}
		kern.Row1(K, a, b, bias, &ws.tile[:f32.NR][0], g.lo, g.hi)
		copy(o[q*f32.NR:c1], ws.tile)
	}
}

// fPtr is the address of s's first element, or nil when s is empty (the
// kernels then read nothing from it).
func fPtr(s []float32) *float32 {
	if len(s) == 0 {
		return nil
	}
	return unsafe.SliceData(s)
}
