package conv

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/dwf32"
	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// DepthwiseConv2DParams are DEPTHWISE_CONV_2D's options.
type DepthwiseConv2DParams struct {
	Padding              schema.Padding
	StrideW, StrideH     int
	DepthMultiplier      int
	DilationW, DilationH int
	Activation           schema.ActivationFunctionType
}

// parseDepthwiseParams reads DepthwiseConv2DOptions (schema defaults when op
// is nil) and rejects fused activations the kernel does not apply.
func parseDepthwiseParams(op *schema.Operator) (DepthwiseConv2DParams, error) {
	const name = "DEPTHWISE_CONV_2D"
	p := DepthwiseConv2DParams{Padding: schema.PaddingSAME, DilationW: 1, DilationH: 1}
	tbl, ok, err := kernel.StrictOptions(op, name, schema.BuiltinOptionsDepthwiseConv2DOptions)
	if err != nil {
		return p, err
	}
	if ok {
		var o schema.DepthwiseConv2DOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p.Padding = o.Padding()
		p.StrideW, p.StrideH = int(o.StrideW()), int(o.StrideH())
		p.DepthMultiplier = int(o.DepthMultiplier())
		p.DilationW, p.DilationH = int(o.DilationWFactor()), int(o.DilationHFactor())
		p.Activation = o.FusedActivationFunction()
	}
	return p, checkFusedActivation(name, p.Activation)
}

func newDepthwiseConv2D(info kernel.OpInfo) (kernel.Op, error) {
	p, err := parseDepthwiseParams(info.Operator)
	if err != nil {
		return nil, err
	}
	return &DepthwiseConv2D{Params: p}, nil
}

// DepthwiseConv2D is the DEPTHWISE_CONV_2D kernel: inputs (input NHWC,
// filter [1][kh][kw][inC*multiplier], optional bias), one output. Output
// channel c reads input channel c/multiplier.
type DepthwiseConv2D struct {
	Params DepthwiseConv2DParams
	// ExactClamp clamps the float output as a standalone RELU or RELU6
	// fused into the op does (core's activation fusion).
	kernel.ExactClamp

	geom convGeom
	// wideGeom is geom as the multiplier-1 kernels see it: with a depth
	// multiplier above 1 they run on the input widened to outC channels,
	// each channel repeated multiplier times (widened).
	wideGeom convGeom
	kind     convKind
	outC     int
	mult     int
	xzp      int32
	wq       []int32 // quantized weights minus zero point, [kh*kw][outC]
	rq       chanRequant
	lo, hi   float32
	pk       dwPacked
	vd       dwVNNI // the vector kernel, when vec
	vec      bool
	team     *kernel.Workers
	scr      *convScratch
	// float: the bias of a node without one
	zeroBias []float32
	ref16    ref16Conv
	hybrid   hybridConv
	floop    dwFloatLoop // the float split's body, kept here so that it allocates nothing
	rep      dwRep       // float: weights and bias repeated for runs of pixels
}

// dwFloatLoop is the float depthwise loop body: pieces of output rows
// (rowPart).
type dwFloatLoop struct {
	g                *convGeom
	in, w, bias, out []float32
	lo, hi           float32
	parts            int
	ws               []dwFloatWork
	rep              *dwRep
}

func (l *dwFloatLoop) Chunk(wk, ulo, uhi int) {
	dwFloatRows(l.g, dwf32.Best(), l.in, l.w, l.bias, l.out, l.lo, l.hi, ulo, uhi, l.parts, &l.ws[wk], l.rep)
}

// dwRep is a narrow float depthwise convolution's weights and bias
// repeated for runs of m pixels. With a horizontal stride of 1, the m
// pixels of a run read, at each tap, m*C consecutive input floats and
// write m*C consecutive outputs: the kernel can take them as one pixel of
// m*C channels, whole vectors instead of a few lanes of one, each lane
// still summing its own channel's taps in order (the same bits).
type dwRep struct {
	m       int // pixels per run; 1: no runs
	w, bias []float32
}

// dwRepLanes is about how many channels a run fills: four AVX-512
// registers.
const dwRepLanes = 64

