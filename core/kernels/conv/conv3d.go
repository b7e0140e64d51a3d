package conv

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// conv3dOps returns the registrations of CONV_3D and CONV_3D_TRANSPOSE at
// version 1, the only one TFLite 2.9's builtin op resolver registers.
func conv3dOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCONV_3D, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newConv3D},
		{Code: schema.BuiltinOperatorCONV_3D_TRANSPOSE, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, Main: 2, New: newConv3DTranspose},
	}
}

// Conv3DParams are the Conv3DOptions of CONV_3D and CONV_3D_TRANSPOSE. The
// strides and dilations are by dimension: depth, height, width.
type Conv3DParams struct {
	Padding    schema.Padding
	Stride     [3]int
	Dilation   [3]int
	Activation schema.ActivationFunctionType
}

// parseConv3DParams reads op's Conv3DOptions (the schema's defaults when
// it has none: strides 0, which give TFLite an empty output).
func parseConv3DParams(op *schema.Operator, name string) (Conv3DParams, error) {
	p := Conv3DParams{Padding: schema.PaddingSAME, Dilation: [3]int{1, 1, 1}}
	tbl, ok, err := kernel.StrictOptions(op, name, schema.BuiltinOptionsConv3DOptions)
	if err != nil || !ok {
		return p, err
	}
	var o schema.Conv3DOptions
	o.Init(tbl.Bytes, tbl.Pos)
	p.Padding = o.Padding()
	p.Stride = [3]int{int(o.StrideD()), int(o.StrideH()), int(o.StrideW())}
	p.Dilation = [3]int{int(o.DilationDFactor()), int(o.DilationHFactor()), int(o.DilationWFactor())}
	p.Activation = o.FusedActivationFunction()
	return p, nil
}

// geom3 is the geometry of a 3-D convolution over an NDHWC input, each
// [3]int by dimension (depth, height, width): the output pixels are the
// rows of a GEMM whose depth is k[0]*k[1]*k[2]*inC, in the filter's
// (depth, height, width, channel) order.
type geom3 struct {
	batches, inC     int
	in, out, k       [3]int
	stride, dil, pad [3]int
	direct           bool // 1x1x1 filter, stride 1: the rows are the input's
}

// newGeom3 computes the output size and leading padding of a 3-D window
// over in with filter k as TFLite's ComputePadding3DValues does.
func newGeom3(op string, p *Conv3DParams, batches int, in [3]int, inC int, k [3]int) (geom3, error) {
	g := geom3{batches: batches, inC: inC, in: in, k: k, stride: p.Stride, dil: p.Dilation}
	if p.Padding != schema.PaddingSAME && p.Padding != schema.PaddingVALID {
		return g, fmt.Errorf("%s: unknown padding %d", op, p.Padding)
	}
	for d := range 3 {
		// TFLite takes a stride of 0 (a model's missing options) as an
		// empty output, and a dilation of 0 as every tap on one pixel.
		if g.stride[d] < 0 || g.dil[d] < 0 {
			return g, fmt.Errorf("%s: strides %v and dilations %v (depth, height, width) must not be negative", op, p.Stride, p.Dilation)
		}
		if k[d] <= 0 {
			return g, fmt.Errorf("%s: filter size %v (depth, height, width) must be positive", op, k)
		}
		g.out[d] = kernel.ComputeOutSize(p.Padding, in[d], k[d], g.stride[d], g.dil[d])
		if g.out[d] < 0 {
			return g, fmt.Errorf("%s: filter %v with dilations %v does not fit the %v input with VALID padding", op, k, p.Dilation, in)
		}
		g.pad[d], _ = tensor.WindowPadding(g.stride[d], g.dil[d], in[d], k[d], g.out[d])
	}
	g.direct = k == [3]int{1, 1, 1} && g.stride == [3]int{1, 1, 1}
	return g, nil
}

// rows is the number of output pixels.
func (g *geom3) rows() int { return g.batches * g.out[0] * g.out[1] * g.out[2] }

// depth is the GEMM depth: one filter's values per output channel.
func (g *geom3) depth() int { return g.k[0] * g.k[1] * g.k[2] * g.inC }

