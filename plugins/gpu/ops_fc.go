package gpu

import (
	"fmt"
	"slices"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// --- FULLY_CONNECTED -----------------------------------------------------------

const fullyConnectedKernel = `__kernel void NAME(__global const T* in, __global const T* w, __global const T* bias, __global T* out) {
	int u = get_global_id(0), b = get_global_id(1);
	if (u >= U || b >= B) return;
	__global const T* x = in + b * K;
	__global const T* wr = w + u * K;
	FLT acc = 0;
	for (int k = 0; k < K; k++) acc += LD(x, k) * LD(wr, k);
	ST(out, b * U + u, ACT(acc + LD(bias, u)));
}
`

// fullyConnected lowers FULLY_CONNECTED with the default weights format:
// weights [units, K], constant or computed at run time; an optional bias;
// the input flattened to [batch, K] as TFLite does (batch = elements / K);
// the output [batch, units], or with keep_num_dims the input's shape with
// its last dimension replaced by units; a fused activation.
func (n *node) fullyConnected() error {
	o, ok := n.opts.(*schema.FullyConnectedOptionsT)
	if !ok {
		return fmt.Errorf("no FullyConnectedOptions")
	}
	if o.WeightsFormat != schema.FullyConnectedOptionsWeightsFormatDEFAULT {
		return fmt.Errorf("weights format %s", o.WeightsFormat)
	}
	if err := n.inputs(2, 3); err != nil {
		return err
	}
	var d defines
	if err := d.activation(o.FusedActivationFunction); err != nil {
		return err
	}
	if err := n.l.use(n.in[0], false); err != nil {
		return err
	}
	if err := n.l.use(n.in[1], true); err != nil {
		return err
	}
	bias := -1
	if len(n.in) == 3 && n.in[2] >= 0 {
		bias = n.in[2]
		if err := n.l.use(bias, true); err != nil {
			return err
		}
	}
	if err := n.l.use(n.out[0], false); err != nil {
		return err
	}
	in, w, out := n.shape(n.in[0]), n.shape(n.in[1]), n.shape(n.out[0])
	if len(w) != 2 || len(in) == 0 || tensor.NumElements(in)%w[1] != 0 {
		return fmt.Errorf("input %v, weights %v: want weights [units, K] with K dividing the input's elements", in, w)
	}
	units, k := w[0], w[1]
	batch := tensor.NumElements(in) / k
	want := []int{batch, units}
	if o.KeepNumDims {
		want = append(slices.Clone(in[:len(in)-1]), units)
	}
	if !slices.Equal(out, want) {
		return fmt.Errorf("output %v; input %v with weights %v gives %v", out, in, w, want)
	}
	b, err := n.biasArg(bias, units)
	if err != nil {
		return err
	}
	d.int("U", units)
	d.int("B", batch)
	d.int("K", k)
	n.emit(d.wrap(kernelName(n.index), fullyConnectedKernel), []int{n.in[0], n.in[1], b, n.out[0]}, units, batch)
	return nil
}

// --- TRANSPOSE_CONV ------------------------------------------------------------

// transposeConvKernel gathers, for each output element, what TFLite's
// reference scatter (reference/transpose_conv.h) adds into it: input pixel
// (iy, ix) lands at oy = iy*SH - PT + ky, so output row oy takes the taps
// ky with (oy + PT - ky) a non-negative multiple of SH below H*SH. The bias
// is added after the sum, as the reference does.
const transposeConvKernel = `__kernel void NAME(__global const T* in, __global const T* w, __global const T* bias, __global T* out) {
	int oc = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (oc >= OC || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH;
	FLT acc = 0;
	for (int ky = 0; ky < KH; ky++) {
		int ty = oy + PT - ky;
		if (ty < 0 || ty % SH != 0 || ty / SH >= H) continue;
		int iy = ty / SH;
		for (int kx = 0; kx < KW; kx++) {
			int tx = ox + PL - kx;
			if (tx < 0 || tx % SW != 0 || tx / SW >= W) continue;
			int ix = tx / SW;
			__global const T* ip = in + ((n * H + iy) * W + ix) * IC;
			__global const T* wp = w + ((oc * KH + ky) * KW + kx) * IC;
			for (int c = 0; c < IC; c++) acc += LD(ip, c) * LD(wp, c);
		}
	}
	ST(out, ((n * OH + oy) * OW + ox) * OC + oc, acc + LD(bias, oc));
}
`

// transposeConv lowers TRANSPOSE_CONV: a constant output shape (input 0),
// weights [O, KH, KW, I] (input 1), the NHWC input (input 2) and, from
// version 3, an optional bias (input 3); SAME or VALID padding; strides.
// TFLite 2.9's options have no fused activation.
func (n *node) transposeConv() error {
	o, ok := n.opts.(*schema.TransposeConvOptionsT)
	if !ok {
		return fmt.Errorf("no TransposeConvOptions")
	}
	if err := n.inputs(3, 4); err != nil {
		return err
	}
	shape, err := n.constInts(n.in[0], "output shape")
	if err != nil {
		return err
	}
	data, weights, bias := n.in[2], n.in[1], -1
	if len(n.in) == 4 && n.in[3] >= 0 {
		bias = n.in[3]
	}
	for _, u := range []struct {
		ti       int
		constant bool
	}{{data, false}, {weights, true}, {bias, true}, {n.out[0], false}} {
		if u.ti < 0 {
			continue
		}
		if err := n.l.use(u.ti, u.constant); err != nil {
			return err
		}
	}
	in, w, out := n.shape(data), n.shape(weights), n.shape(n.out[0])
	if len(in) != 4 || len(w) != 4 || w[3] != in[3] || !slices.Equal(shape, out) || len(out) != 4 || out[0] != in[0] || out[3] != w[0] {
		return fmt.Errorf("input %v, weights %v, output shape %v, output %v: want NHWC input, OHWI weights, the output shape constant equal to the output's",
			in, w, shape, out)
	}
	if o.StrideH < 1 || o.StrideW < 1 {
		return fmt.Errorf("strides %dx%d: want positive", o.StrideH, o.StrideW)
	}
	if o.Padding != schema.PaddingSAME && o.Padding != schema.PaddingVALID {
		return fmt.Errorf("padding %d", o.Padding)
	}
	var d defines
	if err := transposeConvGeometry(&d, in, w, out, int(o.StrideH), int(o.StrideW), o.Padding == schema.PaddingSAME); err != nil {
		return err
	}
	b, err := n.biasArg(bias, out[3])
	if err != nil {
		return err
	}
	n.emit(d.wrap(kernelName(n.index), transposeConvKernel), []int{data, weights, b, n.out[0]}, out[3], out[2], out[0]*out[1])
	return nil
}

// transposeConvGeometry checks that the output, convolved by the weights
// with these strides and padding, gives back the input's size (TFLite's
// condition) and defines N H W IC OH OW OC KH KW SH SW PT PL. The padding
// is the forward convolution's, output to input.
func transposeConvGeometry(d *defines, in, w, out []int, sh, sw int, same bool) error {
	kh, kw := w[1], w[2]
	ch, cw := tensor.WindowOutSize(same, out[1], kh, sh, 1), tensor.WindowOutSize(same, out[2], kw, sw, 1)
	if ch != in[1] || cw != in[2] {
		return fmt.Errorf("output %dx%d with a %dx%d filter, strides %dx%d gives %dx%d, not the input's %dx%d",
			out[1], out[2], kh, kw, sh, sw, ch, cw, in[1], in[2])
	}
	pt, pl := 0, 0
	if same {
		pt, _ = tensor.WindowPadding(sh, 1, out[1], kh, ch)
		pl, _ = tensor.WindowPadding(sw, 1, out[2], kw, cw)
	}
	for _, e := range []struct {
		name string
		v    int
	}{{"N", in[0]}, {"H", in[1]}, {"W", in[2]}, {"IC", in[3]}, {"OH", out[1]}, {"OW", out[2]}, {"OC", out[3]},
		{"KH", kh}, {"KW", kw}, {"SH", sh}, {"SW", sw}, {"PT", pt}, {"PL", pl}} {
		d.int(e.name, e.v)
	}
	return nil
}