// prepare picks the run length for C channels at horizontal stride
// strideW: runs where at least two pixels fit in dwRepLanes.
func (r *dwRep) prepare(C, strideW int) {
	r.m = 1
	if strideW == 1 && C > 0 && dwRepLanes/C >= 2 {
		r.m = dwRepLanes / C
	}
}

// set repeats the weights w ([taps][C]) and the bias m times.
func (r *dwRep) set(w, bias []float32, C, taps int) {
	mc := r.m * C
	r.w, r.bias = kernel.Sized(r.w, taps*mc), kernel.Sized(r.bias, mc)
	for t := range taps {
		for j := range r.m {
			copy(r.w[t*mc+j*C:t*mc+(j+1)*C], w[t*C:(t+1)*C])
		}
	}
	for j := range r.m {
		copy(r.bias[j*C:(j+1)*C], bias[:C])
	}
}

// Prepare implements Op.
func (d *DepthwiseConv2D) Prepare(n *kernel.Node) error {
	const op = "DEPTHWISE_CONV_2D"
	p := d.Params
	in, filter, bias, out, err := windowNode(n, op, p.Activation)
	if err != nil {
		return err
	}
	if filter.Shape[0] != 1 {
		return fmt.Errorf("%s: filter %v must have leading dimension 1", op, filter.Shape)
	}
	inC, outC := in.Shape[3], filter.Shape[3]
	if inC <= 0 || outC%inC != 0 {
		return fmt.Errorf("%s: filter depth %d is not a multiple of input depth %d", op, outC, inC)
	}
	// TFLite's kernels assume outC == inC*depth_multiplier; the filter shape
	// is authoritative when a model's option disagrees.
	d.mult = outC / inC
	g, err := windowGeom(op, p.Padding, in.Shape[0], in.Shape[1], in.Shape[2], inC,
		filter.Shape[1], filter.Shape[2], p.StrideH, p.StrideW, p.DilationH, p.DilationW)
	if err != nil {
		return err
	}
	d.geom, d.outC = g, outC
	d.wideGeom = g
	d.wideGeom.inC = outC
	d.team, d.pk.team, d.ref16.team, d.hybrid.team, d.scr = n.Workers, n.Workers, n.Workers, n.Workers, convScratchOf(n)

	if d.kind, err = windowKind(op, in, filter, out, false); err != nil {
		return err
	}
	if err := checkConvBias(op, d.kind == kindFloat || d.kind == kindHybrid, in, bias, outC, false); err != nil {
		return err
	}
	threads := max(n.Threads, 1)
	taps := g.kH * g.kW

	switch d.kind {
	case kindFloat:
		d.prepareFloat(threads)
	case kindUint8, kindInt8:
		if err := convQuantParams(op, in, filter, bias, out, p.Activation, outC, 3, &d.rq); err != nil {
			return err
		}
		d.xzp = in.ZeroPoint()
		d.vd.kern = q8.Best()
		d.vec = q8.Best() != q8.Portable
		d.prepareQuant(threads)
		if filter.Const && (bias == nil || bias.Const) {
			d.setConstWeights(n, in, filter, bias, out)
		}
	case kindInt16:
		if err := d.ref16.prepareWindow(op, in, filter, bias, out, p.Activation, outC, taps, 3); err != nil {
			return err
		}
	case kindHybrid:
		if err := d.hybrid.prepare(op, in, filter, p.Activation, outC, taps, g.batches, 3, threads); err != nil {
			return err
		}
	}
	out.Shape = append(out.Shape[:0], g.batches, g.outH, g.outW, outC)
	return nil
}

// prepareQuant sizes the 8-bit kernel's scratch for threads workers.
func (d *DepthwiseConv2D) prepareQuant(threads int) {
	if d.vec {
		d.growWide(1)
		d.vd.prepare(&d.wideGeom, d.scr, threads, d.kind == kindInt8, d.xzp)
	} else {
		d.pk.prepare(&d.geom, d.outC, d.mult, threads, d.kind == kindUint8, d.xzp)
	}
}

// setQuantBias gives the 8-bit kernel the weights (already in d.wq), the
// bias and the requantization.
func (d *DepthwiseConv2D) setQuantBias(bias *tensor.Tensor) {
	if d.vec {
		d.vd.setWeights(d.wq, int32sOrNil(bias), d.xzp, &d.rq)
	} else {
		d.pk.setWeights(d.wq, int32sOrNil(bias), d.xzp, &d.rq)
	}
}

