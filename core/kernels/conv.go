package kernels

import (
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/core/schema"
)

// convOps returns the registrations of this op family: CONV_2D,
// DEPTHWISE_CONV_2D and FULLY_CONNECTED with the version ranges of TFLite
// 2.9's builtin op resolver.
func convOps() []Registration {
	return []Registration{
		{Code: schema.BuiltinOperatorCONV_2D, Versions: VersionRange{1, 6}, New: newConv2D},
		{Code: schema.BuiltinOperatorDEPTHWISE_CONV_2D, Versions: VersionRange{1, 6}, New: newDepthwiseConv2D},
		{Code: schema.BuiltinOperatorFULLY_CONNECTED, Versions: VersionRange{1, 9}, New: newFullyConnected},
	}
}

// Conv2DParams are CONV_2D's options.
type Conv2DParams struct {
	Padding              schema.Padding
	StrideW, StrideH     int
	DilationW, DilationH int
	Activation           schema.ActivationFunctionType
}

// parseConv2DParams reads Conv2DOptions (schema defaults when op is nil).
func parseConv2DParams(op *schema.Operator) (Conv2DParams, error) {
	p := Conv2DParams{Padding: schema.PaddingSAME, DilationW: 1, DilationH: 1}
	if op == nil {
		return p, nil
	}
	var tbl flatbuffers.Table
	switch t := op.BuiltinOptionsType(); t {
	case schema.BuiltinOptionsNONE:
		return p, nil
	case schema.BuiltinOptionsConv2DOptions:
		if !op.BuiltinOptions(&tbl) {
			return p, nil
		}
	default:
		return p, fmt.Errorf("CONV_2D: options of type %s", schema.EnumNamesBuiltinOptions[t])
	}
	var o schema.Conv2DOptions
	o.Init(tbl.Bytes, tbl.Pos)
	p.Padding = o.Padding()
	p.StrideW, p.StrideH = int(o.StrideW()), int(o.StrideH())
	p.DilationW, p.DilationH = int(o.DilationWFactor()), int(o.DilationHFactor())
	p.Activation = o.FusedActivationFunction()
	return p, nil
}

func newConv2D(info OpInfo) (Op, error) {
	p, err := parseConv2DParams(info.Operator)
	if err != nil {
		return nil, err
	}
	if err := checkFusedActivation("CONV_2D", p.Activation); err != nil {
		return nil, err
	}
	return &Conv2D{Params: p}, nil
}

// Conv2D is the CONV_2D kernel: inputs (input NHWC, filter OHWI, optional
// bias), one output. It computes the convolution as a GEMM over im2col rows
// (the input itself for 1x1 stride-1 filters).
type Conv2D struct {
	Params Conv2DParams

	geom   convGeom
	kind   convKind
	outC   int
	fg     fGemm
	qg     qGemm
	wsF    []fgemmWork
	wsU8   []qgemmWork[uint8]
	wsI8   []qgemmWork[int8]
	xzp    int32
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

// Prepare implements Op.
func (c *Conv2D) Prepare(n *Node) error {
	const op = "CONV_2D"
	if err := checkFusedActivation(op, c.Params.Activation); err != nil {
		return err
	}
	if len(n.Inputs) < 2 || len(n.Inputs) > 3 || len(n.Outputs) != 1 {
		return fmt.Errorf("%s: got %d inputs and %d outputs, want 2-3 and 1", op, len(n.Inputs), len(n.Outputs))
	}
	in, filter, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	if in == nil || filter == nil || out == nil {
		return fmt.Errorf("%s: missing input, filter or output", op)
	}
	if len(in.Shape) != 4 || len(filter.Shape) != 4 {
		return fmt.Errorf("%s: input %v and filter %v must both be 4-D", op, in.Shape, filter.Shape)
	}
	// TFLite 2.9 has no grouped convolution: the depths must match.
	if in.Shape[3] != filter.Shape[3] {
		return fmt.Errorf("%s: input depth %d differs from filter depth %d", op, in.Shape[3], filter.Shape[3])
	}
	outC := filter.Shape[0]
	p := c.Params
	g, err := windowGeom(op, p.Padding, in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3],
		filter.Shape[1], filter.Shape[2], p.StrideH, p.StrideW, p.DilationH, p.DilationW)
	if err != nil {
		return err
	}
	c.geom, c.outC = g, outC
	K := g.depth()

	switch {
	case in.Type == Float32 && filter.Type == Float32:
		c.kind = kindFloat
	case in.Type == Float32 && (filter.Type == Int8 || filter.Type == Uint8):
		c.kind = kindHybrid
	case in.Type == Uint8 && filter.Type == Uint8:
		c.kind = kindUint8
	case in.Type == Int8 && filter.Type == Int8:
		c.kind = kindInt8
	case in.Type == Int16 && filter.Type == Int8:
		c.kind = kindInt16
	default:
		return Unsupported("%s: input %s with filter %s", op, in.Type, filter.Type)
	}
	wantOut := in.Type
	if out.Type != wantOut {
		return fmt.Errorf("%s: output type %s, want %s", op, out.Type, wantOut)
	}
	if c.kind == kindFloat || c.kind == kindHybrid {
		if bias != nil && (bias.Type != Float32 || bias.NumElements() != outC) {
			return fmt.Errorf("%s: bias %s%v, want FLOAT32 with %d elements", op, bias.Type, bias.Shape, outC)
		}
	} else if err := checkQuantBias(op, in, bias, outC, true); err != nil {
		return err
	}
	threads := max(n.Threads, 1)

	switch c.kind {
	case kindFloat:
		lo, hi, err := ActivationRangeFloat(p.Activation)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		c.fg.lo, c.fg.hi = lo, hi
		c.fg.N, c.fg.K = outC, K
		if filter.Const {
			c.fg.setWeights(filter.Float32s(), outC, K)
		}
		if bias == nil {
			c.fg.setBias(nil)
		} else if bias.Const {
			c.fg.setBias(bias.Float32s())
		}
		c.wsF = growWork(c.wsF, threads)
		for i := range c.wsF {
			c.wsF[i].ensure(K)
		}
	case kindUint8, kindInt8:
		if err := convQuantParams(op, in, filter, bias, out, p.Activation, outC, 0, &c.qg.rq); err != nil {
			return err
		}
		c.qg.ruy = true
		c.qg.N, c.qg.K = outC, K
		c.xzp = in.ZeroPoint()
		if filter.Const {
			c.setQuantWeights(filter)
			if bias == nil || bias.Const {
				c.qg.setBias(int32sOrNil(bias), c.xzp, c.kind == kindUint8)
			}
		}
		if c.kind == kindUint8 {
			c.wsU8 = growWork(c.wsU8, threads)
			for i := range c.wsU8 {
				c.wsU8[i].ensure(K)
			}
		} else {
			c.wsI8 = growWork(c.wsI8, threads)
			for i := range c.wsI8 {
				c.wsI8[i].ensure(K)
			}
		}
	case kindInt16:
		if in.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
			return fmt.Errorf("%s: INT16 input and output need zero point 0", op)
		}
		if err := convQuantParams(op, in, filter, bias, out, p.Activation, outC, 0, &c.ref16.rq); err != nil {
			return err
		}
		c.ref16.prepare(outC, K)
	case kindHybrid:
		if err := c.hybrid.prepare(op, in, filter, p.Activation, outC, K, g.batches, 0, threads); err != nil {
			return err
		}
	}

	out.Shape = append(out.Shape[:0], g.batches, g.outH, g.outW, outC)
	return nil
}