// im2col writes the GEMM rows of output pixels p0 .. p0+m-1 to dst, one
// after the other; taps outside the input read zeros.
func (g *geom3) im2col(in []float32, p0, m int, dst []float32) {
	C, K := g.inC, g.depth()
	wide := g.dil[2] == 1 // a filter row's taps are adjacent in the input
	for r := range m {
		row := dst[r*K : r*K+K]
		p := p0 + r
		ox, oy, od := p%g.out[2], p/g.out[2]%g.out[1], p/(g.out[2]*g.out[1])%g.out[0]
		b := p / (g.out[2] * g.out[1] * g.out[0])
		d0, y0, x0 := od*g.stride[0]-g.pad[0], oy*g.stride[1]-g.pad[1], ox*g.stride[2]-g.pad[2]
		xIn := x0 >= 0 && x0+(g.k[2]-1)*g.dil[2] < g.in[2]
		k := 0
		for kd := range g.k[0] {
			id := d0 + kd*g.dil[0]
			for ky := range g.k[1] {
				iy := y0 + ky*g.dil[1]
				span := g.k[2] * C
				if id < 0 || id >= g.in[0] || iy < 0 || iy >= g.in[1] {
					clear(row[k : k+span])
					k += span
					continue
				}
				base := ((b*g.in[0]+id)*g.in[1] + iy) * g.in[2]
				if wide && xIn {
					copy(row[k:k+span], in[(base+x0)*C:])
					k += span
					continue
				}
				for kx := range g.k[2] {
					ix := x0 + kx*g.dil[2]
					if ix < 0 || ix >= g.in[2] {
						clear(row[k : k+C])
					} else {
						copy(row[k:k+C], in[(base+ix)*C:])
					}
					k += C
				}
			}
		}
	}
}

func newConv3D(info kernel.OpInfo) (kernel.Op, error) {
	p, err := parseConv3DParams(info.Operator, "CONV_3D")
	if err != nil {
		return nil, err
	}
	return &Conv3D{Params: p}, nil
}

// Conv3D is the CONV_3D kernel (TFLite 2.9's conv3d.cc): inputs (input
// NDHWC, filter DHWIO [depth, height, width, in channels, out channels],
// optional bias), one output NDHWC, all FLOAT32 as TFLite 2.9 requires. It
// runs the float GEMM on blocks of im2col rows, each worker its own block
// (on the input itself for a 1x1x1 filter with stride 1).
//
// The fused activation clamps as TFLite's CalculateActivationRange does:
// RELU, RELU6 and RELU_N1_TO_1 clamp, the others (TANH, SIGN_BIT) leave the
// sums as they are, as in TFLite.
//
// A dilated CONV_3D whose input depth differs from its channels is the
// convolution here, as in TFLite's reference kernel and TensorFlow: TFLite
// 2.9's optimized kernel gets it wrong (its DilatedIm2col3D copies depth
// values per pixel instead of channels).
type Conv3D struct {
	Params Conv3DParams

	geom geom3
	fg   fGemm
	scr  *convScratch
	team *kernel.Workers
	loop conv3dLoop
}

// conv3dLoop is Conv3D's loop body: chunks of output pixels.
type conv3dLoop struct {
	c       *Conv3D
	in, out []float32
}

func (l *conv3dLoop) Chunk(w, lo, hi int) { l.c.rows(l.in, l.out, lo, hi, w) }

// checkFloat32 refuses a tensor of another type than FLOAT32, the only one
// TFLite 2.9's 3-D convolutions compute.
func checkFloat32(op, role string, t *tensor.Tensor) error {
	if t.Type != tensor.Float32 {
		return kernel.Unsupported("%s: %s type %s (TFLite 2.9 computes FLOAT32 only)", op, role, t.Type)
	}
	return nil
}

// checkBias3D checks the optional FLOAT32 bias: n values, one per channel
// of the kind per names.
func checkBias3D(op string, bias *tensor.Tensor, n int, per string) error {
	if bias == nil {
		return nil
	}
	if err := checkFloat32(op, "bias", bias); err != nil {
		return err
	}
	if bias.NumElements() != n {
		return fmt.Errorf("%s: bias of %d values, want %d (one per %s channel)", op, bias.NumElements(), n, per)
	}
	return nil
}

