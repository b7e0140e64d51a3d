package conv

import (
	"fmt"
	"unsafe"

	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// FullyConnectedParams are FULLY_CONNECTED's options.
type FullyConnectedParams struct {
	Activation               schema.ActivationFunctionType
	WeightsFormat            schema.FullyConnectedOptionsWeightsFormat
	KeepNumDims              bool
	AsymmetricQuantizeInputs bool
}

// parseFullyConnectedParams reads FullyConnectedOptions (zeroes when op is
// nil) and rejects fused activations and weight formats the kernel does not
// handle.
func parseFullyConnectedParams(op *schema.Operator) (FullyConnectedParams, error) {
	const name = "FULLY_CONNECTED"
	var p FullyConnectedParams
	tbl, ok, err := kernel.StrictOptions(op, name, schema.BuiltinOptionsFullyConnectedOptions)
	if err != nil {
		return p, err
	}
	if ok {
		var o schema.FullyConnectedOptions
		o.Init(tbl.Bytes, tbl.Pos)
		p.Activation = o.FusedActivationFunction()
		p.WeightsFormat = o.WeightsFormat()
		p.KeepNumDims = o.KeepNumDims()
		p.AsymmetricQuantizeInputs = o.AsymmetricQuantizeInputs()
	}
	if err := checkFusedActivation(name, p.Activation); err != nil {
		return p, err
	}
	switch p.WeightsFormat {
	case schema.FullyConnectedOptionsWeightsFormatDEFAULT, schema.FullyConnectedOptionsWeightsFormatSHUFFLED4x16INT8:
		return p, nil
	}
	return p, kernel.Unsupported("%s: weights format %d", name, p.WeightsFormat)
}

func newFullyConnected(info kernel.OpInfo) (kernel.Op, error) {
	p, err := parseFullyConnectedParams(info.Operator)
	if err != nil {
		return nil, err
	}
	return &FullyConnected{Params: p}, nil
}

// FullyConnected is the FULLY_CONNECTED kernel: inputs (input, weights
// [units][depth], optional bias), output. The input is read as
// [batches][depth] with batches = elements/depth, as TFLite does.
type FullyConnected struct {
	Params FullyConnectedParams
	// ExactClamp clamps the float output as a standalone RELU or RELU6
	// fused into the op does (core's activation fusion).
	kernel.ExactClamp

	kind  fcKind
	geom  convGeom
	units int
	depth int
	gemmState
	ref16   ref16Conv
	hybrid  hybridConv
	shuffle []byte // SHUFFLED4x16INT8 weights, unshuffled to [units][depth]
}

type fcKind int

const (
	fcFloat fcKind = iota
	fcUint8
	fcInt8
	fcUint8ToInt16
	fcInt16
	fcHybrid
	fcShuffled
)

// Prepare implements Op.
func (f *FullyConnected) Prepare(n *kernel.Node) error {
	const op = "FULLY_CONNECTED"
	in, filter, bias, out, err := convNode(n, op, f.Params.Activation, true)
	if err != nil {
		return err
	}
	batches, err := f.setSizes(op, in, filter)
	if err != nil {
		return err
	}
	f.team, f.scr = n.Workers, convScratchOf(n)
	if err := f.setKind(op, in, filter, out); err != nil {
		return err
	}
	if err := checkConvBias(op, f.floatOut(), in, bias, f.units, true); err != nil {
		return err
	}
	if err := f.prepareKind(n, op, in, filter, bias, out, batches); err != nil {
		return err
	}
	return f.setOutputShapes(op, n, in, batches)
}

// setSizes reads units and depth from the 2-D weights and returns the
// number of input rows (batches) of depth values.
func (f *FullyConnected) setSizes(op string, in, filter *tensor.Tensor) (batches int, err error) {
	if len(filter.Shape) != 2 || filter.Shape[1] <= 0 {
		return 0, fmt.Errorf("%s: weights %v must be 2-D with a positive depth", op, filter.Shape)
	}
	units, depth := filter.Shape[0], filter.Shape[1]
	total := in.NumElements()
	if total%depth != 0 {
		return 0, fmt.Errorf("%s: input %v does not divide into rows of %d", op, in.Shape, depth)
	}
	batches = total / depth
	f.units, f.depth = units, depth
	f.geom = fcGeom(batches, depth)
	return batches, nil
}

// setKind picks the kernel from the input, weight and output types and the
// weights format.
func (f *FullyConnected) setKind(op string, in, filter, out *tensor.Tensor) error {
	quantW := filter.Type == tensor.Uint8 || filter.Type == tensor.Int8
	shuffled := quantW && f.Params.WeightsFormat == schema.FullyConnectedOptionsWeightsFormatSHUFFLED4x16INT8
	switch {
	case shuffled:
		if in.Type != tensor.Uint8 || filter.Type != tensor.Uint8 || out.Type != tensor.Int16 {
			return fmt.Errorf("%s: shuffled weights need UINT8 input and weights and INT16 output, got %s, %s, %s",
				op, in.Type, filter.Type, out.Type)
		}
		if f.units%4 != 0 || f.depth%16 != 0 {
			return fmt.Errorf("%s: shuffled weights %v need units%%4 == 0 and depth%%16 == 0", op, filter.Shape)
		}
		f.kind = fcShuffled
	case in.Type == tensor.Float32 && filter.Type == tensor.Float32:
		f.kind = fcFloat
	case in.Type == tensor.Float32 && filter.Type == tensor.Int8:
		f.kind = fcHybrid
	case in.Type == tensor.Uint8 && filter.Type == tensor.Uint8 && out.Type == tensor.Uint8:
		f.kind = fcUint8
	case in.Type == tensor.Uint8 && filter.Type == tensor.Uint8 && out.Type == tensor.Int16:
		f.kind = fcUint8ToInt16
	case in.Type == tensor.Int8 && filter.Type == tensor.Int8 && out.Type == tensor.Int8:
		f.kind = fcInt8
	case in.Type == tensor.Int16 && filter.Type == tensor.Int8 && out.Type == tensor.Int16:
		f.kind = fcInt16
	default:
		return kernel.Unsupported("%s: input %s, weights %s, output %s", op, in.Type, filter.Type, out.Type)
	}
	if f.floatOut() && out.Type != tensor.Float32 {
		return fmt.Errorf("%s: output type %s, want FLOAT32", op, out.Type)
	}
	return nil
}

// floatOut reports whether the kernel's output is FLOAT32.
func (f *FullyConnected) floatOut() bool { return f.kind == fcFloat || f.kind == fcHybrid }

// prepareKind precomputes what the chosen kernel needs: packed weights
// (constant ones from n's store), quantization and scratch.
func (f *FullyConnected) prepareKind(n *kernel.Node, op string, in, filter, bias, out *tensor.Tensor, batches int) error {
	units, depth, threads := f.units, f.depth, max(n.Threads, 1)
	switch f.kind {
	case fcFloat:
		return f.prepareFloat(n, f.Params.Activation, filter, bias, units, depth, threads)
	case fcHybrid:
		if err := f.hybrid.prepare(op, in, filter, f.Params.Activation, units, depth, batches, 0, threads); err != nil {
			return err
		}
		if f.hybrid.perChannel {
			return kernel.Unsupported("%s: hybrid weights with per-channel scales", op)
		}
		if filter.Const {
			f.hybrid.setWeights(filter.Int8s(), units, depth)
		}
		return nil
	default:
		return f.prepareQuant(n, op, in, filter, bias, out)
	}
}

// setOutputShapes sizes the output ([batches, units], or the input's shape
// with units last under keep_num_dims) and the shuffled kernel's
// workspace output when the model has one.
func (f *FullyConnected) setOutputShapes(op string, n *kernel.Node, in *tensor.Tensor, batches int) error {
	out := n.Outputs[0]
	if f.Params.KeepNumDims {
		if len(in.Shape) == 0 || in.Shape[len(in.Shape)-1] != f.depth {
			return fmt.Errorf("%s: keep_num_dims needs input %v to end in %d", op, in.Shape, f.depth)
		}
		out.Shape = append(append(out.Shape[:0], in.Shape[:len(in.Shape)-1]...), f.units)
	} else {
		out.Shape = append(out.Shape[:0], batches, f.units)
	}
	if len(n.Outputs) == 2 && n.Outputs[1] != nil {
		// The shuffled kernel's input workspace: we do not need it, but the
		// model declares it, so give it its TFLite shape.
		n.Outputs[1].Shape = append(n.Outputs[1].Shape[:0], batches, f.depth)
	}
	return nil
}

func (f *FullyConnected) prepareQuant(n *kernel.Node, op string, in, filter, bias, out *tensor.Tensor) error {
	threads := max(n.Threads, 1)
	fq, err := quantOf(op, "weights", filter)
	if err != nil {
		return err
	}
	for _, s := range fq.Scale {
		if s != fq.Scale[0] {
			return kernel.Unsupported("%s: per-channel quantized weights", op)
		}
	}
	if _, err := quantOf(op, "input", in); err != nil {
		return err
	}
	if _, err := quantOf(op, "output", out); err != nil {
		return err
	}
	rq := &f.qg.rq
	if f.kind == fcInt16 {
		rq = &f.ref16.rq
	}
	rq.resize(f.units)
	if err := rq.setLegacy(op, in, filter, bias, out); err != nil {
		return err
	}
	if err := rq.setOutput(op, f.Params.Activation, out); err != nil {
		return err
	}
	f.xzp = in.ZeroPoint()

	switch f.kind {
	case fcInt16:
		if in.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
			return fmt.Errorf("%s: INT16 input and output need zero point 0", op)
		}
		f.ref16.prepare(f.units, f.depth)
		return nil
	case fcShuffled:
		// The kernel reads weights and inputs as int8 (value - 128) and
		// adds no output offset.
		f.qg.rq.zp = 0
		f.xzp = 128
		if cap(f.shuffle) < f.units*f.depth {
			f.shuffle = make([]byte, f.units*f.depth)
		}
		f.shuffle = f.shuffle[:f.units*f.depth]
	}
	f.qg.ruy = f.kind == fcUint8 || f.kind == fcInt8 || f.kind == fcUint8ToInt16
	f.qg.kern = q8.Portable
	if f.kind == fcUint8 || f.kind == fcInt8 {
		f.qg.kern = q8.Best()
	}
	f.qg.N, f.qg.K = f.units, f.depth
	if filter.Const {
		key := qgemmKey{data: unsafe.SliceData(filter.Data), size: len(filter.Data), shuffled: f.kind == fcShuffled,
			signed: f.kind == fcInt8, kern: f.qg.kern, wzp: filter.ZeroPoint(), N: f.units, K: f.depth}
		f.qg.shareWeights(n, key, func(g *qGemm) { f.packQuant(g, filter, make([]byte, len(f.shuffle))) })
		f.shareQuantBias(n, key, newRequantKey(in, filter, bias, out, f.Params.Activation), bias, f.kind != fcInt8)
	}
	if f.kind == fcUint8 || f.kind == fcInt8 {
		f.growQuantWork(f.kind == fcUint8, f.depth, threads)
	}
	return nil
}

