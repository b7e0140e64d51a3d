package core

import (
	"math"
	"slices"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Activation fusion: a standalone RELU, RELU6 or RELU_N1_TO_1 whose input
// is the output of a CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, MUL,
// AVERAGE_POOL_2D or MAX_POOL_2D that nothing else reads becomes that
// producer's fused activation, when that gives the same bytes: the
// producer's kernel is made again from its options with the activation
// set, it writes the activation's output directly, and the activation
// node never runs. Graphs converted without fused activations then run as
// fused ones. Only CPU nodes are fused: a delegate gets the model's nodes.
//
// When the bytes are the same:
//   - 8-bit tensors (INT8, UINT8): the activation's input and output have
//     the same scale and zero point, so its requantization is the identity
//     and it only clamps, to the range TFLite computes for that activation
//     at those parameters; the producer clamps its requantized result to
//     the range of its fused activation at its output's parameters, the
//     same one. Two clamps in a row are one to the narrower range.
//   - FLOAT32 RELU_N1_TO_1, but not into AVERAGE_POOL_2D: a fused clamp
//     is TFLite's ActivationFunctionWithMinMax, min(max(x, lo), hi)
//     keeping a NaN and a negative zero, which the standalone RELU_N1_TO_1
//     also keeps. AVERAGE_POOL_2D's float kernel gives a NaN another
//     payload when it clamps than when it does not.
//   - FLOAT32 RELU and RELU6 into CONV_2D, DEPTHWISE_CONV_2D,
//     FULLY_CONNECTED, ADD, SUB and MUL: the standalone ops map a NaN to 0
//     (and -0 to +0) where a fused RELU keeps them, so these do not become
//     the fused activation (the model's own fused activations keep TFLite's
//     behaviour); the producer's kernel keeps its options and clamps its
//     output, after its own activation, as the standalone op does
//     (kernel.ExactClamper). Such a producer takes no other activation
//     through its options after that.
//
// A producer with a fused activation already takes a second one when the
// two clamps compose to one of the three: the same one twice, or RELU and
// RELU6 (in either order) to RELU6.

// fusedActivation is the fused activation a standalone activation op
// equals, if it is one.
func fusedActivation(code schema.BuiltinOperator) (schema.ActivationFunctionType, bool) {
	switch code {
	case schema.BuiltinOperatorRELU:
		return schema.ActivationFunctionTypeRELU, true
	case schema.BuiltinOperatorRELU6:
		return schema.ActivationFunctionTypeRELU6, true
	case schema.BuiltinOperatorRELU_N1_TO_1:
		return schema.ActivationFunctionTypeRELU_N1_TO_1, true
	}
	return 0, false
}

// composed is the one activation that clamps as first then second do, if
// there is one.
func composed(first, second schema.ActivationFunctionType) (schema.ActivationFunctionType, bool) {
	switch {
	case first == schema.ActivationFunctionTypeNONE || first == second:
		return second, true
	case first == schema.ActivationFunctionTypeRELU && second == schema.ActivationFunctionTypeRELU6,
		first == schema.ActivationFunctionTypeRELU6 && second == schema.ActivationFunctionTypeRELU:
		return schema.ActivationFunctionTypeRELU6, true
	}
	return 0, false
}

// activationField is the fused activation of a producer's options: the
// options of the ops that take a standalone activation, nil for others.
func activationField(options any) *schema.ActivationFunctionType {
	switch o := options.(type) {
	case *schema.Conv2DOptionsT:
		return &o.FusedActivationFunction
	case *schema.DepthwiseConv2DOptionsT:
		return &o.FusedActivationFunction
	case *schema.FullyConnectedOptionsT:
		return &o.FusedActivationFunction
	case *schema.AddOptionsT:
		return &o.FusedActivationFunction
	case *schema.MulOptionsT:
		return &o.FusedActivationFunction
	case *schema.Pool2DOptionsT:
		return &o.FusedActivationFunction
	}
	return nil
}

// isProducer reports whether an activation may fuse into an op.
func isProducer(code schema.BuiltinOperator) bool {
	switch code {
	case schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D,
		schema.BuiltinOperatorFULLY_CONNECTED, schema.BuiltinOperatorADD, schema.BuiltinOperatorMUL,
		schema.BuiltinOperatorAVERAGE_POOL_2D, schema.BuiltinOperatorMAX_POOL_2D:
		return true
	}
	return false
}

// sameBytes reports whether producer clamping from (its output) to act's
// range leaves the bytes a standalone act from from to to would write:
// floats for RELU_N1_TO_1 (but AVERAGE_POOL_2D), 8-bit tensors of one
// scale and zero point.
func sameBytes(producer schema.BuiltinOperator, from, to *tensor.Tensor, act schema.ActivationFunctionType) bool {
	if from.Type != to.Type {
		return false
	}
	switch from.Type {
	case tensor.Float32:
		return act == schema.ActivationFunctionTypeRELU_N1_TO_1 && producer != schema.BuiltinOperatorAVERAGE_POOL_2D
	case tensor.Int8, tensor.Uint8:
		a, b := from.Quant, to.Quant
		return a != nil && b != nil && len(a.Scale) == 1 && len(b.Scale) == 1 &&
			len(a.ZeroPoint) == 1 && len(b.ZeroPoint) == 1 &&
			a.Scale[0] == b.Scale[0] && a.ZeroPoint[0] == b.ZeroPoint[0]
	}
	return false
}

// fuseActivations fuses every standalone activation of g that can be into
// its producer (see above), in node order, so that a chain of activations
// fuses into one producer. registry makes the producers' kernels again.
func (g *graph) fuseActivations(registry *kernel.Registry) {
	producer := make([]int, len(g.tensors)) // per tensor, the node writing it, or -1
	for i := range producer {
		producer[i] = -1
	}
	for i := range g.sg.NumOperators() {
		for _, ti := range g.sg.Operator(i).Outputs() {
			if ti >= 0 && ti < len(producer) {
				producer[ti] = i
			}
		}
	}
	for ai, a := range g.nodes {
		if a == nil || a.fusedInto != nil || len(a.kn.Inputs) != 1 || len(a.kn.Outputs) != 1 {
			continue
		}
		code := g.model.OpCodeOf(g.sg.Operator(ai)).Builtin
		act, ok := fusedActivation(code)
		if !ok || g.inPartition(ai) {
			continue
		}
		mid, out := g.sg.Operator(ai).Inputs()[0], g.sg.Operator(ai).Outputs()[0]
		if mid < 0 || out < 0 || producer[mid] < 0 {
			continue
		}
		p := g.nodes[producer[mid]]
		if p == nil || p.fusedInto != nil || g.inPartition(p.index) || len(p.kn.Outputs) != 1 ||
			p.kn.Outputs[0] != g.tensors[mid] || !g.onlyLink(mid, ai) {
			continue
		}
		pcode := g.model.OpCodeOf(g.sg.Operator(p.index)).Builtin
		var fused bool
		switch {
		case sameBytes(pcode, g.tensors[mid], g.tensors[out], act):
			fused = g.fuse(registry, p, a, act)
		case exactFloat(pcode, g.tensors[mid], g.tensors[out], code):
			fused = g.fuseExact(p, a, code)
		}
		if fused {
			producer[out] = p.index
		}
	}
}

// exactFloat reports whether a float RELU or RELU6 (code) from from to to
// may fuse into producer as its exact clamp (kernel.ExactClamper).
func exactFloat(producer schema.BuiltinOperator, from, to *tensor.Tensor, code schema.BuiltinOperator) bool {
	if from.Type != tensor.Float32 || to.Type != tensor.Float32 ||
		code != schema.BuiltinOperatorRELU && code != schema.BuiltinOperatorRELU6 {
		return false
	}
	switch producer {
	case schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D, schema.BuiltinOperatorFULLY_CONNECTED,
		schema.BuiltinOperatorADD, schema.BuiltinOperatorSUB, schema.BuiltinOperatorMUL:
		return true
	}
	return false
}

// fuseExact makes p's kernel clamp its output as a's float RELU or RELU6
// (code) does, writing a's output; a then never runs. It reports whether
// it did: p's kernel must be a kernel.ExactClamper.
func (g *graph) fuseExact(p, a *node, code schema.BuiltinOperator) bool {
	c, ok := p.op.(kernel.ExactClamper)
	if !ok {
		return false
	}
	hi := float32(math.Inf(1))
	if code == schema.BuiltinOperatorRELU6 {
		hi = 6
	}
	c.ClampExactly(0, hi)
	p.clampsExactly = true
	g.absorb(p, a)
	return true
}

// absorb makes p write a's output in a's stead: a never runs.
func (g *graph) absorb(p, a *node) {
	p.kn.Outputs = []*tensor.Tensor{a.kn.Outputs[0]}
	p.absorbed = append(p.absorbed, a.index)
	a.fusedInto = p
}

// onlyLink reports whether tensor ti, written by one node, is read by
// node reader alone and by no one else: not a graph input or output, not
// a variable, constant or dynamic tensor.
func (g *graph) onlyLink(ti, reader int) bool {
	t := g.tensors[ti]
	if t.Const || t.Variable || t.Dynamic || slices.Contains(g.inputs, ti) || slices.Contains(g.outputs, ti) {
		return false
	}
	return slices.Equal(g.readers()[ti], []int{reader})
}

// fuse makes p's kernel again with act composed onto its own activation,
// writing a's output; a then never runs. It reports whether it did.
func (g *graph) fuse(registry *kernel.Registry, p, a *node, act schema.ActivationFunctionType) bool {
	op := g.sg.Operator(p.index)
	oc := g.model.OpCodeOf(op)
	if p.clampsExactly || !isProducer(oc.Builtin) {
		return false
	}
	reg, ok := registry.Lookup(oc.Builtin, oc.Custom)
	if !ok {
		return false
	}
	table := p.table
	if table == nil {
		table = op.Table()
	}
	var ot *schema.OperatorT
	if guard(func() error { ot = table.UnPack(); return nil }) != nil || ot.BuiltinOptions == nil {
		return false
	}
	field := activationField(ot.BuiltinOptions.Value)
	if field == nil {
		return false
	}
	both, ok := composed(*field, act)
	if !ok {
		return false
	}
	*field = both
	b := flatbuffers.NewBuilder(256)
	b.Finish(ot.Pack(b))
	table = schema.GetRootAsOperator(b.FinishedBytes(), 0)
	var kop kernel.Op
	if guard(func() error {
		var err error
		kop, err = reg.New(kernel.OpInfo{Version: oc.Version, Operator: table})
		return err
	}) != nil {
		return false
	}
	p.op, p.table = kop, table
	g.absorb(p, a)
	return true
}
