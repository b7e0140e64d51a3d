package conv

import (
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
)

// qGemm is the prepared right-hand side of a quantized GEMM
//
//	out[p][c] = requant(sum_k (x[p][k]-xzp)*(w[c][k]-wzp) + bias[c])
//
// computed exactly in integers, as TFLite's int32 accumulators do.
//
// The main kernel computes a block of 4 rows x 3 channels with the three
// channels in one 64-bit multiply. The left-hand rows are packed as int8
// (UINT8 inputs shifted by -128, the shift folded into the constant term)
// and the weights w' = w-wzp of channels c, c+1, c+2 as
// w'[c] + w'[c+1]<<21 + w'[c+2]<<42, so that x*packed accumulates three dot
// products in 21-bit lanes. Every `flush` steps (chosen from the largest
// |w'| so that no lane can reach 2^20) the lanes are split exactly and
// added to int32 sums. Rows left over (fewer than 4) use a plain kernel on
// int16 weights and the unshifted rows.
type qGemm struct {
	K, N   int
	packed []int64   // [ceil(N/3)][K]
	w16    []int16   // [N][K], w - wzp
	wsum   []int32   // sum_k w'
	cst    []int32   // bias - xzp*sum_k w' (plain kernel)
	qp     []q8.Chan // per-channel constants for the packed kernel's epilogue
	rq     chanRequant
	ruy    bool // ruy rounding (GEMM path) instead of TFLite's
	flush  int  // packed kernel steps between lane flushes
	shift  bool // rows are UINT8: the panel holds x-128

	// kern, unless q8.Portable, selects the byte-dot-product layout v and
	// the kernel that runs it (see gemm_q8_tiles.go) instead of packed/w16;
	// it is set before the weights.
	kern q8.Kernel
	v    qvGemm
	// shared says the weights above come from the model's store
	// (shareWeights): read-only, never packed into.
	shared bool
}

// qgemmKey names a quantized GEMM's packed weights in the model's store:
// the constant they come from and everything the packing reads.
type qgemmKey struct {
	data     *byte // the constant's bytes
	size     int
	shuffled bool      // FULLY_CONNECTED's shuffled 4x16 weights format
	signed   bool      // INT8 weights
	kern     q8.Kernel // the kernel whose layout they are packed in
	wzp      int32
	N, K     int
}

// shareWeights gives g a constant's packed weights from the model's store
// (Node.Derived): pack fills a fresh qGemm once, and every interpreter of
// the model reads that one, with the kernel packing chose (see
// setWeights).
func (g *qGemm) shareWeights(n *kernel.Node, key qgemmKey, pack func(*qGemm)) {
	src := n.Derived(key, func() any {
		p := &qGemm{kern: g.kern}
		pack(p)
		return p
	}).(*qGemm)
	g.kern, g.N, g.K, g.flush, g.shared = src.kern, src.N, src.K, src.flush, true
	g.packed, g.w16, g.wsum = src.packed, src.w16, src.wsum
	g.v.w, g.v.wide, g.v.k4, g.v.nb, g.v.rowMul = src.v.w, src.v.wide, src.v.k4, src.v.nb, src.v.rowMul
	g.v.unsignedW = src.v.unsignedW
}

// vnni says whether g uses the byte-dot-product ("VNNI") layout.
func (g *qGemm) vnni() bool { return g.kern != q8.Portable }

// laneBits is the width of one packed lane; lanes must stay below 2^20.
const laneBits = 21

// pairGains says whether the pair kernel (q8.NEONPair) runs fewer
// instructions than NEON's groups of 4 bytes at depth K, from their inner
// loops (q8_arm64.s) over 4 rows and 16 channels: the pair kernel's 220
// per 16 depth steps (the depth padded to 16) and 124 to start and add up
// its quarters against NEON's 74 per 4 depth steps and 68 to clear and
// add up its two passes of 2 rows; the epilogues are the same. It gains
// from 32 bytes of depth on, and at 16, not at 24, which it pads to 32.
func pairGains(K int) bool {
	return 220*((K+15)/16)+124 < 74*((K+3)/4)+68
}

