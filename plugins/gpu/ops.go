package gpu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

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
		fmt.Fprintf(&b, "#undef %s\n", e.name)
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
		d.text("ACT(v)", "fmax((v), 0.0f)")
	case schema.ActivationFunctionTypeRELU6:
		d.text("ACT(v)", "fmin(fmax((v), 0.0f), 6.0f)")
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		d.text("ACT(v)", "fmin(fmax((v), -1.0f), 1.0f)")
	default:
		return fmt.Errorf("fused activation %s", schema.EnumNamesActivationFunctionType[act])
	}
	return nil
}

// --- ADD, SUB, MUL ----------------------------------------------------------

const binaryKernel = `__kernel void NAME(__global const float* a, __global const float* b, __global float* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	int c3 = i % D3, r = i / D3;
	int c2 = r % D2; r /= D2;
	int c1 = r % D1, c0 = r / D1;
	float x = a[c0 * A0 + c1 * A1 + c2 * A2 + c3 * A3];
	float y = b[c0 * B0 + c1 * B1 + c2 * B2 + c3 * B3];
	out[i] = ACT(OP(x, y));
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
	if err := d.activation(binaryActivation(n.opts)); err != nil {
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

const convKernel = `__kernel void NAME(__global const float* in, __global const float* w, __global const float* bias, __global float* out) {
	int oc = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (oc >= OC || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH;
	float acc = bias[oc];
	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * SH - PT + ky * DH;
		if (iy < 0 || iy >= H) continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = ox * SW - PL + kx * DW;
			if (ix < 0 || ix >= W) continue;
			__global const float* ip = in + ((n * H + iy) * W + ix) * IC;
			__global const float* wp = w + ((oc * KH + ky) * KW + kx) * IC;
			for (int c = 0; c < IC; c++) acc += ip[c] * wp[c];
		}
	}
	out[((n * OH + oy) * OW + ox) * OC + oc] = ACT(acc);
}
`

const depthwiseKernel = `__kernel void NAME(__global const float* in, __global const float* w, __global const float* bias, __global float* out) {
	int oc = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (oc >= OC || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH, ic = oc / MULT;
	float acc = bias[oc];
	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * SH - PT + ky * DH;
		if (iy < 0 || iy >= H) continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = ox * SW - PL + kx * DW;
			if (ix < 0 || ix >= W) continue;
			acc += in[((n * H + iy) * W + ix) * IC + ic] * w[(ky * KW + kx) * OC + oc];
		}
	}
	out[((n * OH + oy) * OW + ox) * OC + oc] = ACT(acc);
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
	return n.emitConv(g, bias, convKernel, 0)
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
	return n.emitConv(g, bias, depthwiseKernel, f[3]/in[3])
}

// emitConv emits a convolution kernel over (output channel, x, batch*y).
func (n *node) emitConv(g window, bias int, body string, mult int) error {
	var d defines
	if err := g.define(&d); err != nil {
		return err
	}
	oc := g.out[3]
	d.int("OC", oc)
	if mult > 0 {
		d.int("MULT", mult)
	}
	b, err := n.biasArg(bias, oc)
	if err != nil {
		return err
	}
	n.emit(d.wrap(kernelName(n.index), body), []int{n.in[0], n.in[1], b, n.out[0]}, oc, g.out[2], g.out[0]*g.out[1])
	return nil
}

// --- AVERAGE_POOL_2D ---------------------------------------------------------

const avgPoolKernel = `__kernel void NAME(__global const float* in, __global float* out) {
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
			sum += in[((n * H + iy) * W + ix) * IC + c];
			count++;
		}
	}
	out[((n * OH + oy) * OW + ox) * IC + c] = ACT(count > 0 ? sum / count : 0.0f);
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
	if err := n.inputs(1, 1); err != nil {
		return err
	}
	if err := n.l.use(n.in[0], false); err != nil {
		return err
	}
	if err := n.l.use(n.out[0], false); err != nil {
		return err
	}
	in, out := n.shape(n.in[0]), n.shape(n.out[0])
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

const softmaxKernel = `__kernel void NAME(__global const float* in, __global float* out) {
	int r = get_global_id(0);
	if (r >= ROWS) return;
	__global const float* x = in + r * C;
	__global float* y = out + r * C;
	float m = x[0];
	for (int c = 1; c < C; c++) m = fmax(m, x[c]);
	float sum = 0.0f;
	for (int c = 0; c < C; c++) sum += exp((x[c] - m) * BETA);
	for (int c = 0; c < C; c++) y[c] = exp((x[c] - m) * BETA) / sum;
}
`

// softmax lowers SOFTMAX along the last dimension, with its beta.
func (n *node) softmax() error {
	o, ok := n.opts.(*schema.SoftmaxOptionsT)
	if !ok {
		return fmt.Errorf("no SoftmaxOptions")
	}
	if err := n.inputs(1, 1); err != nil {
		return err
	}
	if err := n.l.use(n.in[0], false); err != nil {
		return err
	}
	if err := n.l.use(n.out[0], false); err != nil {
		return err
	}
	in, out := n.shape(n.in[0]), n.shape(n.out[0])
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
