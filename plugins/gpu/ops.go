package gpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// defines is a kernel's compile-time constants: its #define lines before
// the kernel and the matching #undef lines after, so that every node's
// kernel sits in one program with its own shapes.
type defines []struct{ name, value string }

func (d *defines) int(name string, v int) {
	*d = append(*d, struct{ name, value string }{name, strconv.Itoa(v)})
}

func (d *defines) text(name, v string) { *d = append(*d, struct{ name, value string }{name, v}) }

// wrap returns body with the #defines before it and #undefs after; NAME
// is the kernel function's name.
func (d defines) wrap(kernel, body string) string {
	var b strings.Builder
	d.text("NAME", kernel)
	for _, e := range d {
		fmt.Fprintf(&b, "#define %s %s\n", e.name, e.value)
	}
	b.WriteString(body)
	for _, e := range d {
		name, _, _ := strings.Cut(e.name, "(") // a function-like macro is undefined by its name alone
		fmt.Fprintf(&b, "#undef %s\n", name)
	}
	return b.String()
}

// floatLit is v as an exact OpenCL C float literal (hexadecimal).
func floatLit(v float32) string { return strconv.FormatFloat(float64(v), 'x', -1, 32) + "f" }

// activation defines ACT(v), the fused activation.
func (d *defines) activation(act schema.ActivationFunctionType) error {
	switch act {
	case schema.ActivationFunctionTypeNONE:
		d.text("ACT(v)", "(v)")
	case schema.ActivationFunctionTypeRELU:
		d.text("ACT(v)", "fmax((v), (FLT)0)")
	case schema.ActivationFunctionTypeRELU6:
		d.text("ACT(v)", "fmin(fmax((v), (FLT)0), (FLT)6)")
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		d.text("ACT(v)", "fmin(fmax((v), (FLT)-1), (FLT)1)")
	case schema.ActivationFunctionTypeTANH:
		d.text("ACT(v)", "tanh(v)")
	default:
		return fmt.Errorf("fused activation %s", schema.EnumNamesActivationFunctionType[act])
	}
	return nil
}

// --- ADD, SUB, MUL ----------------------------------------------------------

const binaryKernel = `__kernel void NAME(__global const T* a, __global const T* b, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	int c3 = i % D3, r = i / D3;
	int c2 = r % D2; r /= D2;
	int c1 = r % D1, c0 = r / D1;
	FLT x = LD(a, c0 * A0 + c1 * A1 + c2 * A2 + c3 * A3);
	FLT y = LD(b, c0 * B0 + c1 * B1 + c2 * B2 + c3 * B3);
	ST(out, i, ACT(OP(x, y)));
}
`

// binary lowers ADD, SUB, MUL, DIV, MAXIMUM, MINIMUM and PRELU (alpha as
// the second operand), broadcasting either operand (up to 4 dimensions: a
// [C] or scalar constant, or any numpy-style broadcast).
func (n *node) binary(code schema.BuiltinOperator) error {
	if err := n.inputs(2, 2); err != nil {
		return err
	}
	var d defines
	op := binaryExpr(code)
	if op == "" {
		return fmt.Errorf("no binary kernel for %s", n.name)
	}
	d.text("OP(x, y)", op)
	if err := d.activation(model.FusedActivation(n.opts)); err != nil {
		return err
	}
	for _, ti := range n.in {
		if err := n.l.use(ti, true); err != nil {
			return err
		}
	}
	if err := n.l.use(n.out[0], false); err != nil {
		return err
	}
	a, b, out := n.shape(n.in[0]), n.shape(n.in[1]), n.shape(n.out[0])
	want, err := tensor.BroadcastShape(a, b)
	if err != nil || !slices.Equal(want, out) || len(out) > 4 {
		return fmt.Errorf("shapes %v and %v to %v: not a broadcast of at most 4 dimensions", a, b, out)
	}
	o4 := pad4(out)
	for i, v := range o4 {
		d.int(fmt.Sprint("D", i), v)
	}
	for _, x := range []struct {
		prefix string
		shape  []int
	}{{"A", a}, {"B", b}} {
		for i, s := range broadcastStrides(pad4(x.shape), o4) {
			d.int(fmt.Sprint(x.prefix, i), s)
		}
	}
	total := tensor.NumElements(out)
	d.int("TOTAL", total)
	n.emit(d.wrap(kernelName(n.index), binaryKernel), []int{n.in[0], n.in[1], n.out[0]}, total)
	return nil
}