// setQuantWeights packs weights computed at run time into the layer's own
// GEMM.
func (f *FullyConnected) setQuantWeights(filter *tensor.Tensor) {
	f.packQuant(&f.qg, filter, f.shuffle)
}

// packQuant packs the 8-bit weights into g; the shuffled format is
// unshuffled through the scratch shuffle first.
func (f *FullyConnected) packQuant(g *qGemm, filter *tensor.Tensor, shuffle []byte) {
	if f.kind == fcShuffled {
		// Blocks of 4 units x 16 depth values, stored as int8(w ^ 0x80).
		src := filter.Data
		i := 0
		for c := 0; c < f.units; c += 4 {
			for d := 0; d < f.depth; d += 16 {
				for r := range 4 {
					for j := range 16 {
						shuffle[(c+r)*f.depth+d+j] = src[i]
						i++
					}
				}
			}
		}
		g.setWeights(shuffle, true, 0, f.units, f.depth)
		return
	}
	g.setWeights(filter.Data, f.kind == fcInt8, filter.ZeroPoint(), f.units, f.depth)
}

// Eval implements Op.
func (f *FullyConnected) Eval(n *kernel.Node) error {
	in, filter, bias, out := n.Input(0), n.Input(1), n.Input(2), n.Outputs[0]
	threads := max(n.Threads, 1)
	g := &f.geom
	switch f.kind {
	case fcFloat:
		f.fg.exact = f.ExactClamp // the GEMM clamps each block of rows
		f.evalFloat(g, in, filter, bias, out, threads)
		return nil
	case fcHybrid:
		if err := f.evalHybrid(in, filter, bias, out); err != nil {
			return err
		}
		clampExactly(&f.ExactClamp, out)
		return nil
	case fcInt16:
		f.ref16.convZP(g, in.Int16s(), filter.Int8s(), filter.ZeroPoint(), bias, out.Int16s(), threads)
		return nil
	}
	if !filter.Const {
		f.setQuantWeights(filter)
	}
	f.refreshQuantBias(filter, bias, f.kind != fcInt8)
	switch f.kind {
	case fcUint8, fcInt8:
		f.evalQuant(g, in, out, f.kind == fcUint8, threads)
	case fcUint8ToInt16, fcShuffled:
		f.evalToInt16(in.Uint8s(), out.Int16s())
	}
	return nil
}

