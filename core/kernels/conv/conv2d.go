package conv

import (
	"fmt"
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// convOps returns the registrations of this op family: CONV_2D,
// DEPTHWISE_CONV_2D and FULLY_CONNECTED with the version ranges of TFLite
// 2.9's builtin op resolver.
func convOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCONV_2D, Versions: tensor.VersionRange{Min: 1, Max: 5}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newConv2D},
		{Code: schema.BuiltinOperatorDEPTHWISE_CONV_2D, Versions: tensor.VersionRange{Min: 1, Max: 6}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newDepthwiseConv2D},
		{Code: schema.BuiltinOperatorFULLY_CONNECTED, Versions: tensor.VersionRange{Min: 1, Max: 9}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, New: newFullyConnected},
	}
}

// Conv2DParams are CONV_2D's options.
type Conv2DParams struct {
	Padding              schema.Padding
	StrideW, StrideH     int
	DilationW, DilationH int
	Activation           schema.ActivationFunctionType
}

// parseConv2DParams reads Conv2DOptions (schema defaults when op is nil)
// and rejects fused activations the kernel does not apply.
func parseConv2DParams(op *schema.Operator) (Conv2DParams, error) {
	const name = "CONV_2D"
	p := Conv2DParams{Padding: schema.PaddingSAME, DilationW: 1, DilationH: 1}
	tbl, ok, err := kernel.StrictOptions(op, name, schema.BuiltinOptionsConv2DOptions)
	if err != nil {
		return p, err
	}
	if ok {
		var o schema.Conv2DOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p.Padding = o.Padding()
		p.StrideW, p.StrideH = int(o.StrideW()), int(o.StrideH())
		p.DilationW, p.DilationH = int(o.DilationWFactor()), int(o.DilationHFactor())
		p.Activation = o.FusedActivationFunction()
	}
	return p, checkFusedActivation(name, p.Activation)
}

func newConv2D(info kernel.OpInfo) (kernel.Op, error) {
	p, err := parseConv2DParams(info.Operator)
	if err != nil {
		return nil, err
	}
	return &Conv2D{Params: p}, nil
}

// Conv2D is the CONV_2D kernel: inputs (input NHWC, filter OHWI, optional
// bias), one output. It computes the convolution as a GEMM over im2col rows
// (the input itself for 1x1 stride-1 filters).
type Conv2D struct {
	Params Conv2DParams
	// ExactClamp clamps the float output as a standalone RELU or RELU6
	// fused into the op does (core's activation fusion).
	kernel.ExactClamp

	geom convGeom
	kind convKind
	outC int
	gemmState
	planar planarConv
	hybrid hybridConv
	ref16  ref16Conv
}

// convKind selects the arithmetic of a conv-like kernel.
type convKind int

const (
	kindFloat convKind = iota
	kindUint8
	kindInt8
	kindInt16
	kindHybrid
)

// convNode checks the fused activation and the arity of a CONV_2D,
// DEPTHWISE_CONV_2D or FULLY_CONNECTED node (fc: one or two outputs, and the
// filter called weights) and returns its input, filter, optional bias and
// output.
func convNode(n *kernel.Node, op string, act schema.ActivationFunctionType, fc bool) (in, filter, bias, out *tensor.Tensor, err error) {
	if err := checkFusedActivation(op, act); err != nil {
		return nil, nil, nil, nil, err
	}
	maxOut, wantOut, filterName := 1, "1", "filter"
	if fc {
		maxOut, wantOut, filterName = 2, "1-2", "weights"
	}
	if len(n.Inputs) < 2 || len(n.Inputs) > 3 || len(n.Outputs) < 1 || len(n.Outputs) > maxOut {
		return nil, nil, nil, nil, fmt.Errorf("%s: got %d inputs and %d outputs, want 2-3 and %s", op, len(n.Inputs), len(n.Outputs), wantOut)
	}
	in, filter, bias, out = n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	if in == nil || filter == nil || out == nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: missing input, %s or output", op, filterName)
	}
	return in, filter, bias, out, nil
}

// windowNode is convNode for CONV_2D and DEPTHWISE_CONV_2D, whose input and
// filter must both be 4-D.
func windowNode(n *kernel.Node, op string, act schema.ActivationFunctionType) (in, filter, bias, out *tensor.Tensor, err error) {
	in, filter, bias, out, err = convNode(n, op, act, false)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if len(in.Shape) != 4 || len(filter.Shape) != 4 {
		return nil, nil, nil, nil, fmt.Errorf("%s: input %v and filter %v must both be 4-D", op, in.Shape, filter.Shape)
	}
	return in, filter, bias, out, nil
}

