package kernels

import "unsafe"

// fGemm is the prepared right-hand side of a float GEMM
// out[p][c] = clamp(sum_k x[p][k]*w[c][k] + bias[c]).
//
// The main kernel computes 3 rows x 2 channels per pass over K (the shape
// that keeps Go's register allocator from spilling) with the weights of
// each channel pair interleaved ([K][2]); leftover rows use a plain
// dot-product kernel on the row-major weights. Every output element is
// the same sequential sum over k whichever kernel or thread computes it.
type fGemm struct {
	K, N   int
	packed []float32 // [ceil(N/2)][K][2]
	w      []float32 // [N][K] (the filter itself)
	bias   []float32 // N values, zeros when absent
	lo, hi float32
}

func (g *fGemm) setWeights(w []float32, N, K int) {
	g.N, g.K, g.w = N, K, w[:N*K]
	pairs := (N + 1) / 2
	if cap(g.packed) < pairs*K*2+kernelSlack {
		g.packed = make([]float32, pairs*K*2+kernelSlack)
	}
	g.packed = g.packed[:pairs*K*2]
	clear(g.packed)
	for c := range N {
		dst := g.packed[(c/2)*K*2:]
		lane := c % 2
		for k, v := range w[c*K : c*K+K] {
			dst[2*k+lane] = v
		}
	}
}

func (g *fGemm) setBias(bias []float32) {
	if cap(g.bias) < g.N {
		g.bias = make([]float32, g.N)
	}
	g.bias = g.bias[:g.N]
	if bias == nil {
		clear(g.bias)
	} else {
		copy(g.bias, bias[:g.N])
	}
}

type fgemmWork struct {
	panel []float32
	row   []float32
}

func fgemmBlocks(K int) (rowBlock, chanBlock int) {
	rowBlock = max(3, min(63, 8192/max(K, 1)/3*3))
	chanBlock = max(4, min(256, (32768/max(K, 1))&^3))
	return
}

func (w *fgemmWork) ensure(K int) {
	rb, _ := fgemmBlocks(K)
	if cap(w.panel) < rb*K+kernelSlack {
		w.panel = make([]float32, rb*K+kernelSlack)
	}
	w.panel = w.panel[:rb*K]
	if cap(w.row) < K {
		w.row = make([]float32, K)
	}
	w.row = w.row[:K]
}

// fgemmRun computes output rows [p0,p1) and channels [c0,c1) (c0 even).
func fgemmRun(g *fGemm, geom *convGeom, in, out []float32, p0, p1, c0, c1 int, ws *fgemmWork) {
	K, N := g.K, g.N
	rb, cb := fgemmBlocks(K)
	lo, hi := g.lo, g.hi
	for pb := p0; pb < p1; pb += rb {
		pe := min(pb+rb, p1)
		full := 0
		if K > 0 {
			full = (pe - pb) / 3 * 3
		}
		for i := 0; i < full; i += 3 {
			panel := ws.panel[i*K : (i+3)*K]
			for j := range 3 {
				im2colPixel(geom, in, pb+i+j, 0, panel[j:], 3)
			}
		}
		for cs := c0; cs < c1; cs += cb {
			ce := min(cs+cb, c1)
			for i := 0; i < full; i += 3 {
				panel := ws.panel[i*K : (i+3)*K]
				o0 := out[(pb+i)*N : (pb+i+1)*N]
				o1 := out[(pb+i+1)*N : (pb+i+2)*N]
				o2 := out[(pb+i+2)*N : (pb+i+3)*N]
				for c := cs; c < ce; c += 2 {
					acc := fkernel3x2(panel, g.packed[(c/2)*2*K:(c/2+1)*2*K], K)
					b := g.bias[c]
					o0[c] = ClampF32(acc[0]+b, lo, hi)
					o1[c] = ClampF32(acc[2]+b, lo, hi)
					o2[c] = ClampF32(acc[4]+b, lo, hi)
					if c+1 < ce {
						b = g.bias[c+1]
						o0[c+1] = ClampF32(acc[1]+b, lo, hi)
						o1[c+1] = ClampF32(acc[3]+b, lo, hi)
						o2[c+1] = ClampF32(acc[5]+b, lo, hi)
					}
				}
			}
		}
		for p := pb + full; p < pe; p++ {
			var row []float32
			if geom.direct {
				row = in[p*K : p*K+K]
			} else {
				im2colPixel(geom, in, p, 0, ws.row, 1)
				row = ws.row
			}
			o := out[p*N : p*N+N]
			c := c0
			for ; c+4 <= c1; c += 4 {
				a0, a1, a2, a3 := fdot4(row, g.w[c*K:(c+4)*K], K)
				o[c] = ClampF32(a0+g.bias[c], lo, hi)
				o[c+1] = ClampF32(a1+g.bias[c+1], lo, hi)
				o[c+2] = ClampF32(a2+g.bias[c+2], lo, hi)
				o[c+3] = ClampF32(a3+g.bias[c+3], lo, hi)
			}
			for ; c < c1; c++ {
				o[c] = ClampF32(fdot1(row, g.w[c*K:(c+1)*K])+g.bias[c], lo, hi)
			}
		}
	}
}

// fkernel3x2 returns acc[2r+j] = sum_k panel[3k+r]*w[2k+j], summed in k
// order.
func fkernel3x2(panel, w []float32, K int) (acc [6]float32) {
	if K == 0 {
		return
	}
	_ = panel[3*K-1]
	_ = w[2*K-1]
	// See qkernel4x3 about the pointers' slack.
	pa := unsafe.Pointer(unsafe.SliceData(panel))
	pw := unsafe.Pointer(unsafe.SliceData(w))
	end := unsafe.Add(pw, 8*K)
	var c00, c01, c10, c11, c20, c21 float32
	for uintptr(pw) < uintptr(end) {
		w0 := *(*float32)(pw)
		w1 := *(*float32)(unsafe.Add(pw, 4))
		x := *(*float32)(pa)
		c00 += x * w0
		c01 += x * w1
		x = *(*float32)(unsafe.Add(pa, 4))
		c10 += x * w0
		c11 += x * w1
		x = *(*float32)(unsafe.Add(pa, 8))
		c20 += x * w0
		c21 += x * w1
		pa = unsafe.Add(pa, 12)
		pw = unsafe.Add(pw, 8)
	}
	return [6]float32{c00, c01, c10, c11, c20, c21}
}

func fdot4(row, w []float32, K int) (a0, a1, a2, a3 float32) {
	row = row[:K]
	w0 := w[0*K : 1*K]
	w1 := w[1*K : 2*K]
	w2 := w[2*K : 3*K]
	w3 := w[3*K : 4*K]
	for k, x := range row {
		a0 += x * w0[k]
		a1 += x * w1[k]
		a2 += x * w2[k]
		a3 += x * w3[k]
	}
	return
}

func fdot1(row, w []float32) (a float32) {
	w = w[:len(row)]
	for k, x := range row {
		a += x * w[k]
	}
	return
}