func (d *DepthwiseConv2D) setQuantWeights(filter *tensor.Tensor) {
	d.wq = d.filterMinusZP(filter, d.wq)
}

// filterMinusZP returns the 8-bit filter minus its zero point in wq,
// reallocated when too small.
func (d *DepthwiseConv2D) filterMinusZP(filter *tensor.Tensor, wq []int32) []int32 {
	n := d.geom.kH * d.geom.kW * d.outC
	if cap(wq) < n {
		wq = make([]int32, n)
	}
	wq = wq[:n]
	if d.kind == kindUint8 {
		wzp := filter.ZeroPoint()
		for i, v := range filter.Uint8s()[:n] {
			wq[i] = int32(v) - wzp
		}
		return wq
	}
	for i, v := range filter.Int8s()[:n] {
		wq[i] = int32(v)
	}
	return wq
}

// dwKey names a depthwise node's vector weights and constants in the
// model's store: the filter and everything the preparation reads.
type dwKey struct {
	filter *byte
	size   int
	signed bool
	paired bool // the layout of the kernels that pair taps (q8.Kernel.PairedTaps)
	requantKey
}

// setConstWeights prepares a constant filter and bias: the vector
// kernel's from the model's store (Node.Derived), shared by every
// interpreter of the model; the packed kernel's for this node.
func (d *DepthwiseConv2D) setConstWeights(n *kernel.Node, in, filter, bias, out *tensor.Tensor) {
	if !d.vec {
		d.setQuantWeights(filter)
		d.setQuantBias(bias)
		return
	}
	key := dwKey{filter: unsafe.SliceData(filter.Data), size: len(filter.Data), signed: d.kind == kindInt8,
		paired: d.vd.kern.PairedTaps(), requantKey: newRequantKey(in, filter, bias, out, d.Params.Activation)}
	src := n.Derived(key, func() any {
		v := &dwVNNI{C: d.vd.C, kW: d.vd.kW, taps: d.vd.taps, nb: d.vd.nb, kern: d.vd.kern}
		v.setWeights(d.filterMinusZP(filter, nil), int32sOrNil(bias), d.xzp, &d.rq)
		return v
	}).(*dwVNNI)
	d.vd.w, d.vd.qp = src.w, src.qp
}

// Eval implements Op.
func (d *DepthwiseConv2D) Eval(n *kernel.Node) error {
	in, filter, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	threads := max(n.Threads, 1)
	g := &d.geom
	switch d.kind {
	case kindFloat:
		var b []float32
		if bias != nil {
			b = bias.Float32s()
		}
		d.evalFloat(tensor.View[float32](d.widened(in)), filter.Float32s(), b, out.Float32s(), threads)
	case kindUint8, kindInt8:
		if !filter.Const || (bias != nil && !bias.Const) {
			d.setQuantWeights(filter)
			d.setQuantBias(bias)
		}
		if d.vec {
			src := d.widened(in)
			if d.kind == kindUint8 {
				runDWVNNI(&d.vd, &d.wideGeom, src, out.Uint8s(), &d.rq, d.team, threads)
			} else {
				runDWVNNI(&d.vd, &d.wideGeom, tensor.View[int8](src), out.Int8s(), &d.rq, d.team, threads)
			}
			return nil
		}
		if threads > len(d.pk.workers) {
			d.prepareQuant(threads)
		}
		if d.kind == kindUint8 {
			runDWPacked(&d.pk, g, in.Uint8s(), out.Uint8s(), &d.rq, threads)
		} else {
			runDWPacked(&d.pk, g, in.Int8s(), out.Int8s(), &d.rq, threads)
		}
	case kindInt16:
		d.ref16.depthwise(g, d.mult, in.Int16s(), filter.Int8s(), bias, out.Int16s(), threads)
	case kindHybrid:
		if err := d.hybrid.evalDepthwise(g, d.mult, in, filter, bias, out, threads); err != nil {
			return err
		}
	}
	clampExactly(&d.ExactClamp, out)
	return nil
}