// windowKind picks the arithmetic of CONV_2D and DEPTHWISE_CONV_2D from the
// input and filter types and checks that the output has the input's type.
// uint8Hybrid says whether a FLOAT32 input with a UINT8 filter is taken as
// hybrid (CONV_2D, whose hybrid set-up then reports it) rather than as an
// unsupported pair (DEPTHWISE_CONV_2D).
func windowKind(op string, in, filter, out *tensor.Tensor, uint8Hybrid bool) (convKind, error) {
	var k convKind
	switch {
	case in.Type == tensor.Float32 && filter.Type == tensor.Float32:
		k = kindFloat
	case in.Type == tensor.Float32 && (filter.Type == tensor.Int8 || uint8Hybrid && filter.Type == tensor.Uint8):
		k = kindHybrid
	case in.Type == tensor.Uint8 && filter.Type == tensor.Uint8:
		k = kindUint8
	case in.Type == tensor.Int8 && filter.Type == tensor.Int8:
		k = kindInt8
	case in.Type == tensor.Int16 && filter.Type == tensor.Int8:
		k = kindInt16
	default:
		return k, kernel.Unsupported("%s: input %s with filter %s", op, in.Type, filter.Type)
	}
	if out.Type != in.Type {
		return k, fmt.Errorf("%s: output type %s, want %s", op, out.Type, in.Type)
	}
	return k, nil
}

// checkConvBias checks the optional bias of a conv-family op with n output
// channels: FLOAT32 for float and hybrid arithmetic (floatBias), otherwise
// as checkQuantBias does.
func checkConvBias(op string, floatBias bool, in, bias *tensor.Tensor, n int, allowI32For16 bool) error {
	if !floatBias {
		return checkQuantBias(op, in, bias, n, allowI32For16)
	}
	if bias != nil && (bias.Type != tensor.Float32 || bias.NumElements() != n) {
		return fmt.Errorf("%s: bias %s%v, want FLOAT32 with %d elements", op, bias.Type, bias.Shape, n)
	}
	return nil
}

// gemmState is what CONV_2D and FULLY_CONNECTED share for their GEMM-based
// float and 8-bit arithmetic: the prepared weights, the input zero point and
// each thread's scratch.
type gemmState struct {
	fg   fGemm
	qg   qGemm
	scr  *convScratch
	xzp  int32
	team *kernel.Workers
	// The loops' bodies, kept here so that splitting allocates nothing.
	fLoop   fgemmLoop
	qU8Loop qgemmLoop[uint8]
	qI8Loop qgemmLoop[int8]
}

// prepareFloat sets up the float GEMM of N channels over depth K: the
// activation clamp, the weights and bias when they are constant, and the
// scratch of threads workers.
func (s *gemmState) prepareFloat(n *kernel.Node, act schema.ActivationFunctionType, filter, bias *tensor.Tensor, N, K, threads int) error {
	s.fg.lo, s.fg.hi = kernel.ActivationRangeFloat(act)
	s.fg.N, s.fg.K = N, K
	s.fg.rowMajor = true
	if filter.Const {
		s.fg.shareWeights(n, filter.Float32s(), N, K)
	}
	if bias == nil {
		s.fg.setBias(nil)
	} else if bias.Const {
		s.fg.setBias(bias.Float32s())
	}
	s.scr.f = growWork(s.scr.f, threads)
	for i := range s.scr.f {
		s.scr.f[i].ensure(K, s.fg.kernels())
	}
	return nil
}

// evalFloat runs the float GEMM, first taking in weights and bias that are
// not constant.
func (s *gemmState) evalFloat(g *convGeom, in, filter, bias, out *tensor.Tensor, threads int) {
	if !filter.Const {
		s.fg.setWeights(filter.Float32s(), s.fg.N, s.fg.K)
	}
	if bias != nil && !bias.Const {
		s.fg.setBias(bias.Float32s())
	}
	s.scr.f = growWork(s.scr.f, threads)
	runFGemm(&s.fg, g, in.Float32s(), out.Float32s(), s.team, threads, s.scr.f, &s.fLoop)
}

