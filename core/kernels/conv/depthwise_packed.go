package conv

import (
	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
)

// Packed 8-bit depthwise convolution.
//
// For a fixed channel and filter tap the weight is the same for every output
// pixel, so three horizontally adjacent output pixels are computed with one
// 64-bit multiply: each input row is repacked so that element (j, c) holds
// the three input values that tap j feeds to output pixels 3g, 3g+1, 3g+2
// (columns j, j+stride, j+2*stride) in 21-bit lanes, and
// packed*weight accumulates the three dot products at once. Values are
// shifted into [-128, 127] (UINT8 minus 128), taps outside the input read
// the (shifted) input zero point, and the zero point's contribution is a
// per-channel constant:
//
//	sum_t (x_t - xzp)*w_t + bias = sum_t xs_t*w_t + bias - (xzp - s0)*sum_t w_t
//
// with xs = x - s0. Lanes are split into int32 sums before they can reach
// 2^20 in magnitude, so every sum is exact.

// dwPacked is the prepared state of the packed depthwise kernel.
type dwPacked struct {
	outC, inC, mult int
	taps            int
	w64             []int64   // [taps][outC] weights minus their zero point
	qp              []q8.Chan // requantization with constant bias - (xzp - s0)*sum_t w
	s0              int32     // 128 for UINT8 inputs, 0 for INT8
	padX            int64     // xzp - s0, the value of taps outside the input
	padVal          int64     // padX in all three lanes
	flush           int       // taps between lane splits
	groups          int       // ceil(outW/3)
	rowLen          int       // packed columns per row
	workers         []dwWorker
	team            *kernel.Workers // the interpreter's, for the split by rows
}

// dwWorker is one worker's scratch: a cache of packed input rows (one slot
// per filter row), a packed row of padding, and the accumulators.
type dwWorker struct {
	rows  [][]int64
	label []int // input row (b*inH+iy) held by each slot, -1 if none
	pad   []int64
	acc   []int64
	acc32 []int32 // 3 lanes x outC, used when the taps need flushing
	slot  []int   // slot of each filter row for the current output row
}

// prepare sets the shapes; the weights come from setWeights.
func (d *dwPacked) prepare(g *convGeom, outC, mult, threads int, unsigned bool, xzp int32) {
	d.outC, d.inC, d.mult = outC, g.inC, mult
	d.taps = g.kH * g.kW
	d.groups = (g.outW + 2) / 3
	d.rowLen = max(0, (d.groups*3-3)*g.strideW+(g.kW-1)*g.dilW+1)
	d.s0 = 0
	if unsigned {
		d.s0 = 128
	}
	d.padX = int64(xzp - d.s0)
	d.padVal = d.padX + d.padX<<laneBits + d.padX<<(2*laneBits)
	if len(d.workers) < threads {
		d.workers = append(d.workers, make([]dwWorker, threads-len(d.workers))...)
	}
	for i := range d.workers {
		w := &d.workers[i]
		n := d.rowLen * d.inC
		w.rows = make([][]int64, g.kH)
		w.label = make([]int, g.kH)
		for k := range w.rows {
			w.rows[k] = make([]int64, n)
			w.label[k] = -1
		}
		w.pad = make([]int64, n)
		for j := range w.pad {
			w.pad[j] = d.padVal
		}
		w.acc = make([]int64, outC)
		w.acc32 = make([]int32, 3*outC)
		w.slot = make([]int, g.kH)
	}
}

