package conv

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Hybrid kernels take FLOAT32 activations and INT8 weights: each batch of
// the input is quantized on the fly to int8 (TFLite's SymmetricQuantizeFloats
// or AsymmetricQuantizeFloats), the products are summed exactly in int32,
// and the sums are scaled back to float.

// hybridConv holds the state of a hybrid CONV_2D or DEPTHWISE_CONV_2D.
type hybridConv struct {
	team       *kernel.Workers // the interpreter's team
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
		return kernel.Unsupported("%s: hybrid FLOAT32 input with %s filter", op, filter.Type)
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
	h.lo, h.hi = kernel.ActivationRangeFloat(act)
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
			h.sf[b], h.off[b] = kernel.AsymmetricQuantize(v, q)
		} else {
			h.sf[b] = kernel.SymmetricQuantize(v, q) * h.scales[0]
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
	h.team.ParallelFor(g.rows(), threads, 1, func(wk, lo, hi int) {
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
				op[c] = kernel.ClampF32(r, h.lo, h.hi)
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
	h.team.ParallelFor(g.batches*g.outH, threads, 1, func(wk, rlo, rhi int) {
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
					op[c] = kernel.ClampF32(v, h.lo, h.hi)
				}
			}
		}
	})
	return nil
}