// Prepare implements Op.
func (c *Conv3D) Prepare(n *kernel.Node) error {
	const op = "CONV_3D"
	if len(n.Inputs) < 2 || len(n.Inputs) > 3 || len(n.Outputs) != 1 {
		return fmt.Errorf("%s: got %d inputs and %d outputs, want 2-3 and 1", op, len(n.Inputs), len(n.Outputs))
	}
	in, filter, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	if in == nil || filter == nil || out == nil {
		return fmt.Errorf("%s: missing input, filter or output", op)
	}
	if len(in.Shape) != 5 || len(filter.Shape) != 5 {
		return fmt.Errorf("%s: input %v and filter %v must both be 5-D (NDHWC and DHWIO)", op, in.Shape, filter.Shape)
	}
	if in.Shape[4] != filter.Shape[3] {
		return fmt.Errorf("%s: input has %d channels, filter %v (DHWIO) %d", op, in.Shape[4], filter.Shape, filter.Shape[3])
	}
	for _, t := range []struct {
		role string
		t    *tensor.Tensor
	}{{"input", in}, {"filter", filter}, {"output", out}} {
		if err := checkFloat32(op, t.role, t.t); err != nil {
			return err
		}
	}
	outC := filter.Shape[4]
	if err := checkBias3D(op, bias, outC, "output"); err != nil {
		return err
	}
	g, err := newGeom3(op, &c.Params, in.Shape[0], [3]int(in.Shape[1:4]), in.Shape[4], [3]int(filter.Shape[:3]))
	if err != nil {
		return err
	}
	c.geom, c.team, c.scr = g, n.Workers, convScratchOf(n)
	K := g.depth()
	c.fg.lo, c.fg.hi = kernel.ActivationRangeFloat(c.Params.Activation)
	c.fg.N, c.fg.K = outC, K
	if filter.Const {
		c.fg.shareWeightsKN(n, filter.Float32s(), outC, K)
	} else {
		c.fg.reserve(outC, K)
	}
	c.fg.setBias(nil) // sizes the bias; a constant one is set now, another in Eval
	if bias != nil && bias.Const {
		c.fg.setBias(bias.Float32s())
	}
	threads := max(n.Threads, 1)
	kern := c.fg.kernels()
	c.scr.f = growWork(c.scr.f, threads)
	c.scr.col = growWork(c.scr.col, threads)
	for i := range threads {
		c.scr.f[i].ensure(K, kern)
		if !g.direct {
			if need := fgemmRowBlock(K, kern.MR) * K; len(c.scr.col[i]) < need {
				c.scr.col[i] = make([]float32, need)
			}
		}
	}
	out.Shape = append(out.Shape[:0], g.batches, g.out[0], g.out[1], g.out[2], outC)
	return nil
}

// Eval implements Op.
func (c *Conv3D) Eval(n *kernel.Node) error {
	in, filter, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	if !filter.Const {
		c.fg.setWeightsKN(filter.Float32s(), c.fg.N, c.fg.K)
	}
	if bias != nil && !bias.Const {
		c.fg.setBias(bias.Float32s())
	}
	threads, M := max(n.Threads, 1), c.geom.rows()
	if threads == 1 || M <= c.fg.kernels().MR {
		c.rows(in.Float32s(), out.Float32s(), 0, M, 0)
		return nil
	}
	c.loop = conv3dLoop{c: c, in: in.Float32s(), out: out.Float32s()}
	c.team.Run(M, threads, c.fg.kernels().MR, &c.loop)
	c.loop = conv3dLoop{} // holds no tensor past the Eval
	return nil
}

// rows computes output pixels [lo, hi) on worker w's scratch: a block of
// im2col rows at a time (the input's own rows when the geometry is
// direct), each block one GEMM.
func (c *Conv3D) rows(in, out []float32, lo, hi, w int) {
	K, N := c.fg.K, c.fg.N
	ws := &c.scr.f[w]
	rb := fgemmRowBlock(K, c.fg.kernels().MR)
	for p := lo; p < hi; p += rb {
		m := min(rb, hi-p)
		var src []float32
		if c.geom.direct {
			src = in[p*K : (p+m)*K]
		} else {
			src = c.scr.col[w][:m*K]
			c.geom.im2col(in, p, m, src)
		}
		block := fcGeom(m, K)
		fgemmRun(&c.fg, &block, src, out[p*N:(p+m)*N], 0, m, 0, N, ws)
	}
}