// pad4 right-aligns shape in 4 dimensions.
func pad4(shape []int) []int {
	out := []int{1, 1, 1, 1}
	copy(out[4-len(shape):], shape)
	return out
}

// broadcastStrides are an operand's element strides along the output's 4
// dimensions: 0 where the operand is broadcast.
func broadcastStrides(shape, out []int) []int {
	strides := make([]int, 4)
	s := 1
	for i := 3; i >= 0; i-- {
		if shape[i] != 1 || out[i] == 1 {
			strides[i] = s
		}
		s *= shape[i]
	}
	return strides
}

// --- CONV_2D, DEPTHWISE_CONV_2D ----------------------------------------------

// The convolution kernels block their work for a CPU device such as PoCL,
// which runs a work-group's items one after another on one thread and
// vectorises only the explicit vector types: a work item computes V output
// channels (a floatV, V from vecWidth) for PX output pixels, so that each
// weight vector loaded is used PX times and each input value V times, all
// from registers. The filter is repacked at Compile into blocks of V output
// channels, [OC/V][KH][KW][IC][V], so the inner loop reads it contiguously;
// its output channels are padded with zeros to a multiple of V, and only the
// real channels are stored. Sums keep the reference order (ky, kx, c).

// pointwiseKernel is CONV_2D with a 1x1 filter, stride 1 and no padding: a
// matrix product of the [pixels][IC] input by the [IC][OC] filter, blocked
// PX pixels (flattened over batch, y and x, so no row remainder) by V
// channels.
const pointwiseKernel = `__kernel void NAME(__global const T* in, __global const T* w, __global const T* bias, __global T* out) {
	int ob = get_global_id(0), p0 = get_global_id(1) * PX;
	if (ob >= OB || p0 >= P) return;
	__global const T* wp = w + ob * (IC * V);
	FV b = VLOAD(ob, bias), acc[PX];
	__global const T* ip[PX];
	#pragma unroll
	for (int p = 0; p < PX; p++) {
		acc[p] = b;
		ip[p] = in + min(p0 + p, P - 1) * IC; /* a remainder pixel recomputes the last one; it is not stored */
	}
	for (int c = 0; c < IC; c++) {
		FV wv = VLOAD(c, wp);
		#pragma unroll
		for (int p = 0; p < PX; p++) acc[p] += LD(ip[p], c) * wv;
	}
	#pragma unroll
	for (int p = 0; p < PX; p++)
		if (p0 + p < P) STORE(ACT(acc[p]), out + (p0 + p) * OC, ob * V);
}
`