// evalToInt16 is the UINT8 -> INT16 kernel (plain and shuffled weights):
// exact int32 sums, TFLite's MultiplyByQuantizedMultiplier, clamp.
func (f *FullyConnected) evalToInt16(in []uint8, out []int16) {
	K, N := f.depth, f.units
	g := &f.qg
	for b := range f.geom.batches {
		row := in[b*K : b*K+K]
		o := out[b*N : b*N+N]
		for c := range N {
			acc := qdot1(row, g.w16[c*K:c*K+K])
			o[c] = int16(g.requant(acc, c))
		}
	}
}

// evalHybrid is TFLite's hybrid FULLY_CONNECTED: output = bias +
// float(dot(quantized input row, weights)) * input_scale*weights_scale.
func (f *FullyConnected) evalHybrid(in, filter, bias, out *tensor.Tensor) error {
	h := &f.hybrid
	K, N := f.depth, f.units
	if !filter.Const || len(h.w16) != N*K {
		h.setWeights(filter.Int8s(), N, K)
	}
	x := in.Float32s()
	o := out.Float32s()
	var bf []float32
	if bias != nil {
		bf = bias.Float32s()
	}
	for b := range f.geom.batches {
		v := x[b*K : b*K+K]
		q := h.qin[b*K : b*K+K]
		var zp int32
		var sf float32
		if f.Params.AsymmetricQuantizeInputs {
			sf, zp = kernel.AsymmetricQuantize(v, q)
		} else {
			sf = kernel.SymmetricQuantize(v, q)
		}
		sf *= h.scales[0]
		ob := o[b*N : b*N+N]
		for c := range N {
			dot := qdot1(q, h.w16[c*K:c*K+K]) - h.rowSums[c]*zp
			r := float32(0)
			if bf != nil {
				r = bf[c]
			}
			r += float32(dot) * sf
			ob[c] = kernel.ClampF32(r, h.lo, h.hi)
		}
	}
	return nil
}
