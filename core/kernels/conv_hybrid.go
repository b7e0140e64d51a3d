package kernels

import (
	"fmt"
	"math"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Hybrid kernels take FLOAT32 activations and INT8 weights: each batch of
// the input is quantized on the fly to int8 (TFLite's SymmetricQuantizeFloats
// or AsymmetricQuantizeFloats), the products are summed exactly in int32,
// and the sums are scaled back to float.

// symmetricQuantize quantizes v to [-127, 127] with scale max|v|/127 and
// returns that scale (1 for an all-zero input).
func symmetricQuantize(v []float32, q []int8) float32 {
	lo, hi := float32(0), float32(0)
	if len(v) > 0 {
		lo, hi = v[0], v[0]
	}
	for _, x := range v {
		lo = min(lo, x)
		hi = max(hi, x)
	}
	r := max(float32(math.Abs(float64(lo))), float32(math.Abs(float64(hi))))
	if r == 0 {
		clear(q[:len(v)])
		return 1
	}
	inv := 127 / r
	for i, x := range v {
		qv := int32(math.Round(float64(x * inv)))
		q[i] = int8(min(127, max(-127, qv)))
	}
	return r / 127
}

// asymmetricQuantize is TFLite's AsymmetricQuantizeFloats: the range
// [min(0,lo), max(0,hi)] of v mapped onto [-128, 127] with a nudged zero
// point; it returns the scale and zero point. The float32 conversion of x*inv
// keeps compilers that fuse multiply-adds (arm64) from fusing zp + x*inv, so
// every architecture gives amd64's bits.
func asymmetricQuantize(v []float32, q []int8) (scale float32, zeroPoint int32) {
	const qmin, qmax = -128.0, 127.0
	var lo, hi float32
	if len(v) > 0 {
		lo, hi = v[0], v[0]
	}
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	rmin, rmax := math.Min(0, float64(lo)), math.Max(0, float64(hi))
	if rmin == rmax {
		clear(q[:len(v)])
		return 1, 0
	}
	s := (rmax - rmin) / (qmax - qmin)
	zpFromMin := qmin - rmin/s
	zpFromMax := qmax - rmax/s
	zpFromMinErr := math.Abs(qmin) + math.Abs(rmin/s)
	zpFromMaxErr := math.Abs(qmax) + math.Abs(rmax/s)
	zpDouble := zpFromMax
	if zpFromMinErr < zpFromMaxErr {
		zpDouble = zpFromMin
	}
	switch {
	case zpDouble <= qmin:
		zeroPoint = qmin
	case zpDouble >= qmax:
		zeroPoint = qmax
	default:
		zeroPoint = int32(math.Round(zpDouble))
	}
	scale = float32(s)
	inv := 1 / scale
	zpf := float32(zeroPoint)
	for i, x := range v {
		r := int32(math.Round(float64(zpf + float32(x*inv))))
		q[i] = int8(min(max(r, -128), 127))
	}
	return scale, zeroPoint
}

// hybridConv holds the state of a hybrid CONV_2D or DEPTHWISE_CONV_2D.
type hybridConv struct {
	team       *Workers // the interpreter's team
	perChannel bool
	scales     []float32 // filter scale of each output channel
	lo, hi     float32
	qin        []int8
	sf         []float32 // per-batch input scale
	off        []int32   // per-batch input zero point
	w16        []int16
	rowSums    []int32
	rows       [][]int8
}

func (h *hybridConv) prepare(op string, in, filter *tensor.Tensor, act schema.ActivationFunctionType, outC, K, batches, quantAxis, threads int) error {
	if filter.Type != tensor.Int8 {
		return Unsupported("%s: hybrid FLOAT32 input with %s filter", op, filter.Type)
	}
	fq, err := quantOf(op, "filter", filter)
	if err != nil {
		return err
	}
	if len(fq.Scale) != 1 && len(fq.Scale) != outC {
		return fmt.Errorf("%s: filter has %d scales for %d output channels", op, len(fq.Scale), outC)
	}
	if len(fq.Scale) > 1 && fq.Axis != quantAxis {
		return fmt.Errorf("%s: filter quantized along dimension %d, want %d", op, fq.Axis, quantAxis)
	}
	h.lo, h.hi = ActivationRangeFloat(act)
	// TFLite takes the per-channel path when the filter scales differ;
	// depthwise always does.
	h.perChannel = quantAxis == 3
	for _, s := range fq.Scale {
		if s != fq.Scale[0] {
			h.perChannel = true
		}
	}
	h.scales = make([]float32, outC)
	for c := range h.scales {
		h.scales[c] = fq.Scale[0]
		if len(fq.Scale) > 1 {
			h.scales[c] = fq.Scale[c]
		}
	}
	h.qin = make([]int8, in.NumElements())
	h.sf = make([]float32, batches)
	h.off = make([]int32, batches)
	h.rows = growWork(h.rows, threads)
	for i := range h.rows {
		if cap(h.rows[i]) < K {
			h.rows[i] = make([]int8, K)
		}
		h.rows[i] = h.rows[i][:K]
	}
	return nil
}

// setWeights copies the int8 weights ([N][K] rows) and their row sums.
func (h *hybridConv) setWeights(w []int8, N, K int) {
	if cap(h.w16) < N*K {
		h.w16 = make([]int16, N*K)
	}
	h.w16 = h.w16[:N*K]
	for i, v := range w[:N*K] {
		h.w16[i] = int16(v)
	}
	if cap(h.rowSums) < N {
		h.rowSums = make([]int32, N)
	}
	h.rowSums = h.rowSums[:N]
	for c := range N {
		var s int32
		for _, v := range w[c*K : c*K+K] {
			s += int32(v)
		}
		h.rowSums[c] = s
	}
}

// quantizeInput quantizes each batch of x; per-tensor (symmetric) scales
// are multiplied by the filter scale as TFLite does.
func (h *hybridConv) quantizeInput(x []float32, batches int) {
	per := len(x) / max(batches, 1)
	for b := range batches {
		v := x[b*per : b*per+per]
		q := h.qin[b*per : b*per+per]
		if h.perChannel {
			h.sf[b], h.off[b] = asymmetricQuantize(v, q)
		} else {
			h.sf[b] = symmetricQuantize(v, q) * h.scales[0]
			h.off[b] = 0
		}
	}
}

func (h *hybridConv) evalConv(g *convGeom, in, filter, bias, out *tensor.Tensor, threads int) error {
	N, K := len(h.scales), g.depth()
	if !filter.Const || len(h.w16) != N*K {
		h.setWeights(filter.Int8s(), N, K)
	}
	h.quantizeInput(in.Float32s(), g.batches)
	var bf []float32
	if bias != nil {
		bf = bias.Float32s()
	}
	o := out.Float32s()
	perBatch := g.outH * g.outW
	h.rows = growWork(h.rows, threads)
	h.team.parallelFor(g.rows(), threads, 1, func(wk, lo, hi int) {
		if len(h.rows[wk]) < K {
			h.rows[wk] = make([]int8, K)
		}
		row := h.rows[wk][:K]
		for p := lo; p < hi; p++ {
			b := p / perBatch
			im2colPixel(g, h.qin, p, int8(h.off[b]), row, 1)
			op := o[p*N : p*N+N]
			for c := range N {
				dot := qdot1(row, h.w16[c*K:c*K+K])
				// The conversions round each product, as TFLite's x86 build
				// does: Go may otherwise fuse it with the bias add (arm64).
				var r float32
				if h.perChannel {
					r = float32(float32(float32(dot-h.rowSums[c]*h.off[b])*h.sf[b]) * h.scales[c])
				} else {
					r = float32(float32(dot) * h.sf[b])
				}
				if bf != nil {
					r += bf[c]
				}
				op[c] = ClampF32(r, h.lo, h.hi)
			}
		}
	})
	return nil
}

func (h *hybridConv) evalDepthwise(g *convGeom, mult int, in, filter, bias, out *tensor.Tensor, threads int) error {
	outC := len(h.scales)
	taps := g.kH * g.kW
	w := filter.Int8s()[:taps*outC]
	h.quantizeInput(in.Float32s(), g.batches)
	var bf []float32
	if bias != nil {
		bf = bias.Float32s()
	}
	o := out.Float32s()
	h.team.parallelFor(g.batches*g.outH, threads, 1, func(wk, rlo, rhi int) {
		var xoff, tap [64]int
		xs, ts := xoff[:], tap[:]
		// Taps outside the input are skipped: they stand for the input zero
		// point, which contributes nothing.
		if taps > len(xoff) {
			xs, ts = make([]int, taps), make([]int, taps)
		}
		for r := rlo; r < rhi; r++ {
			b, oy := r/g.outH, r%g.outH
			zp := h.off[b]
			for ox := range g.outW {
				nt := dwTaps(g, b, oy, ox, xs, ts)
				op := o[(r*g.outW+ox)*outC : (r*g.outW+ox)*outC+outC]
				for c := range outC {
					ic := c / mult
					var a int32
					for t := range nt {
						a += int32(w[ts[t]*outC+c]) * (int32(h.qin[xs[t]+ic]) - zp)
					}
					v := float32(float32(a) * float32(h.scales[c]*h.sf[b])) // rounded: no fused add
					if bf != nil {
						v += bf[c]
					}
					op[c] = ClampF32(v, h.lo, h.hi)
				}
			}
		}
	})
	return nil
}
