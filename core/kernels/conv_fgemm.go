package kernels

import "unsafe"

// fGemm is the prepared right-hand side of a float GEMM
// out[p][c] = clamp(sum_k x[p][k]*w[c][k] + bias[c]).
//
// The weights are packed once, in panels of fNR channels ([ceil(N/fNR)][K][fNR],
// zero-padded), for the micro-kernels of float_kernels.go; full tiles of
// kern.mr rows go through the tile kernel, leftover rows through the row
// kernels, and both give each element the same bits (see float_kernels.go),
// so neither the tiling nor the split among threads changes the result.
type fGemm struct {
	K, N   int
	packed []float32 // [ceil(N/fNR)][K][fNR]
	bias   []float32 // ceil(N/fNR)*fNR values, zeros when absent
	lo, hi float32
	kern   *floatKernels // nil: the process's set (fk)
	// shared says packed comes from the model's store (shareWeights):
	// read-only, never packed into.
	shared bool
}

// fgemmKey names a float GEMM's packed weights in the model's store: the
// constant they come from and the matrix's shape.
type fgemmKey struct {
	data *float32
	N, K int
}

// shareWeights gives g the packed weights of constant w from the model's
// store (Node.Derived): packed once, read by every interpreter of it.
func (g *fGemm) shareWeights(n *Node, w []float32, N, K int) {
	g.packed = n.Derived(fgemmKey{unsafe.SliceData(w), N, K}, func() any {
		var p fGemm
		p.setWeights(w, N, K)
		return p.packed
	}).([]float32)
	g.N, g.K, g.shared = N, K, true
}

// kernels is the micro-kernel set g runs on.
func (g *fGemm) kernels() *floatKernels {
	if g.kern == nil {
		return fk
	}
	return g.kern
}

// panels is the number of fNR-channel weight panels.
func (g *fGemm) panels() int { return (g.N + fNR - 1) / fNR }

func (g *fGemm) setWeights(w []float32, N, K int) {
	if g.shared { // never pack into the model's copy
		g.packed, g.shared = nil, false
	}
	g.N, g.K = N, K
	size := (N + fNR - 1) / fNR * K * fNR
	if cap(g.packed) < size {
		g.packed = make([]float32, size)
	}
	g.packed = g.packed[:size]
	if N%fNR != 0 {
		clear(g.packed[(N/fNR)*K*fNR:])
	}
	if K == 0 {
		return
	}
	for c := range N {
		dst := g.packed[(c/fNR)*K*fNR+c%fNR:]
		for k, v := range w[c*K : c*K+K] {
			dst[k*fNR] = v
		}
	}
}

func (g *fGemm) setBias(bias []float32) {
	size := (g.N + fNR - 1) / fNR * fNR
	if cap(g.bias) < size {
		g.bias = make([]float32, size)
	}
	g.bias = g.bias[:size]
	clear(g.bias)
	if bias != nil {
		copy(g.bias, bias[:g.N])
	}
}

// fgemmWork is one worker's scratch: the interleaved rows of a row block,
// one im2col row and one tile for partial panels.
type fgemmWork struct {
	panel []float32
	row   []float32
	tile  []float32
}

// fgemmRowBlock is the number of rows packed at once: whole tiles of mr
// rows, about 128 KiB of them (they stay in L2 while every weight panel
// passes over them).
func fgemmRowBlock(K, mr int) int {
	return max(1, min(32, 32768/(max(K, 1)*mr))) * mr
}

func (w *fgemmWork) ensure(K int, kern *floatKernels) {
	rb := fgemmRowBlock(K, kern.mr)
	w.panel = growF32(w.panel, rb*K)
	w.row = growF32(w.row, K)
	w.tile = growF32(w.tile, kern.mr*fNR)
}

// growF32 returns s resized to n, reallocated only when too small.
func growF32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// fgemmRun computes output rows [p0,p1) and channels [c0,c1) (c0 a
// multiple of fNR).
func fgemmRun(g *fGemm, geom *convGeom, in, out []float32, p0, p1, c0, c1 int, ws *fgemmWork) {
	kern := g.kernels()
	mr := kern.mr
	rb := fgemmRowBlock(g.K, mr)
	for pb := p0; pb < p1; pb += rb {
		pe := min(pb+rb, p1)
		full := pb + (pe-pb)/mr*mr
		fgemmTiles(g, kern, geom, in, out, pb, full, c0, c1, ws)
		for p := full; p < pe; p++ {
			fgemmRow(g, kern, geom, in, out, p, c0, c1, ws)
		}
	}
}

// fgemmTiles computes rows [p0,p1), whole tiles of kern.mr rows, for
// channels [c0,c1): it interleaves im2col rows by k (direct rows are read
// in place by the rows kernel), then runs every tile against each weight
// panel in turn.
func fgemmTiles(g *fGemm, kern *floatKernels, geom *convGeom, in, out []float32, p0, p1, c0, c1 int, ws *fgemmWork) {
	K, N, mr := g.K, g.N, kern.mr
	if p0 >= p1 {
		return
	}
	tiles := (p1 - p0) / mr
	inPlace := geom.direct && K > 0
	panel := ws.panel[:tiles*mr*K]
	if !inPlace && K > 0 {
		for t := range tiles {
			im2colRows(geom, in, p0+t*mr, mr, 0, panel[t*mr*K:(t+1)*mr*K])
		}
	}
	for q := c0 / fNR; q*fNR < c1; q++ {
		b := fPtr(g.packed[q*K*fNR : (q+1)*K*fNR])
		bias := &g.bias[q*fNR : (q+1)*fNR][0]
		cols := min(fNR, c1-q*fNR)
		for t := range tiles {
			p := p0 + t*mr
			c, ldc := &ws.tile[:mr*fNR][0], fNR // a partial panel's tile
			if cols == fNR {
				c, ldc = &out[p*N+q*fNR : (p+mr-1)*N+(q+1)*fNR][0], N
			}
			if inPlace {
				kern.rows(K, &in[p*K : (p+mr)*K][0], K, b, bias, c, ldc, g.lo, g.hi)
			} else {
				kern.tile(K, fPtr(panel[t*mr*K:(t+1)*mr*K]), b, bias, c, ldc, g.lo, g.hi)
			}
			if cols == fNR {
				continue
			}
			for r := range mr {
				copy(out[(p+r)*N+q*fNR:(p+r)*N+q*fNR+cols], ws.tile[r*fNR:])
			}
		}
	}
}

// fgemmRow computes row p for channels [c0,c1) with the row kernels.
func fgemmRow(g *fGemm, kern *floatKernels, geom *convGeom, in, out []float32, p, c0, c1 int, ws *fgemmWork) {
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
	q := c0 / fNR
	for ; (q+4)*fNR <= c1; q += 4 {
		b := fPtr(g.packed[q*K*fNR : (q+4)*K*fNR])
		kern.row4(K, a, b, &g.bias[q*fNR : (q+4)*fNR][0], &o[q*fNR : (q+4)*fNR][0], K*fNR, g.lo, g.hi)
	}
	for ; q*fNR < c1; q++ {
		b := fPtr(g.packed[q*K*fNR : (q+1)*K*fNR])
		bias := &g.bias[q*fNR : (q+1)*fNR][0]
		if (q+1)*fNR <= c1 {
			kern.row1(K, a, b, bias, &o[q*fNR : (q+1)*fNR][0], g.lo, g.hi)
			continue
		}
		kern.row1(K, a, b, bias, &ws.tile[:fNR][0], g.lo, g.hi)
		copy(o[q*fNR:c1], ws.tile)
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
