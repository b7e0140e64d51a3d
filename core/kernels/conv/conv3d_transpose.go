package conv

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

func newConv3DTranspose(info kernel.OpInfo) (kernel.Op, error) {
	p, err := parseConv3DParams(info.Operator, "CONV_3D_TRANSPOSE")
	if err != nil {
		return nil, err
	}
	return &Conv3DTranspose{Params: p}, nil
}

// Conv3DTranspose is the CONV_3D_TRANSPOSE kernel (TFLite 2.9's
// conv3d_transpose.cc): inputs (output shape, a 1-D INT32 of 5 values;
// filter [depth, height, width, out channels, in channels]; input NDHWC;
// optional bias, one value per input channel as TFLite 2.9 checks, of which
// output channel c adds value c), one output NDHWC, all FLOAT32 as TFLite
// 2.9 requires. The output shape may be computed at run time: the output is then dynamic,
// sized at every Eval, as in TFLite.
//
// Each input pixel times the filter is one GEMM row (every tap's output
// channels: the filter is already the GEMM's [taps*outC][inC] weights);
// each output pixel then sums the taps that reach it, adds the bias and
// clamps as Conv3D does. The output must have the filter's out channels
// (TFLite 2.9 also takes a multiple of them and then reads past the
// filter).
//
// The result is the transposed convolution as TFLite's reference kernel and
// TensorFlow compute it, also where TFLite 2.9's kernels do not: its
// optimized kernel can drop the input's last planes when SAME padding pads
// the depth (its col2im takes the padding's offset alone as the trailing
// padding), and its reference kernel, used for dilations, adds a bias
// longer than the output channels by flat output index.
type Conv3DTranspose struct {
	Params Conv3DParams

	// geom is the forward convolution, from this op's output to its input.
	geom   geom3
	reach  [3]reach // by dimension
	shape  [5]int
	outC   int
	lo, hi float32
	zeros  []float32 // the bias when there is none

	fg     fGemm
	inGeom convGeom // one batch of the input as GEMM rows
	scr    *convScratch
	team   *kernel.Workers
	gemm   fgemmLoop
	gather tconv3dLoop
}

// tconv3dLoop is Conv3DTranspose's summing loop body: chunks of one
// batch's output rows (depth, height).
type tconv3dLoop struct {
	c               *Conv3DTranspose
	b               int
	bias, out, taps []float32
}

func (l *tconv3dLoop) Chunk(_, lo, hi int) { l.c.sum(l.b, l.taps, l.bias, l.out, lo, hi) }

