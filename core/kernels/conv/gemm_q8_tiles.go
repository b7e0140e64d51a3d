package conv

import (
	"encoding/binary"
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/bytesum"
	"github.com/delego/delego/core/kernels/internal/asm/q8"
)

// The byte-dot-product GEMM: the layout of AVX-512 VNNI's VPDPBUSD, which
// multiplies groups of four unsigned bytes by four signed bytes and adds
// the four products to an int32 lane, exactly; arm64's SDOT does the same
// with signed bytes on both sides.
//
// The weights of 16 consecutive output channels form a block of
// [ceil(K/4)][16][4] signed bytes, so that one 64-byte vector holds four
// depth steps of the 16 channels; a row of the left-hand side is read four
// bytes at a time and broadcast to all 16 lanes. The weights are stored as
// signed bytes ws = w - sw and the rows, as the kernel wants them, as
// unsigned (VPDPBUSD) or signed (SDOT, SMULL) bytes xr = x - sx:
//
//	UINT8: ws = w - 128  xr = x (unsigned rows), x - 128 (signed rows)
//	INT8:  ws = w        xr = x + 128 (unsigned rows), x (signed rows)
//
// except that, for kernels whose q8.Kernel.UnsignedWeights says so, INT8
// weights are VPDPBUSD's unsigned operand and the rows its signed one:
//
//	INT8:  wu = w + 128 (uint8, sw = -128)  xr = x (signed rows)
//
// so that INT8 inputs, like UINT8 ones, are read as they come, in place
// where the rows are the input's own (the flip x + 128 would copy each row
// for every use).
//
// With x' = x - xzp and w' = w - wzp the wanted sum is
//
//	sum x'w' = sum xr*ws + (sw - wzp)*sum xr + (sx - xzp)*sum w'
//
// The last term and the bias are a per-channel constant computed when the
// weights are set; the middle one is a per-row term, needed only when
// sw != wzp (UINT8 weights whose zero point is not 128, INT8 weights with
// a zero point, unsigned INT8 weights whose zero point is not -128). Depth is padded to a multiple of 4 with zero weights and
// channels to a multiple of 16 with zero weights and parameters; the
// stores are masked to the real channels.
//
// q8.Tile runs a tile with the kernel a q8.Kernel names: assembly, or the
// pure-Go twin of all of them, on the same layout, or on its wide form
// where the kernel's Wide says so (AVX2 without VNNI): the weights w - wzp
// as int16 once, when they are set, and each block of rows widened to
// int16 once, after it is packed, for all the channels it meets; UINT8 and
// INT8 rows alike, as they come. Where the kernel's Deep says so (NEON
// without SDOT) a block's weights are [4][ceil(K/16)][4][16]: each quarter
// of 4 channels holds 16 depth steps of a channel in a row, the depth
// padded to a multiple of 16 (q8.DeepIndex).

// qvGemm is a qGemm's weights in the VNNI layout.
type qvGemm struct {
	k4     int
	nb     int
	w      []int8     // [nb][k4][16][4] (deep: [nb][4][k4/4][4][16])
	wide   []int16    // [nb][k4][2][16][2]: w widened, for kernels that read it (w then nil when shared)
	qp     []q8.Block // [nb]
	rowMul int32      // sw - wzp: the per-row term's factor
	signed bool       // the rows are stored as int8 (else uint8)
	flip   bool       // the rows are stored as xr = x ^ 0x80
	// unsignedW says INT8 weights are stored as uint8 w + 128, for int8
	// rows (q8.TileArgs.UnsignedW).
	unsignedW bool
}