// convKernel is any other CONV_2D, blocked PX pixels along a row by V
// channels. Outside the input a pixel reads 0 from a clamped (valid)
// address, so the inner loop has no branch.
const convKernel = `__kernel void NAME(__global const T* in, __global const T* w, __global const T* bias, __global T* out) {
	int ob = get_global_id(0), ox0 = get_global_id(1) * PX, z = get_global_id(2);
	if (ob >= OB || ox0 >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH;
	FV b = VLOAD(ob, bias), acc[PX];
	#pragma unroll
	for (int p = 0; p < PX; p++) acc[p] = b;
	__global const T* wp = w + ob * (KH * KW * IC * V);
	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * SH - PT + ky * DH;
		if (iy < 0 || iy >= H) continue;
		__global const T* row = in + (n * H + iy) * W * IC;
		for (int kx = 0; kx < KW; kx++) {
			__global const T* ip[PX];
			bool ok[PX];
			#pragma unroll
			for (int p = 0; p < PX; p++) {
				int ix = (ox0 + p) * SW - PL + kx * DW;
				ok[p] = ix >= 0 && ix < W;
				ip[p] = row + clamp(ix, 0, W - 1) * IC;
			}
			__global const T* wk = wp + (ky * KW + kx) * IC * V;
			for (int c = 0; c < IC; c++) {
				FV wv = VLOAD(c, wk);
				#pragma unroll
				for (int p = 0; p < PX; p++) acc[p] += (ok[p] ? LD(ip[p], c) : (FLT)0) * wv;
			}
		}
	}
	#pragma unroll
	for (int p = 0; p < PX; p++)
		if (ox0 + p < OW) STORE(ACT(acc[p]), out + ((n * OH + oy) * OW + ox0 + p) * OC, ob * V);
}
`

// depthwiseKernel is DEPTHWISE_CONV_2D with a depth multiplier of 1 and V
// dividing the channels: a work item computes V channels of PX pixels along
// a row. Each filter row reads the input strip the PX pixels' windows cover
// once (S vectors), so stride 1 loads each input vector once, not KW times.
const depthwiseKernel = `__kernel void NAME(__global const T* in, __global const T* w, __global const T* bias, __global T* out) {
	int cb = get_global_id(0), ox0 = get_global_id(1) * PX, z = get_global_id(2);
	if (cb >= OB || ox0 >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH;
	FV b = VLOAD(cb, bias), acc[PX];
	#pragma unroll
	for (int p = 0; p < PX; p++) acc[p] = b;
	#pragma unroll
	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * SH - PT + ky * DH;
		if (iy < 0 || iy >= H) continue;
		__global const T* row = in + (n * H + iy) * W * IC + cb * V;
		FV s[S];
		#pragma unroll
		for (int t = 0; t < S; t++) {
			int ix = ox0 * SW - PL + t;
			FV v = VLOAD(0, row + clamp(ix, 0, W - 1) * IC);
			s[t] = ix >= 0 && ix < W ? v : (FV)(0);
		}
		#pragma unroll
		for (int kx = 0; kx < KW; kx++) {
			FV wv = VLOAD(0, w + (ky * KW + kx) * OC + cb * V);
			#pragma unroll
			for (int p = 0; p < PX; p++) acc[p] += s[p * SW + kx * DW] * wv;
		}
	}
	#pragma unroll
	for (int p = 0; p < PX; p++)
		if (ox0 + p < OW) STORE(ACT(acc[p]), out + ((n * OH + oy) * OW + ox0 + p) * OC, cb * V);
}
`

// depthwiseScalarKernel is the general DEPTHWISE_CONV_2D (a depth
// multiplier above 1): one output element per work item.
const depthwiseScalarKernel = `__kernel void NAME(__global const T* in, __global const T* w, __global const T* bias, __global T* out) {
	int oc = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (oc >= OC || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH, ic = oc / MULT;
	FLT acc = LD(bias, oc);
	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * SH - PT + ky * DH;
		if (iy < 0 || iy >= H) continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = ox * SW - PL + kx * DW;
			if (ix < 0 || ix >= W) continue;
			acc += LD(in, ((n * H + iy) * W + ix) * IC + ic) * LD(w, (ky * KW + kx) * OC + oc);
		}
	}
	ST(out, ((n * OH + oy) * OW + ox) * OC + oc, ACT(acc));
}
`

// window is a 2-D window op's geometry: NHWC input and output, kernel size,
// strides, dilations, padding and fused activation.
type window struct {
	in, out        []int // NHWC
	kh, kw         int
	sh, sw, dh, dw int
	padding        schema.Padding
	act            schema.ActivationFunctionType
}

