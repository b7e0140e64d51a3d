package kernels

import (
	"unsafe"
)

// qGemm is the prepared right-hand side of a quantized GEMM
// out[p][c] = requant(sum_k x[p][k]*(w[c][k]-wzp) + bias[c] - xzp*sum_k(w[c][k]-wzp)),
// which equals TFLite's sum_k (x-xzp)*(w-wzp) + bias exactly.
//
// The main kernel computes a 4x4 block (4 rows, 4 channels) with two
// channels per 64-bit multiply: the weights of channels c and c+1 are packed
// as w[c] + w[c+1]<<32, so x*packed accumulates both dot products at once
// (low and high 32-bit lanes). The lanes are split exactly afterwards as long
// as each dot product fits in an int32, which is also what TFLite's int32
// accumulators require. Rows left over (fewer than 4) use a plain kernel on
// int16 weights.
type qGemm struct {
	K, N   int
	packed []int64 // [ceil(N/4)][K][2]
	w16    []int16 // [N][K], w - wzp
	cst    []int32 // bias - xzp*sum_k(w-wzp)
	rq     chanRequant
	ruy    bool // ruy rounding (GEMM path) instead of TFLite's
	swarOK bool // lanes cannot overflow: the packed kernel may be used
}

// qgemmMaxProduct bounds |x*(w-wzp)| for 8-bit operands.
const qgemmMaxProduct = 255 * 255

// setWeights packs the weights (row-major [N][K], 8-bit) with zero point wzp.
func (g *qGemm) setWeights(w []byte, signed bool, wzp int32, N, K int) {
	g.N, g.K = N, K
	groups := (N + 3) / 4
	if cap(g.packed) < groups*K*2 {
		g.packed = make([]int64, groups*K*2)
	}
	g.packed = g.packed[:groups*K*2]
	if cap(g.w16) < N*K {
		g.w16 = make([]int16, N*K)
	}
	g.w16 = g.w16[:N*K]
	for i := range N * K {
		v := int32(w[i])
		if signed {
			v = int32(int8(w[i]))
		}
		g.w16[i] = int16(v - wzp)
	}
	clear(g.packed)
	for c := range N {
		grp, lane := c/4, c%4
		word := lane / 2
		shift := uint(32 * (lane % 2))
		dst := g.packed[grp*K*2:]
		src := g.w16[c*K : c*K+K]
		for k, v := range src {
			dst[2*k+word] += int64(v) << shift
		}
	}
	g.swarOK = int64(K)*qgemmMaxProduct < 1<<31
}

// setBias computes the per-channel constant term from the bias and the
// input zero point.
func (g *qGemm) setBias(bias []int32, xzp int32) {
	if cap(g.cst) < g.N {
		g.cst = make([]int32, g.N)
	}
	g.cst = g.cst[:g.N]
	for c := range g.N {
		var s int32
		for _, v := range g.w16[c*g.K : c*g.K+g.K] {
			s += int32(v)
		}
		b := int32(0)
		if bias != nil {
			b = bias[c]
		}
		g.cst[c] = b - xzp*s
	}
}

// qgemmWork is one worker's scratch memory.
type qgemmWork[T int8 | uint8] struct {
	panel []T // rowBlock rows, interleaved by 4
	row   []T // one im2col row
}

// qgemmBlocks returns the row block (multiple of 4) and channel block
// (multiple of 4) sizes for depth K.
func qgemmBlocks(K int) (rowBlock, chanBlock int) {
	rowBlock = max(4, min(64, (16384/max(K, 1))&^3))
	chanBlock = max(4, min(256, (65536/max(K, 1))&^3))
	return
}

func (w *qgemmWork[T]) ensure(K int) {
	rb, _ := qgemmBlocks(K)
	if cap(w.panel) < rb*K {
		w.panel = make([]T, rb*K)
	}
	w.panel = w.panel[:rb*K]
	if cap(w.row) < K {
		w.row = make([]T, K)
	}
	w.row = w.row[:K]
}