// widened is the input as the multiplier-1 kernels read it: in's bytes,
// or with a depth multiplier above 1 each element repeated multiplier
// times in the scratch (channel c*m+j of a pixel is input channel c, as
// output channel c*m+j reads it).
func (d *DepthwiseConv2D) widened(in *tensor.Tensor) []byte {
	if d.mult == 1 {
		return in.Data
	}
	dst := d.scr.wide[:len(in.Data)*d.mult]
	switch {
	case in.Type.Size() == 4:
		widenChannels(tensor.View[float32](in.Data), d.mult, tensor.View[float32](dst))
	case d.mult == 2:
		widenBytes2(in.Data, dst)
	default:
		widenChannels(in.Data, d.mult, dst)
	}
	return dst
}

// widenChannels writes in into dst with each element repeated mult times.
func widenChannels[T any](in []T, mult int, dst []T) {
	dst = dst[:len(in)*mult]
	if mult == 2 {
		for i, v := range in {
			d := dst[2*i : 2*i+2]
			d[0], d[1] = v, v
		}
		return
	}
	for i, v := range in {
		d := dst[i*mult : i*mult+mult]
		for j := range d {
			d[j] = v
		}
	}
}

// widenBytes2 is widenChannels of bytes by 2, four bytes to a word.
func widenBytes2(in, dst []uint8) {
	i := 0
	for ; i+4 <= len(in); i += 4 {
		v := uint64(binary.LittleEndian.Uint32(in[i:]))
		v = (v | v<<16) & 0x0000ffff0000ffff // bytes 0, 1, 4, 5
		v = (v | v<<8) & 0x00ff00ff00ff00ff  // bytes 0, 2, 4, 6
		binary.LittleEndian.PutUint64(dst[2*i:], v|v<<8)
	}
	for ; i < len(in); i++ {
		dst[2*i], dst[2*i+1] = in[i], in[i]
	}
}

// dwTaps lists the filter taps of output pixel (b, oy, ox) that fall inside
// the input: the input element offset of the tap's pixel and the tap index.
func dwTaps(g *convGeom, b, oy, ox int, xoff, tap []int) int {
	n := 0
	y0 := oy*g.strideH - g.padH
	x0 := ox*g.strideW - g.padW
	for ky := 0; ky < g.kH; ky++ {
		iy := y0 + ky*g.dilH
		if iy < 0 || iy >= g.inH {
			continue
		}
		for kx := 0; kx < g.kW; kx++ {
			ix := x0 + kx*g.dilW
			if ix < 0 || ix >= g.inW {
				continue
			}
			xoff[n] = ((b*g.inH+iy)*g.inW + ix) * g.inC
			tap[n] = ky*g.kW + kx
			n++
		}
	}
	return n
}

// dwFloatWork is one worker's tap lists for the float depthwise kernels.
type dwFloatWork struct {
	xoff, woff []int
}

// prepareFloat sets up the float kernel: the activation clamp, a zero bias
// for a node without one and the tap lists of threads workers.
func (d *DepthwiseConv2D) prepareFloat(threads int) {
	d.lo, d.hi = kernel.ActivationRangeFloat(d.Params.Activation)
	d.zeroBias = grow(d.zeroBias, d.outC)
	clear(d.zeroBias)
	d.growFloatWork(threads)
	d.growWide(4)
	d.rep.prepare(d.outC, d.geom.strideW)
}

// growWide makes the scratch hold the widened input of a depth multiplier
// above 1, of elements esize bytes wide.
func (d *DepthwiseConv2D) growWide(esize int) {
	if g := &d.wideGeom; d.mult > 1 {
		d.scr.growWide(g.batches * g.inH * g.inW * g.inC * esize)
	}
}

func (d *DepthwiseConv2D) growFloatWork(threads int) {
	d.scr.dwF = growWork(d.scr.dwF, threads)
	taps := d.geom.kH * d.geom.kW
	for i := range d.scr.dwF {
		w := &d.scr.dwF[i]
		if len(w.xoff) < taps { // other nodes may need more: never shrink
			w.xoff, w.woff = make([]int, taps), make([]int, taps)
		}
	}
}