// setWeights packs w ([N][K], 8-bit, signed says INT8) with zero point wzp
// in the layout kernel kern reads and returns sum_k (w-wzp) of each
// channel in wsum. The wide layout (for the kernels that read it) holds
// w - wzp itself, in [-255, 255], so that its rows need no per-row term.
func (v *qvGemm) setWeights(w []byte, signed bool, wzp int32, N, K int, wsum []int32, kern q8.Kernel) {
	wide, deep := kern.Wide(), kern.Deep()
	v.k4, v.nb = kern.Groups(K), (N+15)/16
	v.unsignedW = signed && kern.UnsignedWeights()
	n := v.nb * v.k4 * 64
	if wide {
		v.w, v.wide = nil, grow(v.wide, n)
		clear(v.wide)
	} else {
		v.w, v.wide = grow(v.w, n), nil
		clear(v.w)
	}
	var flipW byte // UINT8 weights are stored as w - 128, unsigned INT8 ones as w + 128
	v.rowMul = -wzp
	switch {
	case v.unsignedW:
		flipW = 0x80
		v.rowMul = -128 - wzp
	case !signed:
		flipW = 0x80
		v.rowMul = 128 - wzp
	}
	if wide {
		v.rowMul = 0
	}
	for c := range N {
		var s int32
		for k, x := range w[c*K : c*K+K] {
			wv := int32(x) - wzp
			if signed {
				wv = int32(int8(x)) - wzp
			}
			switch {
			case wide:
				v.wide[q8.WideIndex(v.k4, c, k)] = int16(wv)
			case deep:
				v.w[q8.DeepIndex(v.k4, c, k)] = int8(x ^ flipW)
			default:
				v.w[(c/16)*v.k4*64+(k/4)*64+4*(c%16)+k%4] = int8(x ^ flipW)
			}
			s += wv
		}
		wsum[c] = s
	}
}

// setBias computes the blocks' requantization from rq, with the constant
// term bias[c] + (sx-xzp)*wsum[c] of channel c; signedIn says whether the
// inputs are INT8 and signedRows whether the kernel reads int8 rows.
func (v *qvGemm) setBias(rq *chanRequant, bias []int32, xzp int32, wsum []int32, signedIn, signedRows bool) {
	v.signed, v.flip = signedRows, signedIn != signedRows
	sx := int32(0)
	switch {
	case v.flip && signedRows:
		sx = 128
	case v.flip:
		sx = -128
	}
	if cap(v.qp) < v.nb {
		v.qp = make([]q8.Block, v.nb)
	}
	v.qp = v.qp[:v.nb]
	clear(v.qp)
	for c := range wsum {
		b := int32(0)
		if bias != nil {
			b = bias[c]
		}
		q := newQchan(rq, c, b+(sx-xzp)*wsum[c])
		q.NegAdj = 0 // ruy rounding
		v.qp[c/16].Set(c%16, q)
	}
}

// qgemmVWork is one worker's scratch for the VNNI layout: a panel of
// packed rows, the panel widened for kernels of the wide layout, and the
// rows' terms.
type qgemmVWork struct {
	panel   []uint8
	wide    []uint16
	rowterm []int32
}

// qvBlocks returns the row block (a multiple of 4) and the channel chunk
// (in blocks of 16) of the VNNI GEMM at depth groups k4.
func qvBlocks(k4 int) (rowBlock, chunk int) {
	rowBlock = max(4, min(256, 32768/(4*max(k4, 1)))&^3)
	chunk = max(1, (256<<10)/(64*max(k4, 1)))
	return
}

// ensure sizes w for depth groups k4, with a wide panel when wide.
func (w *qgemmVWork) ensure(k4 int, wide bool) {
	rb, _ := qvBlocks(k4)
	if n := rb*4*k4 + 64; cap(w.panel) < n {
		w.panel = make([]uint8, n)
	}
	if n := rb * 4 * k4; wide && cap(w.wide) < n {
		w.wide = make([]uint16, n)
	}
	if cap(w.rowterm) < rb {
		w.rowterm = make([]int32, rb)
	}
}