// gemmBiasKey names a quantized GEMM's constant terms in the model's
// store: its weights' key, the bias and the quantization they come from.
type gemmBiasKey struct {
	qgemmKey
	requantKey
	xzp          int32
	unsignedRows bool
	kern         q8.Kernel // how the kernel reads the rows changes the constants
}

// shareQuantBias gives the 8-bit GEMM, whose constant weights (key) are
// set, its constant terms when the bias is constant too: from the model's
// store (Node.Derived), computed once for every interpreter of the model.
// unsignedRows says whether the rows are UINT8.
func (s *gemmState) shareQuantBias(n *kernel.Node, key qgemmKey, rk requantKey, bias *tensor.Tensor, unsignedRows bool) {
	if bias != nil && !bias.Const {
		return
	}
	src := n.Derived(gemmBiasKey{key, rk, s.xzp, unsignedRows, s.qg.kern}, func() any {
		g := s.qg // reads the shared weights and this node's requantization
		g.cst, g.qp, g.v.qp = nil, nil, nil
		g.setBias(int32sOrNil(bias), s.xzp, unsignedRows)
		return &g
	}).(*qGemm)
	// The layout v is all derived from the model: its weights are these
	// interpreters' already, and setBias also sets how it reads the rows.
	s.qg.shift, s.qg.cst, s.qg.qp, s.qg.v = src.shift, src.cst, src.qp, src.v
}

// refreshQuantBias recomputes the constant terms in Eval when the weights
// (just set again) or the bias are not constant.
func (s *gemmState) refreshQuantBias(filter, bias *tensor.Tensor, unsignedRows bool) {
	if !filter.Const || (bias != nil && !bias.Const) {
		s.qg.setBias(int32sOrNil(bias), s.xzp, unsignedRows)
	}
}

// growQuantWork gives threads workers scratch for an 8-bit GEMM of depth K
// with UINT8 (unsigned) or INT8 rows.
func (s *gemmState) growQuantWork(unsigned bool, K, threads int) {
	if unsigned {
		s.scr.qU8 = growWork(s.scr.qU8, threads)
		for i := range s.scr.qU8 {
			s.scr.qU8[i].ensure(K, s.qg.kern)
		}
		return
	}
	s.scr.qI8 = growWork(s.scr.qI8, threads)
	for i := range s.scr.qI8 {
		s.scr.qI8[i].ensure(K, s.qg.kern)
	}
}

// evalQuant runs the 8-bit GEMM on UINT8 (unsigned) or INT8 tensors.
func (s *gemmState) evalQuant(g *convGeom, in, out *tensor.Tensor, unsigned bool, threads int) {
	if unsigned {
		s.scr.qU8 = growWork(s.scr.qU8, threads)
		runQGemm(&s.qg, g, in.Uint8s(), out.Uint8s(), s.xzp, s.team, threads, s.scr.qU8, &s.qU8Loop)
	} else {
		s.scr.qI8 = growWork(s.scr.qI8, threads)
		runQGemm(&s.qg, g, in.Int8s(), out.Int8s(), s.xzp, s.team, threads, s.scr.qI8, &s.qI8Loop)
	}
}