// setWeights takes the [taps][outC] weights (already minus their zero
// point), the bias (nil for none), the input zero point and the
// requantization.
func (d *dwPacked) setWeights(wq []int32, bias []int32, xzp int32, rq *chanRequant) {
	n := d.taps * d.outC
	if cap(d.w64) < n {
		d.w64 = make([]int64, n)
	}
	d.w64 = d.w64[:n]
	maxW := int64(1)
	for i, v := range wq[:n] {
		d.w64[i] = int64(v)
		maxW = max(maxW, int64(v), -int64(v))
	}
	d.flush = max(1, int(((1<<(laneBits-1))-1)/(128*maxW)))
	if cap(d.qp) < d.outC {
		d.qp = make([]q8.Chan, d.outC)
	}
	d.qp = d.qp[:d.outC]
	for c := range d.outC {
		var s int32
		for t := range d.taps {
			s += wq[t*d.outC+c]
		}
		b := int32(0)
		if bias != nil {
			b = bias[c]
		}
		d.qp[c] = newQchan(rq, c, b-(xzp-d.s0)*s)
	}
}

// packRow fills dst with input row (b, iy) packed for output groups.
func packRow[T int8 | uint8](d *dwPacked, g *convGeom, in []T, b, iy int, dst []int64) {
	C := d.inC
	sw := g.strideW
	src := in[(b*g.inH+iy)*g.inW*C : (b*g.inH+iy+1)*g.inW*C]
	s0 := int64(d.s0)
	pv := d.padX
	for j := range d.rowLen {
		col := j - g.padW
		out := dst[j*C : j*C+C]
		if col >= 0 && col+2*sw < g.inW {
			x0 := src[col*C : col*C+C]
			x1 := src[(col+sw)*C : (col+sw)*C+C]
			x2 := src[(col+2*sw)*C : (col+2*sw)*C+C]
			x1, x2 = x1[:len(x0)], x2[:len(x0)]
			out = out[:len(x0)]
			for c := range x0 {
				out[c] = (int64(x0[c]) - s0) + (int64(x1[c])-s0)<<laneBits + (int64(x2[c])-s0)<<(2*laneBits)
			}
			continue
		}
		for c := range C {
			var v int64
			for l := range 3 {
				x := pv
				if cc := col + l*sw; cc >= 0 && cc < g.inW {
					x = int64(src[cc*C+c]) - s0
				}
				v += x << (uint(l) * laneBits)
			}
			out[c] = v
		}
	}
}

// runDWPacked computes the whole output, split across threads by rows.
func runDWPacked[T int8 | uint8](d *dwPacked, g *convGeom, in, out []T, rq *chanRequant, threads int) {
	for i := range d.workers[:threads] {
		for s := range d.workers[i].label {
			d.workers[i].label[s] = -1 // the input changed since the last Eval
		}
	}
	rows := g.batches * g.outH
	if threads == 1 {
		dwPackedRun(d, g, in, out, rq, 0, rows, &d.workers[0])
		return
	}
	d.team.ParallelFor(rows, threads, 1, func(wk, lo, hi int) {
		dwPackedRun(d, g, in, out, rq, lo, hi, &d.workers[wk])
	})
}