// flipBytes XORs every byte of b with 0x80 (INT8 <-> UINT8 shifted by 128),
// 32 bytes a step where it can: three instructions per 8 bytes on arm64
// (load, EOR with the repeating immediate, store).
func flipBytes(b []uint8) {
	const m = 0x8080808080808080
	le := binary.LittleEndian
	for len(b) >= 32 {
		q := b[:32:32]
		le.PutUint64(q[0:], le.Uint64(q[0:])^m)
		le.PutUint64(q[8:], le.Uint64(q[8:])^m)
		le.PutUint64(q[16:], le.Uint64(q[16:])^m)
		le.PutUint64(q[24:], le.Uint64(q[24:])^m)
		b = b[32:]
	}
	for len(b) >= 8 {
		le.PutUint64(b, le.Uint64(b)^m)
		b = b[8:]
	}
	for i := range b {
		b[i] ^= 0x80
	}
}

// qgemmRunV is qgemmRun on the VNNI layout: output rows [p0,p1) and
// channels [c0,c1).
func qgemmRunV[T int8 | uint8](g *qGemm, geom *convGeom, in, out []T, xzp int32, p0, p1, c0, c1 int, ws *qgemmVWork) {
	v := &g.v
	K, N, k4 := g.K, g.N, v.k4
	if p0 >= p1 || c0 >= c1 {
		return
	}
	wide := g.kern.Wide()
	ws.ensure(k4, wide)
	rb, chunk := qvBlocks(k4)
	inB := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(in))), len(in))
	outB := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(out))), len(out))
	// Direct rows stored as they come, whose depth fills the depth groups
	// (a multiple of 4, or 16 for the deep layout), are read in place.
	inPlace := geom.direct && !v.flip && K == 4*k4
	lda := 4 * k4
	t := q8.TileArgs{K4: k4, WStride: 64 * k4, LDA: lda, LDO: N,
		ZP: int64(g.rq.zp), Lo: int64(g.rq.lo), Hi: int64(g.rq.hi)}
	if v.signed {
		t.Signed = 1
	}
	if v.unsignedW {
		t.UnsignedW = 1
	}
	if wide {
		t.WStride, t.LDA, t.Wide = 128*k4, 2*lda, 1
	}
	if g.kern.Deep() {
		t.Deep = 1
	}
	for pb := p0; pb < p1; pb += rb {
		pe := min(pb+rb, p1)
		panel := ws.panel
		if inPlace {
			panel = inB[pb*K : pe*K]
		}
		v.packRows(geom, inB, uint8(T(xzp)), pb, pe, panel, ws.rowterm, inPlace)
		if wide {
			q8.WidenRows(ws.wide, panel[:(pe-pb)*lda], v.signed)
		}
		for cs := c0; cs < c1; {
			// A chunk of whole blocks, or the part of one block before
			// the next block boundary when cs is not on one.
			b0 := cs / 16
			ce := min(c1, (b0+chunk)*16)
			if cs%16 != 0 {
				ce = min(c1, (b0+1)*16)
			}
			nb := (ce - b0*16 + 15) / 16
			if wide {
				t.W = (*int8)(unsafe.Pointer(&v.wide[b0*64*k4]))
			} else {
				t.W = &v.w[b0*64*k4]
			}
			t.QP = &v.qp[b0]
			t.NB = nb
			t.Tail = q8.TailMask(ce)
			if nb == 1 {
				t.Tail &= 0xffff &^ (1<<(cs%16) - 1)
			}
			base := b0 * 16 // a partial first block is masked below cs
			for i := pb; i < pe; i += 4 {
				if wide {
					t.A = (*uint8)(unsafe.Pointer(&ws.wide[(i-pb)*lda]))
				} else {
					t.A = &panel[(i-pb)*lda]
				}
				t.Rows = min(4, pe-i)
				t.RowTerm = &ws.rowterm[i-pb]
				t.Out = &outB[i*N+base]
				q8.Tile(g.kern, &t)
			}
			cs = ce
		}
	}
}