// Prepare implements Op.
func (c *Conv2D) Prepare(n *kernel.Node) error {
	const op = "CONV_2D"
	p := c.Params
	in, filter, bias, out, err := windowNode(n, op, p.Activation)
	if err != nil {
		return err
	}
	// TFLite 2.9 has no grouped convolution: the depths must match.
	if in.Shape[3] != filter.Shape[3] {
		return fmt.Errorf("%s: input depth %d differs from filter depth %d", op, in.Shape[3], filter.Shape[3])
	}
	outC := filter.Shape[0]
	g, err := windowGeom(op, p.Padding, in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3],
		filter.Shape[1], filter.Shape[2], p.StrideH, p.StrideW, p.DilationH, p.DilationW)
	if err != nil {
		return err
	}
	c.geom, c.outC, c.team, c.scr = g, outC, n.Workers, convScratchOf(n)
	c.ref16.team, c.hybrid.team = n.Workers, n.Workers
	K := g.depth()

	if c.kind, err = windowKind(op, in, filter, out, true); err != nil {
		return err
	}
	if err := checkConvBias(op, c.kind == kindFloat || c.kind == kindHybrid, in, bias, outC, true); err != nil {
		return err
	}
	threads := max(n.Threads, 1)

	switch c.kind {
	case kindFloat:
		if err := c.prepareFloat(n, p.Activation, filter, bias, outC, K, threads); err != nil {
			return err
		}
		c.planar.on = usePlanar(&c.geom, outC)
		if c.planar.on {
			c.planar.prepare(&c.geom, c.scr, threads)
			c.planar.constant = filter.Const && (bias == nil || bias.Const)
			if c.planar.constant {
				c.planar.setWeights(filter.Float32s(), float32sOrNil(bias), K)
			}
		}
	case kindUint8, kindInt8:
		if err := convQuantParams(op, in, filter, bias, out, p.Activation, outC, 0, &c.qg.rq); err != nil {
			return err
		}
		c.qg.ruy = true
		c.qg.kern = q8.Best()
		c.qg.N, c.qg.K = outC, K
		c.xzp = in.ZeroPoint()
		if filter.Const {
			key := qgemmKey{data: unsafe.SliceData(filter.Data), size: len(filter.Data), signed: c.kind == kindInt8,
				kern: c.qg.kern, wzp: c.filterZP(filter), N: outC, K: K}
			c.qg.shareWeights(n, key, func(g *qGemm) { c.packQuant(g, filter) })
			c.shareQuantBias(n, key, newRequantKey(in, filter, bias, out, p.Activation), bias, c.kind == kindUint8)
		}
		c.growQuantWork(c.kind == kindUint8, K, threads)
	case kindInt16:
		if err := c.ref16.prepareWindow(op, in, filter, bias, out, p.Activation, outC, K, 0); err != nil {
			return err
		}
	case kindHybrid:
		if err := c.hybrid.prepare(op, in, filter, p.Activation, outC, K, g.batches, 0, threads); err != nil {
			return err
		}
	}

	out.Shape = append(out.Shape[:0], g.batches, g.outH, g.outW, outC)
	return nil
}

// setQuantWeights packs the 8-bit filter of a quantized conv into the
// conv's own GEMM (a filter computed at run time).
func (c *Conv2D) setQuantWeights(filter *tensor.Tensor) { c.packQuant(&c.qg, filter) }

// packQuant packs the 8-bit filter into g.
func (c *Conv2D) packQuant(g *qGemm, filter *tensor.Tensor) {
	g.setWeights(filter.Data, c.kind == kindInt8, c.filterZP(filter), c.outC, c.geom.depth())
}

// filterZP is the filter's zero point as the kernel uses it: INT8 filters
// are symmetric in TFLite's per-channel kernels, their zero point ignored.
func (c *Conv2D) filterZP(filter *tensor.Tensor) int32 {
	if c.kind == kindUint8 {
		return filter.ZeroPoint()
	}
	return 0
}

// Eval implements Op.
func (c *Conv2D) Eval(n *kernel.Node) error {
	in, filter, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	threads := max(n.Threads, 1)
	g := &c.geom
	switch c.kind {
	case kindFloat:
		if !c.planar.on {
			c.fg.exact = c.ExactClamp // the GEMM clamps each block of rows
			c.evalFloat(g, in, filter, bias, out, threads)
			break
		}
		if !c.planar.constant {
			c.planar.setWeights(filter.Float32s(), float32sOrNil(bias), g.depth())
		}
		c.planar.run(g, c.fg.kernels(), in.Float32s(), out.Float32s(), c.scr.planes, c.fg.lo, c.fg.hi, c.team, threads)
		clampExactly(&c.ExactClamp, out)
	case kindUint8, kindInt8:
		if !filter.Const {
			c.setQuantWeights(filter)
		}
		c.refreshQuantBias(filter, bias, c.kind == kindUint8)
		c.evalQuant(g, in, out, c.kind == kindUint8, threads)
	case kindInt16:
		c.ref16.conv(g, in.Int16s(), filter.Int8s(), bias, out.Int16s(), threads)
	case kindHybrid:
		if err := c.hybrid.evalConv(g, in, filter, bias, out, threads); err != nil {
			return err
		}
		clampExactly(&c.ExactClamp, out)
	}
	return nil
}

// float32sOrNil is t's floats, or nil when t is absent.
func float32sOrNil(t *tensor.Tensor) []float32 {
	if t == nil {
		return nil
	}
	return t.Float32s()
}