// Prepare implements Op.
func (c *Conv3DTranspose) Prepare(n *kernel.Node) error {
	const op = "CONV_3D_TRANSPOSE"
	if len(n.Inputs) < 3 || len(n.Inputs) > 4 || len(n.Outputs) != 1 {
		return fmt.Errorf("%s: got %d inputs and %d outputs, want 3-4 and 1", op, len(n.Inputs), len(n.Outputs))
	}
	shape, filter, in, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Input(3), n.Outputs[0]
	if shape == nil || filter == nil || in == nil || out == nil {
		return fmt.Errorf("%s: missing output shape, filter, input or output", op)
	}
	if len(shape.Shape) != 1 || shape.NumElements() != 5 {
		return fmt.Errorf("%s: output shape tensor %v, want 5 values in 1-D", op, shape.Shape)
	}
	if len(in.Shape) != 5 || len(filter.Shape) != 5 {
		return fmt.Errorf("%s: input %v and filter %v must both be 5-D (NDHWC and DHWOI)", op, in.Shape, filter.Shape)
	}
	if in.Shape[4] != filter.Shape[4] {
		return fmt.Errorf("%s: input has %d channels, filter %v (DHWOI) %d", op, in.Shape[4], filter.Shape, filter.Shape[4])
	}
	for _, t := range []struct {
		role string
		t    *tensor.Tensor
	}{{"input", in}, {"filter", filter}, {"output", out}} {
		if err := checkFloat32(op, t.role, t.t); err != nil {
			return err
		}
	}
	if shape.Type != tensor.Int32 {
		return fmt.Errorf("%s: output shape is %s, want INT32", op, shape.Type)
	}
	// TFLite 2.9 wants as many biases as input channels (filter.Shape[4])
	// and adds bias[c] to output channel c: a bias shorter than the output
	// channels would be read past its end there.
	c.outC = filter.Shape[3]
	if err := checkBias3D(op, bias, filter.Shape[4], "input"); err != nil {
		return err
	}
	if bias != nil && bias.NumElements() < c.outC {
		return fmt.Errorf("%s: bias of %d values (TFLite 2.9 wants one per input channel) for %d output channels", op, bias.NumElements(), c.outC)
	}
	c.lo, c.hi = kernel.ActivationRangeFloat(c.Params.Activation)
	c.zeros = kernel.Sized(c.zeros, c.outC)
	clear(c.zeros)

	// The GEMM: input pixels times [taps*outC][inC], neither biased nor
	// clamped (the sums are).
	N, K := filter.Shape[0]*filter.Shape[1]*filter.Shape[2]*c.outC, in.Shape[4]
	rows := in.Shape[1] * in.Shape[2] * in.Shape[3]
	c.fg.lo, c.fg.hi = float32(math.Inf(-1)), float32(math.Inf(1))
	if filter.Const {
		c.fg.shareWeights(n, filter.Float32s(), N, K)
	} else {
		c.fg.reserve(N, K)
		c.fg.N, c.fg.K = N, K
	}
	c.fg.setBias(nil)
	c.inGeom = fcGeom(rows, K)
	c.team, c.scr = n.Workers, convScratchOf(n)
	threads := max(n.Threads, 1)
	c.scr.f = growWork(c.scr.f, threads)
	for i := range c.scr.f[:threads] {
		c.scr.f[i].ensure(K, c.fg.kernels())
	}
	if need := rows * N; len(c.scr.taps) < need {
		c.scr.taps = make([]float32, need)
	}
	if !shape.Const {
		out.Dynamic = true
		return nil
	}
	return c.resize(op, shape, filter, in, out)
}

// resize takes the output's shape from the shape tensor, checks it against
// the input (the forward convolution of the output must give the input's
// size) and gives it to out.
func (c *Conv3DTranspose) resize(op string, shape, filter, in, out *tensor.Tensor) error {
	for i, v := range shape.Int32s() {
		c.shape[i] = int(v)
	}
	s := c.shape
	if min(s[0], s[1], s[2], s[3], s[4]) < 0 {
		return fmt.Errorf("%s: output shape %v has a negative dimension", op, s)
	}
	if s[0] != in.Shape[0] {
		return fmt.Errorf("%s: output shape %v for a batch of %d", op, s, in.Shape[0])
	}
	if s[4] != c.outC {
		return fmt.Errorf("%s: output shape %v for a filter %v (DHWOI) of %d output channels", op, s, filter.Shape, c.outC)
	}
	g, err := newGeom3(op, &c.Params, s[0], [3]int(s[1:4]), s[4], [3]int(filter.Shape[:3]))
	if err != nil {
		return err
	}
	if g.out != [3]int(in.Shape[1:4]) {
		return fmt.Errorf("%s: output shape %v does not match the %v input: its convolution with filter %v, strides %v and dilations %v gives %v",
			op, s, in.Shape, filter.Shape[:3], c.Params.Stride, c.Params.Dilation, g.out)
	}
	c.geom = g
	for d := range c.reach {
		c.reach[d].set(&g, d)
	}
	kernel.SetShape(out, s[:])
	return nil
}

// reach lists, for each output position along one dimension, the input
// positions whose windows reach it and the filter taps they reach it by:
// the pairs from first[o] up to first[o+1].
type reach struct {
	first, in, tap []int
}