// evalFloat runs the float depthwise convolution: bias, then the taps in
// (ky, kx) order, then the activation clamp.
func (d *DepthwiseConv2D) evalFloat(in, w, bias, out []float32, threads int) {
	g := &d.wideGeom
	if bias == nil {
		bias = d.zeroBias
	}
	if threads > len(d.scr.dwF) {
		d.growFloatWork(threads)
	}
	rows := g.batches * g.outH
	if d.rep.m > 1 {
		d.rep.set(w, bias, d.outC, g.kH*g.kW)
	}
	if threads == 1 {
		dwFloatRows(g, dwf32.Best(), in, w, bias[:d.outC], out, d.lo, d.hi, 0, rows, 1, &d.scr.dwF[0], &d.rep)
		return
	}
	parts := rowParts(rows, g.outW, threads)
	d.floop = dwFloatLoop{g: g, in: in, w: w, bias: bias[:d.outC], out: out, lo: d.lo, hi: d.hi, parts: parts, ws: d.scr.dwF, rep: &d.rep}
	d.team.Run(rows*parts, threads, 1, &d.floop)
	d.floop = dwFloatLoop{}
}

// dwFloatRows computes pieces [ulo, uhi) of the output rows (b*outH+oy),
// each row cut into parts pieces (rowPart), of a depthwise convolution with
// multiplier 1: the pixels whose taps all fall inside the row's input in
// one kernel call (runs of rep.m pixels first, as one pixel of rep.m times
// the channels, when rep.m > 1), the others one by one.
func dwFloatRows(g *convGeom, kern dwf32.Kernel, in, w, bias, out []float32, lo, hi float32, ulo, uhi, parts int, ws *dwFloatWork, rep *dwRep) {
	C := g.inC
	if C == 0 || g.outW == 0 || ulo >= uhi {
		return
	}
	// Interior pixels: x0 >= 0 and x0+(kW-1)*dilW < inW.
	oxa := min(g.outW, (g.padW+g.strideW-1)/g.strideW)
	oxb := oxa
	if last := g.inW - 1 - (g.kW-1)*g.dilW + g.padW; last >= 0 {
		oxb = max(oxa, min(g.outW, last/g.strideW+1))
	}
	_ = in[len(in)-1]
	_ = w[g.kH*g.kW*C-1]
	for u := ulo; u < uhi; u++ {
		r, x0, x1 := rowPart(u, parts, g.outW)
		b, oy := r/g.outH, r%g.outH
		o := out[r*g.outW*C : (r+1)*g.outW*C]
		for ox := x0; ox < x1; ox++ {
			if ox >= oxa && ox < oxb {
				end := min(oxb, x1)
				if runs := (end - ox) / rep.m; rep.m > 1 && runs > 0 {
					n := dwRowTaps(g, b, oy, ox, ws.xoff, ws.woff)
					for t := range n {
						ws.woff[t] *= rep.m
					}
					mc := rep.m * C
					kern.Pixels(mc, runs, &o[ox*C], &rep.bias[0], &in[0], &rep.w[0], &ws.xoff[0], &ws.woff[0], n, mc, lo, hi)
					if ox += runs * rep.m; ox == end {
						ox = end - 1
						continue
					}
				}
				n := dwRowTaps(g, b, oy, ox, ws.xoff, ws.woff)
				kern.Pixels(C, end-ox, &o[ox*C], &bias[0], &in[0], &w[0], &ws.xoff[0], &ws.woff[0], n, g.strideW*C, lo, hi)
				ox = end - 1
				continue
			}
			n := dwTaps(g, b, oy, ox, ws.xoff, ws.woff)
			for t := range n {
				ws.woff[t] *= C
			}
			kern.Pixels(C, 1, &o[ox*C], &bias[0], &in[0], &w[0], &ws.xoff[0], &ws.woff[0], n, 0, lo, hi)
		}
	}
}

// dwRowTaps lists the taps of interior pixel (b, oy, ox) as dwTaps does,
// with the filter offsets in floats: every tap of a row that is inside
// the input vertically.
func dwRowTaps(g *convGeom, b, oy, ox int, xoff, woff []int) int {
	n := dwTaps(g, b, oy, ox, xoff, woff)
	for t := range n {
		woff[t] *= g.inC
	}
	return n
}