// define checks the window against the output shape and defines its
// geometry: N H W IC OH OW KH KW SH SW DH DW PT PL and ACT.
func (g window) define(d *defines) error {
	if len(g.in) != 4 || len(g.out) != 4 {
		return fmt.Errorf("input %v and output %v: want 4-D NHWC", g.in, g.out)
	}
	if g.sh < 1 || g.sw < 1 || g.dh < 1 || g.dw < 1 {
		return fmt.Errorf("strides %dx%d, dilations %dx%d: want positive", g.sh, g.sw, g.dh, g.dw)
	}
	if g.padding != schema.PaddingSAME && g.padding != schema.PaddingVALID {
		return fmt.Errorf("padding %d", g.padding)
	}
	same := g.padding == schema.PaddingSAME
	oh, ow := tensor.WindowOutSize(same, g.in[1], g.kh, g.sh, g.dh), tensor.WindowOutSize(same, g.in[2], g.kw, g.sw, g.dw)
	if g.out[0] != g.in[0] || g.out[1] != oh || g.out[2] != ow {
		return fmt.Errorf("output %v; input %v with this window gives %dx%d", g.out, g.in, oh, ow)
	}
	pt, pl := 0, 0
	if same {
		pt, _ = tensor.WindowPadding(g.sh, g.dh, g.in[1], g.kh, oh)
		pl, _ = tensor.WindowPadding(g.sw, g.dw, g.in[2], g.kw, ow)
	}
	for _, e := range []struct {
		name string
		v    int
	}{{"N", g.in[0]}, {"H", g.in[1]}, {"W", g.in[2]}, {"IC", g.in[3]}, {"OH", oh}, {"OW", ow},
		{"KH", g.kh}, {"KW", g.kw}, {"SH", g.sh}, {"SW", g.sw}, {"DH", g.dh}, {"DW", g.dw}, {"PT", pt}, {"PL", pl}} {
		d.int(e.name, e.v)
	}
	return d.activation(g.act)
}

// convInputs checks input, filter and optional bias of a convolution and
// returns the bias tensor, or -1 when the bias is omitted.
func (n *node) convInputs() (bias int, err error) {
	if err := n.inputs(2, 3); err != nil {
		return 0, err
	}
	if err := n.l.use(n.in[0], false); err != nil {
		return 0, err
	}
	if err := n.l.use(n.in[1], true); err != nil {
		return 0, err
	}
	if n.l.p.tensors[n.in[1]].data == nil {
		return 0, fmt.Errorf("filter tensor %d is not a constant", n.in[1])
	}
	bias = -1
	if len(n.in) == 3 && n.in[2] >= 0 {
		bias = n.in[2]
		if err := n.l.use(bias, true); err != nil {
			return 0, err
		}
	}
	return bias, n.l.use(n.out[0], false)
}

// biasArg checks the bias holds oc values, or makes a zero bias constant
// for an omitted one, and returns its tensor (a new, synthetic index).
func (n *node) biasArg(bias, oc int) (int, error) {
	if bias >= 0 {
		if tensor.NumElements(n.shape(bias)) != oc {
			return 0, fmt.Errorf("bias %v for %d output channels", n.shape(bias), oc)
		}
		return bias, nil
	}
	n.l.p.tensors = append(n.l.p.tensors, tensorPlan{used: true, shape: []int{oc}, bytes: 4 * oc, data: make([]byte, 4*oc), alias: -1})
	return len(n.l.p.tensors) - 1, nil
}

func (n *node) conv() error {
	o, ok := n.opts.(*schema.Conv2DOptionsT)
	if !ok {
		return fmt.Errorf("no Conv2DOptions")
	}
	bias, err := n.convInputs()
	if err != nil {
		return err
	}
	in, f, out := n.shape(n.in[0]), n.shape(n.in[1]), n.shape(n.out[0])
	if len(f) != 4 || len(in) != 4 || f[3] != in[3] || len(out) != 4 || out[3] != f[0] {
		return fmt.Errorf("input %v, filter %v, output %v: want NHWC input, OHWI filter", in, f, out)
	}
	g := window{in: in, out: out, kh: f[1], kw: f[2], sh: int(o.StrideH), sw: int(o.StrideW),
		dh: max(int(o.DilationHFactor), 1), dw: max(int(o.DilationWFactor), 1), padding: o.Padding, act: o.FusedActivationFunction}
	return n.emitConv(g, bias)
}

