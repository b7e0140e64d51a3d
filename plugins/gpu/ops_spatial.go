package gpu

import (
	"fmt"
	"slices"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// --- MAX_POOL_2D -------------------------------------------------------------

const maxPoolKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int c = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (c >= IC || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH;
	float m = -MAXFLOAT;
	for (int ky = 0; ky < KH; ky++) {
		int iy = oy * SH - PT + ky;
		if (iy < 0 || iy >= H) continue;
		for (int kx = 0; kx < KW; kx++) {
			int ix = ox * SW - PL + kx;
			if (ix < 0 || ix >= W) continue;
			m = fmax(m, (float)LD(in, ((n * H + iy) * W + ix) * IC + c));
		}
	}
	ST(out, ((n * OH + oy) * OW + ox) * IC + c, ACT((FLT)m));
}
`

// maxPool lowers MAX_POOL_2D: the largest of the window's elements inside
// the input (padding never wins, as in TFLite).
func (n *node) maxPool() error { return n.pool(maxPoolKernel) }

// --- CONCATENATION -----------------------------------------------------------

const concatKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	int outer = i / SLICE_IN, inner = i % SLICE_IN;
	ST(out, outer * SLICE_OUT + OFFSET + inner, ACT(LD(in, i)));
}
`

// concat lowers CONCATENATION along any axis: one copy kernel per input,
// each writing its slab of the output, with the fused activation.
func (n *node) concat() error {
	o, ok := n.opts.(*schema.ConcatenationOptionsT)
	if !ok {
		return fmt.Errorf("no ConcatenationOptions")
	}
	if len(n.in) < 1 {
		return fmt.Errorf("no inputs")
	}
	if err := n.l.use(n.out[0], false); err != nil {
		return err
	}
	out := n.shape(n.out[0])
	axis := int(o.Axis)
	if axis < 0 {
		axis += len(out)
	}
	if axis < 0 || axis >= len(out) {
		return fmt.Errorf("axis %d of a %d-D output", o.Axis, len(out))
	}
	inner := tensor.NumElements(out[axis+1:])
	offset := 0
	for k, ti := range n.in {
		if err := n.l.use(ti, true); err != nil {
			return err
		}
		in := n.shape(ti)
		if !concatCompatible(in, out, axis) {
			return fmt.Errorf("input %d %v does not fit output %v along axis %d", k, in, out, axis)
		}
		var d defines
		if err := d.activation(o.FusedActivationFunction); err != nil {
			return err
		}
		total := tensor.NumElements(in)
		d.int("TOTAL", total)
		d.int("SLICE_IN", in[axis]*inner)
		d.int("SLICE_OUT", out[axis]*inner)
		d.int("OFFSET", offset*inner)
		name := fmt.Sprintf("%s_%d", kernelName(n.index), k)
		n.emitNamed(name, d.wrap(name, concatKernel), []int{ti, n.out[0]}, total)
		offset += in[axis]
	}
	if offset != out[axis] {
		return fmt.Errorf("inputs add up to %d along axis %d, the output %v has %d", offset, axis, out, out[axis])
	}
	return nil
}

// concatCompatible: in has out's rank and dimensions except along axis.
func concatCompatible(in, out []int, axis int) bool {
	if len(in) != len(out) {
		return false
	}
	for i := range in {
		if i != axis && in[i] != out[i] {
			return false
		}
	}
	return true
}

// --- PAD -----------------------------------------------------------------------

const padKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	int c3 = i % O3, r = i / O3;
	int c2 = r % O2; r /= O2;
	int c1 = r % O1, c0 = r / O1;
	int i0 = c0 - P0, i1 = c1 - P1, i2 = c2 - P2, i3 = c3 - P3;
	FLT v = 0;
	if (i0 >= 0 && i0 < I0 && i1 >= 0 && i1 < I1 && i2 >= 0 && i2 < I2 && i3 >= 0 && i3 < I3)
		v = LD(in, ((i0 * I1 + i1) * I2 + i2) * I3 + i3);
	ST(out, i, v);
}
`

// pad lowers PAD with constant paddings (up to 4 dimensions; zeros, as
// TFLite pads float tensors).
func (n *node) pad() error {
	in, out, err := n.mainIO(2, 2, false)
	if err != nil {
		return err
	}
	pads, err := n.paddings(len(in))
	if err != nil {
		return err
	}
	if len(in) > 4 || len(out) != len(in) {
		return fmt.Errorf("input %v, output %v: want the same rank, at most 4", in, out)
	}
	for i := range in {
		if pads[2*i] < 0 || pads[2*i+1] < 0 || out[i] != in[i]+pads[2*i]+pads[2*i+1] {
			return fmt.Errorf("paddings %v take input %v to %v, not to output %v", pads, in, padded(in, pads), out)
		}
	}
	var d defines
	i4, o4 := pad4(in), pad4(out)
	p4 := make([]int, 4)
	for i := range in {
		p4[4-len(in)+i] = pads[2*i]
	}
	for k := range 4 {
		d.int(fmt.Sprint("I", k), i4[k])
		d.int(fmt.Sprint("O", k), o4[k])
		d.int(fmt.Sprint("P", k), p4[k])
	}
	total := tensor.NumElements(out)
	d.int("TOTAL", total)
	n.emit(d.wrap(kernelName(n.index), padKernel), []int{n.in[0], n.out[0]}, total)
	return nil
}

func padded(in, p []int) []int {
	out := slices.Clone(in)
	for i := range out {
		out[i] += p[2*i] + p[2*i+1]
	}
	return out
}

// paddings reads PAD's constant paddings: rank x 2 INT32 or INT64 values,
// before and after per dimension.
func (n *node) paddings(rank int) ([]int, error) {
	v, err := n.constInts(n.in[1], "paddings")
	if err != nil {
		return nil, err
	}
	if shape := n.l.sg.Tensor(n.in[1]).Shape; len(shape) != 2 || shape[0] != rank || shape[1] != 2 {
		return nil, fmt.Errorf("paddings of shape %v for a %d-D input, want %dx2", shape, rank, rank)
	}
	return v, nil
}

// --- RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR ----------------------------------

// The coordinates are TFLite's reference kernels' (resize_bilinear.h's
// ComputeInterpolationValues, resize_nearest_neighbor.h's
// GetNearestNeighbor) in float32, without contraction into fused
// multiply-adds, so that every output reads the same input pixels.

const resizeBilinearKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	#pragma OPENCL FP_CONTRACT OFF
	int c = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (c >= C || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH;
	float sy = SRC(oy, HS), sx = SRC(ox, WS);
	int y0 = max((int)floor(sy), 0), y1 = min((int)ceil(sy), H - 1);
	int x0 = max((int)floor(sx), 0), x1 = min((int)ceil(sx), W - 1);
	float dy = sy - (float)y0, dx = sx - (float)x0;
	__global const T* p = in + n * H * W * C + c;
	float v = (float)LD(p, (y0 * W + x0) * C) * ((1.0f - dy) * (1.0f - dx));
	v += (float)LD(p, (y0 * W + x1) * C) * ((1.0f - dy) * dx);
	v += (float)LD(p, (y1 * W + x0) * C) * (dy * (1.0f - dx));
	v += (float)LD(p, (y1 * W + x1) * C) * (dy * dx);
	ST(out, ((n * OH + oy) * OW + ox) * C + c, v);
}
`

const resizeNearestKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	#pragma OPENCL FP_CONTRACT OFF
	int c = get_global_id(0), ox = get_global_id(1), z = get_global_id(2);
	if (c >= C || ox >= OW || z >= N * OH) return;
	int oy = z % OH, n = z / OH;
	int iy = max(min((int)PICK(((float)oy + OFFSET) * HS), H - 1), LOW);
	int ix = max(min((int)PICK(((float)ox + OFFSET) * WS), W - 1), LOW);
	ST(out, ((n * OH + oy) * OW + ox) * C + c, LD(in, ((n * H + iy) * W + ix) * C + c));
}
`

// resize lowers RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR of a 4-D NHWC
// tensor to the output's declared size (a constant size input must agree).
func (n *node) resize(code schema.BuiltinOperator) error {
	alignCorners, halfPixel, err := resizeFlags(n.opts)
	if err != nil {
		return err
	}
	in, out, err := n.mainIO(2, 2, false)
	if err != nil {
		return err
	}
	if len(in) != 4 || len(out) != 4 || in[0] != out[0] || in[3] != out[3] {
		return fmt.Errorf("input %v, output %v: want 4-D NHWC of the same batch and channels", in, out)
	}
	if size, err := n.constInts(n.in[1], "size"); err == nil && !slices.Equal(size, out[1:3]) {
		return fmt.Errorf("size %v, output %v", size, out)
	}
	var d defines
	for _, e := range []struct {
		name string
		v    int
	}{{"N", in[0]}, {"H", in[1]}, {"W", in[2]}, {"C", in[3]}, {"OH", out[1]}, {"OW", out[2]}} {
		d.int(e.name, e.v)
	}
	d.text("HS", floatLit(resizeScale(alignCorners, in[1], out[1])))
	d.text("WS", floatLit(resizeScale(alignCorners, in[2], out[2])))
	body := resizeBilinearKernel
	if code == schema.BuiltinOperatorRESIZE_BILINEAR {
		if alignCorners && halfPixel {
			return fmt.Errorf("align_corners and half_pixel_centers are both set")
		}
		if halfPixel {
			d.text("SRC(v, s)", "(((float)(v) + 0.5f) * (s) - 0.5f)")
		} else {
			d.text("SRC(v, s)", "((float)(v) * (s))")
		}
	} else {
		body = resizeNearestKernel
		nearestDefines(&d, alignCorners, halfPixel)
	}
	n.emit(d.wrap(kernelName(n.index), body), []int{n.in[0], n.out[0]}, out[3], out[2], out[0]*out[1])
	return nil
}

// nearestDefines are GetNearestNeighbor's: round (half away from zero)
// with align_corners, else floor; the 0.5 offset and the clamp at 0 with
// half_pixel_centers.
func nearestDefines(d *defines, alignCorners, halfPixel bool) {
	d.text("PICK(v)", "floor(v)")
	if alignCorners {
		d.text("PICK(v)", "round(v)")
	}
	d.text("OFFSET", "0.0f")
	d.text("LOW", "INT_MIN")
	if halfPixel {
		d.text("OFFSET", "0.5f")
		d.text("LOW", "0")
	}
}

// resizeFlags reads align_corners and half_pixel_centers.
func resizeFlags(opts any) (alignCorners, halfPixel bool, err error) {
	switch o := opts.(type) {
	case *schema.ResizeBilinearOptionsT:
		return o.AlignCorners, o.HalfPixelCenters, nil
	case *schema.ResizeNearestNeighborOptionsT:
		return o.AlignCorners, o.HalfPixelCenters, nil
	case nil:
		return false, false, nil
	}
	return false, false, fmt.Errorf("options %T", opts)
}

// resizeScale is TFLite's float32 input-per-output scale.
func resizeScale(alignCorners bool, in, out int) float32 {
	if alignCorners && out > 1 {
		return float32(in-1) / float32(out-1)
	}
	return float32(in) / float32(out)
}

// --- MEAN ----------------------------------------------------------------------

const meanKernel = `__kernel void NAME(__global const T* in, __global T* out) {
	int i = get_global_id(0);
	if (i >= TOTAL) return;
	int c3 = i % O3, r = i / O3;
	int c2 = r % O2; r /= O2;
	int c1 = r % O1, c0 = r / O1;
	float sum = 0.0f;
	for (int r0 = 0; r0 < R0; r0++)
		for (int r1 = 0; r1 < R1; r1++)
			for (int r2 = 0; r2 < R2; r2++)
				for (int r3 = 0; r3 < R3; r3++)
					sum += LD(in, (((c0 + r0) * I1 + c1 + r1) * I2 + c2 + r2) * I3 + c3 + r3);
	ST(out, i, sum / COUNT);
}
`

// mean lowers MEAN over constant axes of a tensor of up to 4 dimensions,
// with or without keep_dims (the output's elements are laid out alike).
func (n *node) mean() error {
	in, out, err := n.mainIO(2, 2, false)
	if err != nil {
		return err
	}
	if len(in) > 4 {
		return fmt.Errorf("input %v: at most 4 dimensions", in)
	}
	axes, err := n.constInts(n.in[1], "axes")
	if err != nil {
		return err
	}
	reduced := make([]bool, 4)
	for _, a := range axes {
		if a < -len(in) || a >= len(in) {
			return fmt.Errorf("axis %d of a %d-D input", a, len(in))
		}
		if a < 0 {
			a += len(in)
		}
		reduced[4-len(in)+a] = true
	}
	var d defines
	i4, count := pad4(in), 1
	for k := range 4 {
		o, r := i4[k], 1
		if reduced[k] {
			o, r = 1, i4[k]
			count *= r
		}
		d.int(fmt.Sprint("I", k), i4[k])
		d.int(fmt.Sprint("O", k), o)
		d.int(fmt.Sprint("R", k), r)
	}
	total := tensor.NumElements(in) / count
	if tensor.NumElements(out) != total {
		return fmt.Errorf("input %v reduced over axes %v has %d elements, the output %v %d", in, axes, total, out, tensor.NumElements(out))
	}
	d.int("TOTAL", total)
	d.text("COUNT", floatLit(float32(count)))
	n.emit(d.wrap(kernelName(n.index), meanKernel), []int{n.in[0], n.out[0]}, total)
	return nil
}