// setWeights packs the weights (row-major [N][K], 8-bit) with zero point
// wzp; signed says whether they are INT8. A kernel of the deep layout
// gives way to its fallback where it cannot sum the weights exactly
// (q8.PairSafe) or gains nothing at depth K.
func (g *qGemm) setWeights(w []byte, signed bool, wzp int32, N, K int) {
	if g.shared { // never pack into the model's copy
		g.packed, g.w16, g.wsum, g.v.w, g.v.wide, g.shared = nil, nil, nil, nil, nil, false
	}
	g.N, g.K = N, K
	if g.vnni() {
		if cap(g.wsum) < N {
			g.wsum = make([]int32, N)
		}
		g.wsum = g.wsum[:N]
		if g.kern.Deep() && (!pairGains(K) || !q8.PairSafe(w[:N*K], signed)) {
			g.kern = g.kern.Fallback()
		}
		g.v.setWeights(w, signed, wzp, N, K, g.wsum, g.kern)
		return
	}
	groups := (N + 2) / 3
	if cap(g.packed) < groups*K+kernelSlack {
		g.packed = make([]int64, groups*K+kernelSlack)
	}
	g.packed = g.packed[:groups*K]
	if cap(g.w16) < N*K {
		g.w16 = make([]int16, N*K)
	}
	g.w16 = g.w16[:N*K]
	maxW := int32(1)
	for i := range N * K {
		v := int32(w[i])
		if signed {
			v = int32(int8(w[i]))
		}
		v -= wzp
		g.w16[i] = int16(v)
		maxW = max(maxW, v, -v)
	}
	clear(g.packed)
	for c := range N {
		shift := uint(laneBits * (c % 3))
		dst := g.packed[(c/3)*K : (c/3+1)*K]
		for k, v := range g.w16[c*K : c*K+K] {
			dst[k] += int64(v) << shift
		}
	}
	// Panel values lie in [-128, 127].
	g.flush = max(1, ((1<<(laneBits-1))-1)/(128*int(maxW)))
	if cap(g.wsum) < N {
		g.wsum = make([]int32, N)
	}
	g.wsum = g.wsum[:N]
	for c := range N {
		var s int32
		for _, v := range g.w16[c*K : c*K+K] {
			s += int32(v)
		}
		g.wsum[c] = s
	}
}

// setBias computes the per-channel constant terms from the bias and the
// input zero point; unsignedRows says whether the rows are UINT8.
func (g *qGemm) setBias(bias []int32, xzp int32, unsignedRows bool) {
	g.shift = unsignedRows
	if g.vnni() {
		// The wide layout's kernels take int8 rows as readily as uint8;
		// unsigned weights take int8 rows.
		signedRows := g.kern.SignedRows() || g.kern.Wide() && !unsignedRows || g.v.unsignedW
		g.v.setBias(&g.rq, bias, xzp, g.wsum, !unsignedRows, signedRows)
		return
	}
	if cap(g.cst) < g.N {
		g.cst = make([]int32, g.N)
		g.qp = make([]q8.Chan, g.N)
	}
	g.cst, g.qp = g.cst[:g.N], g.qp[:g.N]
	for c := range g.N {
		b := int32(0)
		if bias != nil {
			b = bias[c]
		}
		g.cst[c] = b - xzp*g.wsum[c]
		cst := g.cst[c]
		if unsignedRows {
			// sum (x-xzp)w' = sum (x-128)w' + (128-xzp) sum w'
			cst = b + (128-xzp)*g.wsum[c]
		}
		g.qp[c] = newQchan(&g.rq, c, cst)
	}
}

// qgemmWork is one worker's scratch memory.
type qgemmWork[T int8 | uint8] struct {
	panel []T // rowBlock rows, interleaved by 4
	row   []T // one im2col row
	v     qgemmVWork
}

// bytes is w's size.
func (w *qgemmWork[T]) bytes() int {
	return cap(w.panel) + cap(w.row) + cap(w.v.panel) + 2*cap(w.v.wide) + 4*cap(w.v.rowterm)
}