func (n *node) depthwise() error {
	o, ok := n.opts.(*schema.DepthwiseConv2DOptionsT)
	if !ok {
		return fmt.Errorf("no DepthwiseConv2DOptions")
	}
	bias, err := n.convInputs()
	if err != nil {
		return err
	}
	in, f, out := n.shape(n.in[0]), n.shape(n.in[1]), n.shape(n.out[0])
	if len(f) != 4 || f[0] != 1 || len(in) != 4 || len(out) != 4 || out[3] != f[3] || in[3] == 0 || f[3]%in[3] != 0 {
		return fmt.Errorf("input %v, filter %v, output %v: want NHWC input, 1HWO filter, O a multiple of the input's channels", in, f, out)
	}
	g := window{in: in, out: out, kh: f[1], kw: f[2], sh: int(o.StrideH), sw: int(o.StrideW),
		dh: max(int(o.DilationHFactor), 1), dw: max(int(o.DilationWFactor), 1), padding: o.Padding, act: o.FusedActivationFunction}
	return n.emitDepthwise(g, bias, f[3]/in[3])
}

// Pixels per work item. A pointwise item holds PX vector accumulators and
// reads PX input rows: 8 keeps both in registers with 16-wide vectors
// (AVX-512 has 32). A depthwise item also holds its input strip.
const (
	pointwisePixels = 8
	convPixels      = 4
	depthwisePixels = 4
)

// convVecWidth is the output channels per work item for a convolution with
// oc of them: the widest of 16, 8 and 4 that divides oc, else the one that
// pads the least (16 for many channels, where padding costs little).
func convVecWidth(oc int) int {
	for _, v := range []int{16, 8, 4} {
		if oc%v == 0 {
			return v
		}
	}
	if oc >= 64 {
		return 16
	}
	return 4
}

// vector defines the vector type of v floats and its access macros: FV,
// VLOAD(i, p) and VSTORE(x, i, p) (vloadV/vstoreV, or plain access for 1),
// and STORE(x, p, o), which stores x's lanes at p[o...], only those below
// OC (the padding channels are dropped).
func (d *defines) vector(v int) {
	d.int("V", v)
	if v == 1 {
		d.text("FV", "FLT")
		d.text("VLOAD(i, p)", "LD((p), (i))")
		d.text("VSTORE(x, i, p)", "ST((p), (i), (x))")
		d.text("PSTORE(x, p)", "((p)[0] = (x))")
	} else {
		d.text("FV", fmt.Sprintf("FLTN(%d)", v))
		d.text("VLOAD(i, p)", fmt.Sprintf("LDN(%d, (i), (p))", v))
		d.text("VSTORE(x, i, p)", fmt.Sprintf("STN(%d, (x), (i), (p))", v))
		d.text("PSTORE(x, p)", fmt.Sprintf("vstore%d((x), 0, (p))", v))
	}
	d.text("STORE(x, p, o)", "do { FV x_ = (x); int o_ = (o); if (OC % V == 0 || o_ + V <= OC) VSTORE(x_, 0, (p) + o_); "+
		"else { FLT t_[V]; PSTORE(x_, t_); for (int j_ = 0; o_ + j_ < OC; j_++) ST((p), o_ + j_, t_[j_]); } } while (0)")
}