// set fills r for dimension d of the forward convolution g (its input is
// the transpose's output), reusing r's memory.
func (r *reach) set(g *geom3, d int) {
	r.first = kernel.Sized(r.first, g.in[d]+1)
	r.in, r.tap = r.in[:0], r.tap[:0]
	for o := range g.in[d] {
		r.first[o] = len(r.in)
		for k := range g.k[d] {
			if i, ok := g.source(d, o, k); ok {
				r.in, r.tap = append(r.in, i), append(r.tap, k)
			}
		}
	}
	r.first[g.in[d]] = len(r.in)
}

// Eval implements Op.
func (c *Conv3DTranspose) Eval(n *kernel.Node) error {
	shape, filter, in, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Input(3), n.Outputs[0]
	if out.Dynamic {
		if err := c.resize("CONV_3D_TRANSPOSE", shape, filter, in, out); err != nil {
			return err
		}
	}
	if !filter.Const {
		c.fg.setWeights(filter.Float32s(), c.fg.N, c.fg.K)
	}
	b := c.zeros
	if bias != nil {
		b = bias.Float32s()
	}
	threads, g := max(n.Threads, 1), &c.geom
	x, y := in.Float32s(), out.Float32s()
	taps := c.scr.taps[:c.inGeom.rows()*c.fg.N]
	inSize := c.inGeom.rows() * c.fg.K
	outRows := g.in[0] * g.in[1]
	for batch := range g.batches {
		runFGemm(&c.fg, &c.inGeom, x[batch*inSize:(batch+1)*inSize], taps, c.team, threads, c.scr.f, &c.gemm)
		if threads == 1 {
			c.sum(batch, taps, b, y, 0, outRows)
			continue
		}
		c.gather = tconv3dLoop{c: c, b: batch, bias: b, out: y, taps: taps}
		c.team.Run(outRows, threads, 1, &c.gather)
	}
	c.gather = tconv3dLoop{} // holds no tensor past the Eval
	return nil
}

// sum computes batch b's output rows [lo, hi) (by depth, then height):
// each output pixel adds up the taps that reach it from taps (the GEMM's
// rows for the batch's input pixels), then the bias, and clamps.
func (c *Conv3DTranspose) sum(b int, taps, bias, out []float32, lo, hi int) {
	g, C, N := &c.geom, c.outC, c.fg.N
	rd, ry, rx := &c.reach[0], &c.reach[1], &c.reach[2]
	for r := lo; r < hi; r++ {
		od, oy := r/g.in[1], r%g.in[1]
		for ox := range g.in[2] {
			o := out[(((b*g.in[0]+od)*g.in[1]+oy)*g.in[2]+ox)*C:][:C]
			clear(o)
			for a := rd.first[od]; a < rd.first[od+1]; a++ {
				for e := ry.first[oy]; e < ry.first[oy+1]; e++ {
					row := (rd.in[a]*g.out[1] + ry.in[e]) * g.out[2]
					tap := (rd.tap[a]*g.k[1] + ry.tap[e]) * g.k[2]
					for f := rx.first[ox]; f < rx.first[ox+1]; f++ {
						src := taps[(row+rx.in[f])*N+(tap+rx.tap[f])*C:][:C]
						for i, v := range src {
							o[i] += v
						}
					}
				}
			}
			for i, v := range bias[:C] {
				o[i] = kernel.ClampF32(o[i]+v, c.lo, c.hi)
			}
		}
	}
}

// source is the window, along dimension d, whose tap k covers position o
// of the convolution's input, if one does.
func (g *geom3) source(d, o, k int) (int, bool) {
	t := o + g.pad[d] - k*g.dil[d]
	if t < 0 || g.stride[d] == 0 || t%g.stride[d] != 0 { // stride 0: no windows
		return 0, false
	}
	i := t / g.stride[d]
	return i, i < g.out[d]
}
