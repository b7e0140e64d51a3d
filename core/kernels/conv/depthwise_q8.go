package conv

import (
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
)

// The vector 8-bit depthwise convolution (depth multiplier 1; a larger
// multiplier runs it on the input DepthwiseConv2D.widened gives): 16
// channels to a block. Each input byte is widened (zero-extended for UINT8,
// sign-extended for INT8) and multiplied by the tap's weight w - wzp, held
// in the low 16 bits of an int32 lane whose high half is zero: VPDPWSSD
// adds the product of the low halves plus 0, NEON's SMLAL reads the low
// halves only, so every sum is exact. Taps outside the input read the
// input zero point, whose share is part of the per-channel constant:
//
//	sum_t (x_t - xzp)*w_t + bias = sum_t x_t*w_t + (bias - xzp*sum_t w_t)
//
// A row of output pixels is one call of q8.Row with the kernel a q8.Kernel
// names: assembly, or the pure-Go twin of all of them. The filter rows it
// reads are input rows, in place when no tap of the row can fall outside
// them, or copies widened with the zero point on both sides.

// dwVNNI is the prepared state of the vector depthwise kernel.
type dwVNNI struct {
	C, kW, taps, nb int
	w               []int32    // [taps][16*nb], or paired (q8.PairTaps) where the kernel reads them so
	qp              []q8.Block // [nb]
	rowLen          int        // columns of a filter row: (outW-1)*strideW + (kW-1)*dilW + 1
	inPlace         bool       // filter rows are read from the input
	xzp             uint8      // the input zero point's byte
	signed          bool
	kern            q8.Kernel    // the row kernel
	scr             *convScratch // the workers' dwV
	loop            dwVLoop      // the split's body, kept here so that it allocates nothing
}

// dwVLoop is runDWVNNI's loop body: pieces of output rows (rowPart).
type dwVLoop struct {
	d       *dwVNNI
	g       *convGeom
	in, out []uint8
	rq      *chanRequant
	parts   int
	ws      []dwVWork
}

func (l *dwVLoop) Chunk(w, lo, hi int) {
	dwVNNIRows(l.d, l.g, l.in, l.out, l.rq, lo, hi, l.parts, &l.ws[w])
}

// dwVWork is one worker's scratch: a cache of widened input rows (one slot
// per filter row), a row of zero points, and the row pointers. Nodes of
// different shapes share it, so it holds as many slots, and rows as long,
// as the largest needs.
type dwVWork struct {
	rows  [][]uint8
	label []int // input row (b*inH+iy) held by each slot, -1 if none
	pad   []uint8
	padZP int // the value pad holds, -1 before the first fill
	ptrs  []unsafe.Pointer
	from  []unsafe.Pointer // ptrs moved to a piece's first pixel
}

// ensure gives w kH slots of rows n bytes long (when cache) and a pad row
// of n bytes.
func (w *dwVWork) ensure(kH, n int, cache bool) {
	for len(w.rows) < kH {
		w.rows, w.label, w.ptrs, w.from = append(w.rows, nil), append(w.label, -1), append(w.ptrs, nil), append(w.from, nil)
	}
	for k := range kH {
		if cache && len(w.rows[k]) < n {
			w.rows[k] = make([]uint8, n)
		}
	}
	if len(w.pad) < n {
		w.pad, w.padZP = make([]uint8, n), -1
	}
}

// reset readies w for an Eval with input zero point xzp: no cached row
// (the input changed), and a pad row of xzp.
func (w *dwVWork) reset(xzp uint8) {
	for s := range w.label {
		w.label[s] = -1
	}
	if w.padZP != int(xzp) {
		for j := range w.pad {
			w.pad[j] = xzp
		}
		w.padZP = int(xzp)
	}
}

// bytes is w's size.
func (w *dwVWork) bytes() int {
	total := cap(w.pad) + 16*cap(w.label)
	for _, r := range w.rows {
		total += cap(r)
	}
	return total
}

// prepare sets the shapes and gives threads workers of scr scratch; the
// weights come from setWeights.
func (d *dwVNNI) prepare(g *convGeom, scr *convScratch, threads int, signed bool, xzp int32) {
	d.C, d.kW, d.taps, d.nb = g.inC, g.kW, g.kH*g.kW, (g.inC+15)/16
	d.signed, d.xzp, d.scr = signed, uint8(xzp), scr
	d.rowLen = max(0, (g.outW-1)*g.strideW+(g.kW-1)*g.dilW+1)
	d.inPlace = g.padW == 0 && d.rowLen <= g.inW
	d.grow(g, threads)
}

// grow gives threads workers scratch for this node.
func (d *dwVNNI) grow(g *convGeom, threads int) {
	d.scr.dwV = growWork(d.scr.dwV, threads)
	for i := range d.scr.dwV {
		d.scr.dwV[i].ensure(g.kH, d.rowLen*d.C, !d.inPlace)
	}
}