// qgemmBlocks returns the row block (multiple of 4) and channel block
// (multiple of 6) sizes for depth K.
func qgemmBlocks(K int) (rowBlock, chanBlock int) {
	rowBlock = max(4, min(64, (16384/max(K, 1))&^3))
	chanBlock = max(6, min(252, 65536/max(K, 1)/6*6))
	return
}

// ensure sizes w for depth K, for the VNNI layout's kernel kern or, where
// kern is q8.Portable, the packed one's (not both: a GEMM runs one of
// them).
func (w *qgemmWork[T]) ensure(K int, kern q8.Kernel) {
	if kern != q8.Portable {
		w.v.ensure(kern.Groups(K), kern.Wide())
		return
	}
	rb, _ := qgemmBlocks(K)
	if cap(w.panel) < rb*K+kernelSlack {
		w.panel = make([]T, rb*K+kernelSlack)
	}
	w.panel = w.panel[:rb*K]
	if cap(w.row) < K {
		w.row = make([]T, K)
	}
	w.row = w.row[:K]
}

// qgemmRun computes output rows [p0,p1) and channels [c0,c1) (c0 a multiple
// of 6) of the GEMM whose rows geom draws from in, with ruy's rounding.
// Output row p starts at out[p*g.N]. xzp is the input zero point, used as
// im2col padding.
func qgemmRun[T int8 | uint8](g *qGemm, geom *convGeom, in []T, out []T, xzp int32, p0, p1, c0, c1 int, ws *qgemmWork[T]) {
	if g.vnni() {
		qgemmRunV(g, geom, in, out, xzp, p0, p1, c0, c1, &ws.v)
		return
	}
	K, N := g.K, g.N
	rb, cb := qgemmBlocks(K)
	pad := T(xzp)
	zp, lo, hi := g.rq.zp, g.rq.lo, g.rq.hi
	var acc [12]int32
	for pb := p0; pb < p1; pb += rb {
		pe := min(pb+rb, p1)
		full := 0
		if K > 0 {
			full = (pe - pb) &^ 3
		}
		for i := 0; i < full; i += 4 {
			panel := ws.panel[i*K : (i+4)*K]
			im2colRows(geom, in, pb+i, 4, pad, panel)
			if g.shift {
				b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(panel))), len(panel))
				for k := range b {
					b[k] ^= 0x80
				}
			}
		}
		for cs := c0; cs < c1; cs += cb {
			ce := min(cs+cb, c1)
			for i := 0; i < full; i += 4 {
				panelT := ws.panel[i*K : (i+4)*K]
				panel := unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(panelT))), len(panelT))
				o0 := out[(pb+i)*N : (pb+i+1)*N]
				o1 := out[(pb+i+1)*N : (pb+i+2)*N]
				o2 := out[(pb+i+2)*N : (pb+i+3)*N]
				o3 := out[(pb+i+3)*N : (pb+i+4)*N]
				for c := cs; c < ce; c += 3 {
					qkernel4x3(panel, g.packed[(c/3)*K:(c/3+1)*K], K, g.flush, &acc)
					if c+3 <= ce {
						qp := g.qp[c : c+3 : c+3]
						store3(o0[c:c+3:c+3], acc[0:3:3], qp, zp, lo, hi)
						store3(o1[c:c+3:c+3], acc[3:6:6], qp, zp, lo, hi)
						store3(o2[c:c+3:c+3], acc[6:9:9], qp, zp, lo, hi)
						store3(o3[c:c+3:c+3], acc[9:12:12], qp, zp, lo, hi)
						continue
					}
					qp := g.qp[c:ce]
					for r, o := range [4][]T{o0, o1, o2, o3} {
						for j := range qp {
							o[c+j] = T(qp[j].Ruy(acc[3*r+j], zp, lo, hi))
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
				o[c] = T(g.ruyPlain(a0, c))
				o[c+1] = T(g.ruyPlain(a1, c+1))
				o[c+2] = T(g.ruyPlain(a2, c+2))
				o[c+3] = T(g.ruyPlain(a3, c+3))
			}
			for ; c < c1; c++ {
				o[c] = T(g.ruyPlain(qdot1(row, g.w16[c*K:(c+1)*K]), c))
			}
		}
	}
}