// packRows writes rows [pb, pe) as unsigned bytes into panel (unless they
// are read in place) and their row terms into rowterm.
func (v *qvGemm) packRows(geom *convGeom, in []uint8, pad uint8, pb, pe int, panel []uint8, rowterm []int32, inPlace bool) {
	K, lda := geom.depth(), 4*v.k4
	if inPlace {
		lda = K
	}
	switch {
	case inPlace:
	case geom.direct:
		for p := pb; p < pe; p++ {
			copy(panel[(p-pb)*lda:(p-pb)*lda+K], in[p*K:p*K+K])
		}
	default:
		lo, hi := geom.insideCols()
		for p := pb; p < pe; {
			m, inside := geom.nextRun(p, pe, lo, hi)
			if inside && geom.dilW == 1 {
				spanRun(geom, in, p, m, panel[(p-pb)*lda:], lda)
			} else {
				for i := p; i < p+m; i++ {
					im2colSpans(geom, in, i, pad, panel[(i-pb)*lda:(i-pb)*lda+K])
				}
			}
			p += m
		}
	}
	switch {
	case !v.flip || inPlace:
	case lda == K: // the rows follow each other: one pass
		flipBytes(panel[:(pe-pb)*K])
	default:
		for i := range pe - pb {
			flipBytes(panel[i*lda : i*lda+K])
		}
	}
	terms := rowterm[:pe-pb]
	if v.rowMul == 0 {
		clear(terms)
		return
	}
	bytesum.RowTerms(panel, lda, K, v.signed, v.rowMul, terms)
}

// spanRun writes the GEMM rows of m output pixels from p on, all in one
// output row with their windows inside the input (and no dilation across
// it), lda bytes apart into dst: each filter row is a span of kW*inC
// adjacent bytes, moved as two overlapping words when it is 8 to 16 bytes
// (the first layer's 3x3 over 3 channels: 9).
func spanRun(g *convGeom, in []uint8, p, m int, dst []uint8, lda int) {
	C, span, step := g.inC, g.kW*g.inC, g.strideW*g.inC
	b, y0, x0 := g.window(p)
	for ky := range g.kH {
		src := in[((b*g.inH+y0+ky*g.dilH)*g.inW+x0)*C:]
		at := ky * span
		for i := range m {
			d, s := dst[i*lda+at:i*lda+at+span], src[i*step:i*step+span]
			if span < 8 || span > 16 {
				copy(d, s)
				continue
			}
			binary.LittleEndian.PutUint64(d, binary.LittleEndian.Uint64(s))
			binary.LittleEndian.PutUint64(d[span-8:], binary.LittleEndian.Uint64(s[span-8:]))
		}
	}
}

// im2colSpans writes the GEMM row of output pixel p to dst, as
// im2colPixel does, copying each filter row in one piece when its taps are
// adjacent and inside the input.
func im2colSpans(g *convGeom, in []uint8, p int, pad uint8, dst []uint8) {
	C := g.inC
	span := g.kW * C
	b, y0, x0 := g.window(p)
	rowIn := x0 >= 0 && x0+(g.kW-1)*g.dilW < g.inW
	for ky := range g.kH {
		d := dst[ky*span : ky*span+span]
		iy := y0 + ky*g.dilH
		if iy < 0 || iy >= g.inH {
			for i := range d {
				d[i] = pad
			}
			continue
		}
		base := ((b*g.inH + iy) * g.inW) * C
		if rowIn && g.dilW == 1 {
			copy(d, in[base+x0*C:base+x0*C+span])
			continue
		}
		for kx := range g.kW {
			ix := x0 + kx*g.dilW
			t := d[kx*C : kx*C+C]
			if ix < 0 || ix >= g.inW {
				for i := range t {
					t[i] = pad
				}
				continue
			}
			copy(t, in[base+ix*C:base+ix*C+C])
		}
	}
}