// qgemmRun computes output rows [p0,p1) and channels [c0,c1) (c0 a multiple
// of 4) of the GEMM whose rows geom draws from in. Output row p starts at
// out[p*g.N]. xzp is the input zero point, used as im2col padding.
func qgemmRun[T int8 | uint8](g *qGemm, geom *convGeom, in []T, out []T, xzp int32, p0, p1, c0, c1 int, ws *qgemmWork[T]) {
	K, N := g.K, g.N
	rb, cb := qgemmBlocks(K)
	pad := T(xzp)
	var blk [4][4]int32
	for pb := p0; pb < p1; pb += rb {
		pe := min(pb+rb, p1)
		full := 0
		if g.swarOK && K > 0 {
			full = (pe - pb) &^ 3
		}
		for i := 0; i < full; i += 4 {
			panel := ws.panel[i*K : (i+4)*K]
			for j := range 4 {
				im2colPixel(geom, in, pb+i+j, pad, panel[j:], 4)
			}
		}
		for cs := c0; cs < c1; cs += cb {
			ce := min(cs+cb, c1)
			for i := 0; i < full; i += 4 {
				panel := ws.panel[i*K : (i+4)*K]
				for c := cs; c < ce; c += 4 {
					acc := qkernel4x4(panel, g.packed[(c/4)*2*K:(c/4+1)*2*K], K)
					for r := range 4 {
						blk[r][0], blk[r][1] = splitLanes(acc[2*r])
						blk[r][2], blk[r][3] = splitLanes(acc[2*r+1])
					}
					nc := min(4, ce-c)
					for r := range 4 {
						o := out[(pb+i+r)*N+c : (pb+i+r)*N+c+nc]
						for j := range o {
							o[j] = T(g.requant(blk[r][j]+g.cst[c+j], c+j))
						}
					}
				}
			}
		}
		for p := pb + full; p < pe; p++ {
			var row []T
			if geom.direct {
				row = in[p*K : p*K+K]
			} else {
				im2colPixel(geom, in, p, pad, ws.row, 1)
				row = ws.row
			}
			o := out[p*N : p*N+N]
			c := c0
			for ; c+4 <= c1; c += 4 {
				a0, a1, a2, a3 := qdot4(row, g.w16[c*K:(c+4)*K], K)
				o[c] = T(g.requant(a0+g.cst[c], c))
				o[c+1] = T(g.requant(a1+g.cst[c+1], c+1))
				o[c+2] = T(g.requant(a2+g.cst[c+2], c+2))
				o[c+3] = T(g.requant(a3+g.cst[c+3], c+3))
			}
			for ; c < c1; c++ {
				a := qdot1(row, g.w16[c*K:(c+1)*K])
				o[c] = T(g.requant(a+g.cst[c], c))
			}
		}
	}
}

// requant maps an int32 accumulator of channel c to the output value.
func (g *qGemm) requant(acc int32, c int) int32 {
	r := &g.rq
	if g.ruy {
		return ruyRequant(acc, r.mult[c], r.left[c], r.right[c], r.zp, r.lo, r.hi)
	}
	return tfliteRequant(acc, r.mult[c], r.left[c], r.right[c], r.zp, r.lo, r.hi)
}

// splitLanes separates the two 32-bit dot products accumulated in v.
func splitLanes(v int64) (lo, hi int32) {
	lo = int32(v)
	hi = int32((v - int64(lo)) >> 32)
	return
}

// qkernel4x4 returns, for the 4 interleaved rows of panel (panel[4k+r]) and
// the packed weights of 4 channels (w[2k] = channels 0,1; w[2k+1] = 2,3),
// acc[2r] and acc[2r+1]: row r's packed sums for channels (0,1) and (2,3).
func qkernel4x4[T int8 | uint8](panel []T, w []int64, K int) (acc [8]int64) {
	if K == 0 {
		return
	}
	_ = panel[4*K-1]
	_ = w[2*K-1]
	pa := unsafe.Pointer(unsafe.SliceData(panel))
	pw := unsafe.Pointer(unsafe.SliceData(w))
	var c0, c1, c2, c3, c4, c5, c6, c7 int64
	for range K {
		wa := *(*int64)(pw)
		wb := *(*int64)(unsafe.Add(pw, 8))
		x := int64(*(*T)(pa))
		c0 += x * wa
		c1 += x * wb
		x = int64(*(*T)(unsafe.Add(pa, 1)))
		c2 += x * wa
		c3 += x * wb
		x = int64(*(*T)(unsafe.Add(pa, 2)))
		c4 += x * wa
		c5 += x * wb
		x = int64(*(*T)(unsafe.Add(pa, 3)))
		c6 += x * wa
		c7 += x * wb
		pa = unsafe.Add(pa, 4)
		pw = unsafe.Add(pw, 16)
	}
	return [8]int64{c0, c1, c2, c3, c4, c5, c6, c7}
}

// qdot4 returns the dot products of row with the 4 consecutive weight rows
// in w ([4][K]).
func qdot4[T int8 | uint8](row []T, w []int16, K int) (a0, a1, a2, a3 int32) {
	row = row[:K]
	w0 := w[0*K : 1*K]
	w1 := w[1*K : 2*K]
	w2 := w[2*K : 3*K]
	w3 := w[3*K : 4*K]
	for k, v := range row {
		x := int32(v)
		a0 += x * int32(w0[k])
		a1 += x * int32(w1[k])
		a2 += x * int32(w2[k])
		a3 += x * int32(w3[k])
	}
	return
}

// qdot1 returns the dot product of row and w.
func qdot1[T int8 | uint8](row []T, w []int16) (a int32) {
	w = w[:len(row)]
	for k, v := range row {
		a += int32(v) * int32(w[k])
	}
	return
}