// setWeights takes the [taps][C] weights minus their zero point, the bias
// (nil for none), the input zero point and the requantization.
func (d *dwVNNI) setWeights(wq []int32, bias []int32, xzp int32, rq *chanRequant) {
	C, nc := d.C, 16*d.nb
	d.w = grow(d.w, d.taps*nc)
	clear(d.w)
	for t := range d.taps {
		for c, v := range wq[t*C : t*C+C] {
			d.w[t*nc+c] = int32(uint16(int16(v)))
		}
	}
	if d.kern.PairedTaps() && d.taps > 0 {
		kH := d.taps / d.kW
		q8.PairTaps(d.w, d.w, kH, d.kW, nc)
		d.w = d.w[:kH*((d.kW+1)/2)*nc]
	}
	if cap(d.qp) < d.nb {
		d.qp = make([]q8.Block, d.nb)
	}
	d.qp = d.qp[:d.nb]
	clear(d.qp)
	for c := range C {
		var s int32
		for t := range d.taps {
			s += wq[t*C+c]
		}
		b := int32(0)
		if bias != nil {
			b = bias[c]
		}
		d.qp[c/16].Set(c%16, newQchan(rq, c, b-xzp*s))
	}
}

// runDWVNNI computes the whole output, split across threads by rows.
func runDWVNNI[T int8 | uint8](d *dwVNNI, g *convGeom, in, out []T, rq *chanRequant, team *kernel.Workers, threads int) {
	if g.outW == 0 || d.C == 0 {
		return
	}
	inB := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(in))), len(in))
	outB := unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(out))), len(out))
	if threads > len(d.scr.dwV) {
		d.grow(g, threads)
	}
	ws := d.scr.dwV[:threads]
	for i := range ws {
		ws[i].reset(d.xzp)
	}
	rows := g.batches * g.outH
	if threads == 1 {
		dwVNNIRows(d, g, inB, outB, rq, 0, rows, 1, &ws[0])
		return
	}
	parts := rowParts(rows, g.outW, threads)
	d.loop = dwVLoop{d: d, g: g, in: inB, out: outB, rq: rq, parts: parts, ws: ws}
	team.Run(rows*parts, threads, 1, &d.loop)
	d.loop = dwVLoop{}
}

// dwVNNIRows computes pieces [lo, hi) of the output rows (indexing
// b*outH+oy), each row cut into parts pieces (rowPart), with worker w.
func dwVNNIRows(d *dwVNNI, g *convGeom, in, out []uint8, rq *chanRequant, lo, hi, parts int, w *dwVWork) {
	C := d.C
	t := q8.RowArgs{KH: g.kH, KW: g.kW, TapStep: g.dilW * C, PixStep: g.strideW * C, NPix: g.outW,
		NB: d.nb, Tail: q8.TailMask(C), W: &d.w[0], WStride: 64 * d.nb, QP: &d.qp[0], OutC: C,
		ZP: int64(rq.zp), Lo: int64(rq.lo), Hi: int64(rq.hi), Rows: &w.ptrs[0]}
	if d.signed {
		t.Signed = 1
	}
	if d.kern.PairedTaps() {
		t.Paired = 1
	}
	for u := lo; u < hi; u++ {
		r, x0, x1 := rowPart(u, parts, g.outW)
		if x0 == x1 {
			continue
		}
		d.filterRows(g, in, w, r)
		t.Rows, t.NPix, t.Out = &w.ptrs[0], x1-x0, &out[(r*g.outW+x0)*C]
		if x0 > 0 {
			for ky, p := range w.ptrs[:g.kH] {
				w.from[ky] = unsafe.Add(p, x0*t.PixStep)
			}
			t.Rows = &w.from[0]
		}
		q8.Row(d.kern, &t)
	}
}

// filterRows points w.ptrs at the filter rows of output row r (b*outH+oy):
// the zero-point row outside the input, else the input row in place or
// widened into w's cache, reusing the rows the last output row widened.
func (d *dwVNNI) filterRows(g *convGeom, in []uint8, w *dwVWork, r int) {
	b, oy := r/g.outH, r%g.outH
	used := 0 // slots holding a filter row of r
	for pass := range 2 {
		for ky := range g.kH {
			iy := oy*g.strideH - g.padH + ky*g.dilH
			if iy < 0 || iy >= g.inH {
				w.ptrs[ky] = unsafe.Pointer(&w.pad[0])
				continue
			}
			label := b*g.inH + iy
			if d.inPlace {
				w.ptrs[ky] = unsafe.Pointer(&in[label*g.inW*d.C])
				continue
			}
			if pass == 0 {
				w.ptrs[ky] = nil
				for s, l := range w.label {
					if l == label {
						w.ptrs[ky] = unsafe.Pointer(&w.rows[s][0])
						used |= 1 << s
					}
				}
				continue
			}
			if w.ptrs[ky] != nil {
				continue
			}
			s := 0
			for used&(1<<s) != 0 {
				s++
			}
			used |= 1 << s
			w.label[s] = label
			d.widenRow(g, in, label, w.rows[s])
			w.ptrs[ky] = unsafe.Pointer(&w.rows[s][0])
		}
		if d.inPlace {
			return
		}
	}
}

// widenRow writes input row label (b*inH+iy) into dst with the zero point
// on both sides.
func (d *dwVNNI) widenRow(g *convGeom, in []uint8, label int, dst []uint8) {
	C := d.C
	src := in[label*g.inW*C : (label+1)*g.inW*C]
	row := dst[:d.rowLen*C]
	// Columns [lo, hi) of the row are the input's, in one piece.
	lo := min(g.padW, d.rowLen)
	hi := max(lo, min(g.padW+g.inW, d.rowLen))
	if hi > lo {
		copy(row[lo*C:hi*C], src[(lo-g.padW)*C:(hi-g.padW)*C])
	}
	for _, pad := range [2][]uint8{row[:lo*C], row[hi*C:]} {
		for i := range pad {
			pad[i] = d.xzp
		}
	}
}