// emitConv emits CONV_2D: the pointwise kernel for a 1x1 filter at stride
// 1 (no padding is possible), the blocked general one otherwise, over a
// filter repacked into blocks of V output channels.
func (n *node) emitConv(g window, bias int) error {
	var d defines
	if err := g.define(&d); err != nil {
		return err
	}
	oc, k := g.out[3], g.kh*g.kw*g.in[3]
	v := convVecWidth(oc)
	blocks := (oc + v - 1) / v
	d.int("OC", oc)
	d.int("OB", blocks)
	d.vector(v)
	w := n.constant(packFilter(n.floats(n.in[1]), oc, k, v), []int{blocks, k, v})
	b, err := n.biasArg(bias, oc)
	if err != nil {
		return err
	}
	b = n.constant(padFloats(n.floats(b), blocks*v), []int{blocks * v})
	args := []int{n.in[0], w, b, n.out[0]}
	if g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 {
		pixels := g.out[0] * g.out[1] * g.out[2]
		d.int("P", pixels)
		d.int("PX", pointwisePixels)
		n.emit(d.wrap(kernelName(n.index), pointwiseKernel), args, blocks, (pixels+pointwisePixels-1)/pointwisePixels)
		return nil
	}
	d.int("PX", convPixels)
	n.emit(d.wrap(kernelName(n.index), convKernel), args, blocks, (g.out[2]+convPixels-1)/convPixels, g.out[0]*g.out[1])
	return nil
}

// emitDepthwise emits DEPTHWISE_CONV_2D: blocked over channels and pixels
// for a depth multiplier of 1 (the filter's layout, [KH][KW][C], is already
// channel-contiguous), one element per item otherwise.
func (n *node) emitDepthwise(g window, bias, mult int) error {
	var d defines
	if err := g.define(&d); err != nil {
		return err
	}
	oc := g.out[3]
	d.int("OC", oc)
	b, err := n.biasArg(bias, oc)
	if err != nil {
		return err
	}
	args := []int{n.in[0], n.in[1], b, n.out[0]}
	if mult != 1 {
		d.int("MULT", mult)
		n.emit(d.wrap(kernelName(n.index), depthwiseScalarKernel), args, oc, g.out[2], g.out[0]*g.out[1])
		return nil
	}
	v := 1 // a vector must not cross a pixel's channels: V divides C
	for _, w := range []int{16, 8, 4} {
		if oc%w == 0 {
			v = w
			break
		}
	}
	d.vector(v)
	d.int("OB", oc/v)
	d.int("PX", depthwisePixels)
	d.int("S", (depthwisePixels-1)*g.sw+(g.kw-1)*g.dw+1)
	n.emit(d.wrap(kernelName(n.index), depthwiseKernel), args, oc/v, (g.out[2]+depthwisePixels-1)/depthwisePixels, g.out[0]*g.out[1])
	return nil
}