// setQuantWeights packs the 8-bit filter of a quantized conv. INT8 filters
// are symmetric in TFLite's per-channel kernels: their zero point is ignored.
func (c *Conv2D) setQuantWeights(filter *Tensor) {
	wzp := int32(0)
	if c.kind == kindUint8 {
		wzp = filter.ZeroPoint()
	}
	c.qg.setWeights(filter.Data, c.kind == kindInt8, wzp, c.outC, c.geom.depth())
}

// Eval implements Op.
func (c *Conv2D) Eval(n *Node) error {
	in, filter, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	threads := max(n.Threads, 1)
	g := &c.geom
	switch c.kind {
	case kindFloat:
		if !filter.Const {
			c.fg.setWeights(filter.Float32s(), c.outC, g.depth())
		}
		if bias != nil && !bias.Const {
			c.fg.setBias(bias.Float32s())
		}
		c.wsF = growWork(c.wsF, threads)
		runFGemm(&c.fg, g, in.Float32s(), out.Float32s(), threads, c.wsF)
	case kindUint8, kindInt8:
		if !filter.Const {
			c.setQuantWeights(filter)
		}
		if !filter.Const || (bias != nil && !bias.Const) {
			c.qg.setBias(int32sOrNil(bias), c.xzp, c.kind == kindUint8)
		}
		if c.kind == kindUint8 {
			c.wsU8 = growWork(c.wsU8, threads)
			runQGemm(&c.qg, g, in.Uint8s(), out.Uint8s(), c.xzp, threads, c.wsU8)
		} else {
			c.wsI8 = growWork(c.wsI8, threads)
			runQGemm(&c.qg, g, in.Int8s(), out.Int8s(), c.xzp, threads, c.wsI8)
		}
	case kindInt16:
		c.ref16.conv(g, in.Int16s(), filter.Int8s(), bias, out.Int16s(), threads)
	case kindHybrid:
		return c.hybrid.evalConv(g, in, filter, bias, out, threads)
	}
	return nil
}

// int32sOrNil returns the INT32 view of t, or nil when t is absent.
func int32sOrNil(t *Tensor) []int32 {
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

// runQGemm runs a quantized GEMM over all rows and channels, split across
// threads by rows (or by channels when there are few rows).
func runQGemm[T int8 | uint8](g *qGemm, geom *convGeom, in, out []T, xzp int32, threads int, ws []qgemmWork[T]) {
	M, N := geom.rows(), g.N
	for i := range ws[:threads] {
		ws[i].ensure(g.K)
	}
	if threads == 1 {
		qgemmRun(g, geom, in, out, xzp, 0, M, 0, N, &ws[0])
		return
	}
	if M >= 8*threads || N < 12 {
		parallelFor(M, threads, 4, func(w, lo, hi int) {
			qgemmRun(g, geom, in, out, xzp, lo, hi, 0, N, &ws[w])
		})
		return
	}
	parallelFor(N, threads, 6, func(w, lo, hi int) {
		qgemmRun(g, geom, in, out, xzp, 0, M, lo, hi, &ws[w])
	})
}

// runFGemm is runQGemm's float counterpart.
func runFGemm(g *fGemm, geom *convGeom, in, out []float32, threads int, ws []fgemmWork) {
	M, N := geom.rows(), g.N
	for i := range ws[:threads] {
		ws[i].ensure(g.K)
	}
	if threads == 1 {
		fgemmRun(g, geom, in, out, 0, M, 0, N, &ws[0])
		return
	}
	if M >= 8*threads || N < 8 {
		parallelFor(M, threads, 4, func(w, lo, hi int) {
			fgemmRun(g, geom, in, out, lo, hi, 0, N, &ws[w])
		})
		return
	}
	parallelFor(N, threads, 4, func(w, lo, hi int) {
		fgemmRun(g, geom, in, out, 0, M, lo, hi, &ws[w])
	})
}