// newQchan builds channel c's constants from r with constant term cst.
func newQchan(r *chanRequant, c int, cst int32) q8.Chan {
	return q8.NewChan(r.mult[c], r.left[c], r.right[c], cst)
}

// ruyPlain requantizes a plain-kernel sum of channel c with ruy's rounding.
func (g *qGemm) ruyPlain(acc int32, c int) int32 {
	r := &g.rq
	return ruyRequant(acc+g.cst[c], r.mult[c], r.left[c], r.right[c], r.zp, r.lo, r.hi)
}

// requant maps a plain-kernel sum of channel c to the output value with the
// op's rounding.
func (g *qGemm) requant(acc int32, c int) int32 {
	r := &g.rq
	if g.ruy {
		return ruyRequant(acc+g.cst[c], r.mult[c], r.left[c], r.right[c], r.zp, r.lo, r.hi)
	}
	return tfliteRequant(acc+g.cst[c], r.mult[c], r.left[c], r.right[c], r.zp, r.lo, r.hi)
}

// qkernel4x3 computes acc[3r+j] = sum_k panel[4k+r] * w'[j][k] for the 4
// interleaved rows of panel and the 3 channels packed in w, splitting the
// 21-bit lanes every flush steps.
func qkernel4x3(panel []int8, w []int64, K, flush int, acc *[12]int32) {
	*acc = [12]int32{}
	if K == 0 {
		return
	}
	_ = panel[4*K-1]
	_ = w[K-1]
	// The pointers end one element past the data they read; the buffers are
	// allocated with slack (kernelSlack) so that this stays inside them.
	pa := unsafe.Pointer(unsafe.SliceData(panel))
	pw := unsafe.Pointer(unsafe.SliceData(w))
	for k0 := 0; k0 < K; k0 += flush {
		n := min(flush, K-k0)
		var c0, c1, c2, c3 int64
		end := unsafe.Add(pw, n*8)
		for uintptr(pw) < uintptr(end) {
			wv := *(*int64)(pw)
			c0 += int64(*(*int8)(pa)) * wv
			c1 += int64(*(*int8)(unsafe.Add(pa, 1))) * wv
			c2 += int64(*(*int8)(unsafe.Add(pa, 2))) * wv
			c3 += int64(*(*int8)(unsafe.Add(pa, 3))) * wv
			pa = unsafe.Add(pa, 4)
			pw = unsafe.Add(pw, 8)
		}
		addLanes3(acc[0:3], c0)
		addLanes3(acc[3:6], c1)
		addLanes3(acc[6:9], c2)
		addLanes3(acc[9:12], c3)
	}
}

// kernelSlack is the number of extra elements allocated after the packed
// panels and weights that the kernels walk with pointers.
const kernelSlack = 16

// store3 requantizes three channels' sums into o.
func store3[T int8 | uint8](o []T, a []int32, qp []q8.Chan, zp, lo, hi int32) {
	o, a, qp = o[:3], a[:3], qp[:3]
	o[0] = T(qp[0].Ruy(a[0], zp, lo, hi))
	o[1] = T(qp[1].Ruy(a[1], zp, lo, hi))
	o[2] = T(qp[2].Ruy(a[2], zp, lo, hi))
}

// addLanes3 splits the three signed 21-bit lanes of v (each below 2^20 in
// magnitude) and adds them to a.
func addLanes3(a []int32, v int64) {
	a = a[:3]
	l0 := (v << (64 - laneBits)) >> (64 - laneBits)
	v = (v - l0) >> laneBits
	l1 := (v << (64 - laneBits)) >> (64 - laneBits)
	l2 := (v - l1) >> laneBits
	a[0] += int32(l0)
	a[1] += int32(l1)
	a[2] += int32(l2)
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