// dwPackedRun computes output rows [lo, hi) (indexing b*outH+oy) with worker w.
func dwPackedRun[T int8 | uint8](d *dwPacked, g *convGeom, in, out []T, rq *chanRequant, lo, hi int, w *dwWorker) {
	C, outC, M := d.inC, d.outC, d.mult
	zp, lo32, hi32 := rq.zp, rq.lo, rq.hi
	for r := lo; r < hi; r++ {
		b, oy := r/g.outH, r%g.outH
		// Find or build the packed row of each filter row.
		used := 0 // bitmask of slots in use by this output row
		for ky := range g.kH {
			iy := oy*g.strideH - g.padH + ky*g.dilH
			w.slot[ky] = -1
			if iy < 0 || iy >= g.inH {
				continue
			}
			label := b*g.inH + iy
			for s, l := range w.label {
				if l == label {
					w.slot[ky] = s
					used |= 1 << s
					break
				}
			}
		}
		for ky := range g.kH {
			iy := oy*g.strideH - g.padH + ky*g.dilH
			if iy < 0 || iy >= g.inH || w.slot[ky] >= 0 {
				continue
			}
			s := 0
			for used&(1<<s) != 0 {
				s++
			}
			used |= 1 << s
			w.slot[ky] = s
			w.label[s] = b*g.inH + iy
			packRow(d, g, in, b, iy, w.rows[s])
		}

		for grp := range d.groups {
			acc := w.acc[:outC]
			clear(acc)
			flushed := false
			n := 0
			for ky := range g.kH {
				row := w.pad
				if w.slot[ky] >= 0 {
					row = w.rows[w.slot[ky]]
				}
				if M == 1 && g.kW == 3 && d.flush >= d.taps {
					// One filter row at a time: three taps per pass.
					j := grp * 3 * g.strideW
					q0 := row[j*C : j*C+C]
					q1 := row[(j+g.dilW)*C : (j+g.dilW)*C+C]
					q2 := row[(j+2*g.dilW)*C : (j+2*g.dilW)*C+C]
					wt := d.w64[ky*3*outC : (ky+1)*3*outC]
					w0, w1, w2 := wt[:C], wt[C:2*C], wt[2*C:3*C]
					a := acc[:C]
					q1, q2, w0, w1, w2 = q1[:C], q2[:C], w0[:C], w1[:C], w2[:C]
					for c, v := range q0 {
						a[c] += v*w0[c] + q1[c]*w1[c] + q2[c]*w2[c]
					}
					continue
				}
				for kx := range g.kW {
					j := grp*3*g.strideW + kx*g.dilW
					q := row[j*C : j*C+C]
					wt := d.w64[(ky*g.kW+kx)*outC : (ky*g.kW+kx+1)*outC]
					if M == 1 {
						a := acc[:len(q)]
						wt = wt[:len(q)]
						for c, v := range q {
							a[c] += v * wt[c]
						}
					} else {
						for ic, v := range q {
							a := acc[ic*M : ic*M+M]
							wm := wt[ic*M : ic*M+M]
							for m := range a {
								a[m] += v * wm[m]
							}
						}
					}
					if n++; n == d.flush {
						d.flushLanes(w, flushed)
						flushed, n = true, 0
					}
				}
			}
			ox0 := grp * 3
			nPix := min(3, g.outW-ox0)
			base := (r*g.outW + ox0) * outC
			o := out[base : base+nPix*outC]
			qp := d.qp[:len(acc)]
			for c, v := range acc {
				l0 := (v << (64 - laneBits)) >> (64 - laneBits)
				v = (v - l0) >> laneBits
				l1 := (v << (64 - laneBits)) >> (64 - laneBits)
				l2 := (v - l1) >> laneBits
				s0, s1, s2 := int32(l0), int32(l1), int32(l2)
				if flushed {
					s0 += w.acc32[c]
					s1 += w.acc32[outC+c]
					s2 += w.acc32[2*outC+c]
				}
				q := &qp[c]
				o[c] = T(q.TFL(s0, zp, lo32, hi32))
				if nPix > 1 {
					o[outC+c] = T(q.TFL(s1, zp, lo32, hi32))
				}
				if nPix > 2 {
					o[2*outC+c] = T(q.TFL(s2, zp, lo32, hi32))
				}
			}
		}
	}
}

// flushLanes moves the packed sums into the int32 lane sums.
func (d *dwPacked) flushLanes(w *dwWorker, add bool) {
	outC := d.outC
	a0, a1, a2 := w.acc32[:outC], w.acc32[outC:2*outC], w.acc32[2*outC:3*outC]
	for c, v := range w.acc[:outC] {
		l0 := (v << (64 - laneBits)) >> (64 - laneBits)
		v = (v - l0) >> laneBits
		l1 := (v << (64 - laneBits)) >> (64 - laneBits)
		l2 := (v - l1) >> laneBits
		if add {
			a0[c] += int32(l0)
			a1[c] += int32(l1)
			a2[c] += int32(l2)
		} else {
			a0[c], a1[c], a2[c] = int32(l0), int32(l1), int32(l2)
		}
		w.acc[c] = 0
	}
}