// int32sOrNil returns the INT32 view of t, or nil when t is absent.
func int32sOrNil(t *tensor.Tensor) []int32 {
	if t == nil {
		return nil
	}
	return t.Int32s()
}

// growWork returns ws with at least n workers' scratch.
func growWork[W any](ws []W, n int) []W {
	if len(ws) >= n {
		return ws
	}
	return append(ws, make([]W, n-len(ws))...)
}

// qgemmLoop is runQGemm's loop body: chunks of rows, or of channels.
type qgemmLoop[T int8 | uint8] struct {
	g       *qGemm
	geom    *convGeom
	in, out []T
	xzp     int32
	ws      []qgemmWork[T]
	byChan  bool
}

func (l *qgemmLoop[T]) Chunk(w, lo, hi int) {
	if l.byChan {
		qgemmRun(l.g, l.geom, l.in, l.out, l.xzp, 0, l.geom.rows(), lo, hi, &l.ws[w])
		return
	}
	qgemmRun(l.g, l.geom, l.in, l.out, l.xzp, lo, hi, 0, l.g.N, &l.ws[w])
}

// runQGemm runs a quantized GEMM over all rows and channels, split across
// threads by rows (or by channels when there are few rows), with loop as
// the split's body.
func runQGemm[T int8 | uint8](g *qGemm, geom *convGeom, in, out []T, xzp int32, team *kernel.Workers, threads int, ws []qgemmWork[T], loop *qgemmLoop[T]) {
	M, N := geom.rows(), g.N
	for i := range ws[:threads] {
		ws[i].ensure(g.K, g.kern)
	}
	if threads == 1 {
		qgemmRun(g, geom, in, out, xzp, 0, M, 0, N, &ws[0])
		return
	}
	*loop = qgemmLoop[T]{g: g, geom: geom, in: in, out: out, xzp: xzp, ws: ws, byChan: !(M >= 8*threads || N < 12)}
	if loop.byChan {
		team.Run(N, threads, 6, loop)
	} else {
		team.Run(M, threads, 4, loop)
	}
	*loop = qgemmLoop[T]{} // holds no tensor past the Eval
}

// runFGemm is runQGemm's float counterpart: split by whole tiles of rows,
// or by weight panels when that shares the work out much more evenly (a
// 7x7 layer has 49 rows, 5 tiles of 12, but tens of panels). loop is the
// split's body.
func runFGemm(g *fGemm, geom *convGeom, in, out []float32, team *kernel.Workers, threads int, ws []fgemmWork, loop *fgemmLoop) {
	M, N := geom.rows(), g.N
	kern := g.kernels()
	for i := range ws[:threads] {
		ws[i].ensure(g.K, kern)
	}
	if threads == 1 {
		fgemmRun(g, geom, in, out, 0, M, 0, N, &ws[0])
		return
	}
	// Rows unless that is markedly uneven: the next op, usually split by
	// rows too, then finds its input in its own core's cache.
	*loop = fgemmLoop{g: g, geom: geom, in: in, out: out, ws: ws}
	if load := splitLoad(M, kern.MR, threads); load <= 1.1 || load <= splitLoad(N, f32.NR, threads) {
		team.Run(M, threads, kern.MR, loop)
	} else {
		loop.byChan = true
		team.Run(N, threads, f32.NR, loop)
	}
	*loop = fgemmLoop{}
}

// fgemmLoop is runFGemm's loop body: chunks of rows, or of channels.
type fgemmLoop struct {
	g       *fGemm
	geom    *convGeom
	in, out []float32
	ws      []fgemmWork
	byChan  bool
}

func (l *fgemmLoop) Chunk(w, lo, hi int) {
	if l.byChan {
		fgemmRun(l.g, l.geom, l.in, l.out, 0, l.geom.rows(), lo, hi, &l.ws[w])
		return
	}
	fgemmRun(l.g, l.geom, l.in, l.out, lo, hi, 0, l.g.N, &l.ws[w])
}

// splitLoad is the largest share of [0, n), cut in units of align among
// threads, over an even share: 1 when the split is perfectly even.
func splitLoad(n, align, threads int) float64 {
	units := (n + align - 1) / align
	if units == 0 {
		return 1
	}
	chunks := kernel.SplitChunks(n, threads, align)
	return float64((units+chunks-1)/chunks) * float64(threads) / float64(units)
}