// floats is constant tensor ti's values.
func (n *node) floats(ti int) []float32 {
	data := n.l.p.tensors[ti].data
	out := make([]float32, len(data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out
}

// constant adds a synthetic constant tensor (a repacked filter or padded
// bias) to the plan and returns its index.
func (n *node) constant(v []float32, shape []int) int {
	data := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(data[4*i:], math.Float32bits(x))
	}
	n.l.p.tensors = append(n.l.p.tensors, tensorPlan{used: true, shape: shape, bytes: len(data), data: data, alias: -1})
	return len(n.l.p.tensors) - 1
}

// packFilter repacks an [oc][k] filter as [oc/v][k][v] (oc rounded up to
// a multiple of v, the padding channels zero), so that a work item's v
// channels for one k are one contiguous vector.
func packFilter(f []float32, oc, k, v int) []float32 {
	blocks := (oc + v - 1) / v
	out := make([]float32, blocks*k*v)
	for o := range oc {
		for i := range k {
			out[((o/v)*k+i)*v+o%v] = f[o*k+i]
		}
	}
	return out
}

// padFloats is x zero-padded to n values.
func padFloats(x []float32, n int) []float32 {
	out := make([]float32, n)
	copy(out, x)
	return out
}

// --- AVERAGE_POOL_2D ---------------------------------------------------------

const avgPoolKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int c = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (c >= IC || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH, count = 0;
	float sum = 0.0f;
	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * SH - PT + ky;
		if (iy < 0 || iy >= H) continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = ox * SW - PL + kx;
			if (ix < 0 || ix >= W) continue;
			sum += LD(in, ((n * H + iy) * W + ix) * IC + c);
			count++;
		}
	}
	ST(out, ((n * OH + oy) * OW + ox) * IC + c, ACT((FLT)(count > 0 ? sum / count : 0.0f)));
}
`

// avgPool lowers AVERAGE_POOL_2D: the mean of the window's elements inside
// the input (padding is not counted, as in TFLite).
func (n *node) avgPool() error { return n.pool(avgPoolKernel) }

// pool lowers a 2-D pooling with kernel body over (channel, x, batch*y).
func (n *node) pool(body string) error {
	o, ok := n.opts.(*schema.Pool2DOptionsT)
	if !ok {
		return fmt.Errorf("no Pool2DOptions")
	}
	in, out, err := n.mainIO(1, 1, false)
	if err != nil {
		return err
	}
	g := window{in: in, out: out, kh: int(o.FilterHeight), kw: int(o.FilterWidth), sh: int(o.StrideH), sw: int(o.StrideW),
		dh: 1, dw: 1, padding: o.Padding, act: o.FusedActivationFunction}
	var d defines
	if err := g.define(&d); err != nil {
		return err
	}
	if out[3] != in[3] {
		return fmt.Errorf("input %v, output %v: channels differ", in, out)
	}
	n.emit(d.wrap(kernelName(n.index), body), []int{n.in[0], n.out[0]}, in[3], out[2], out[0]*out[1])
	return nil
}

// --- RESHAPE, SOFTMAX --------------------------------------------------------

// reshape needs no kernel: the output shares the input's buffer (the bytes
// are the same). The optional shape input is ignored: the output tensor's
// declared shape is the one the partition was extracted with.
func (n *node) reshape() error {
	if err := n.inputs(1, 2); err != nil {
		return err
	}
	if err := n.l.use(n.in[0], false); err != nil {
		return err
	}
	if err := n.l.use(n.out[0], false); err != nil {
		return err
	}
	src, dst := &n.l.p.tensors[n.in[0]], &n.l.p.tensors[n.out[0]]
	if src.bytes != dst.bytes {
		return fmt.Errorf("input %v and output %v hold different numbers of elements", src.shape, dst.shape)
	}
	dst.alias = n.in[0]
	for src.alias >= 0 { // share the root buffer of a chain of reshapes
		dst.alias = src.alias
		src = &n.l.p.tensors[src.alias]
	}
	return nil
}

const softmaxKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int r = get_global_id(0);
	if (r >= ROWS) return;
	__global const T* x = in + r * C;
	__global T* y = out + r * C;
	float m = LD(x, 0);
	for (int c = 1; c < C; c++) m = fmax(m, (float)LD(x, c));
	float sum = 0.0f;
	for (int c = 0; c < C; c++) sum += exp(((float)LD(x, c) - m) * BETA);
	for (int c = 0; c < C; c++) ST(y, c, exp(((float)LD(x, c) - m) * BETA) / sum);
}
`

// softmax lowers SOFTMAX along the last dimension, with its beta.
func (n *node) softmax() error {
	o, ok := n.opts.(*schema.SoftmaxOptionsT)
	if !ok {
		return fmt.Errorf("no SoftmaxOptions")
	}
	in, out, err := n.mainIO(1, 1, false)
	if err != nil {
		return err
	}
	if !slices.Equal(in, out) || len(in) == 0 {
		return fmt.Errorf("input %v, output %v: want the same shape", in, out)
	}
	c := in[len(in)-1]
	rows := tensor.NumElements(in) / c
	var d defines
	d.int("C", c)
	d.int("ROWS", rows)
	d.text("BETA", floatLit(o.Beta))
	n.emit(d.wrap(kernelName(n.index), softmaxKernel), []int{n.in[0], n.out[0]}, rows)
	return nil
}
