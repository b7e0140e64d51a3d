// Package randgraph generates small random TFLite models for property tests:
// DAGs of real builtin ops with consistent shapes, branches and joins,
// several inputs and outputs, float32, or uint8- or int8-quantized, every
// one the same from the same seed. The graphs are tiny (a few dozen nodes over tensors of
// at most a few hundred elements), so hundreds run in seconds.
//
// The ops are those delego's CPU kernels implement and TFLite accepts with
// the shapes, types and quantization parameters generated here: ADD, SUB, MUL
// (with broadcasting, against other activations or constants), MAXIMUM and
// MINIMUM (float32), CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, RELU,
// RELU6, LOGISTIC, TANH, SOFTMAX, CONCATENATION, RESHAPE, SPLIT, TRANSPOSE,
// AVERAGE_POOL_2D, MAX_POOL_2D and PAD. Those are the ops of Ops, which
// graphs hold by default; AllOps adds ops graphs hold only when Options.Ops
// names them (the unary math and activation ops ABS, NEG, FLOOR, SQRT,
// RSQRT, EXP, LOG, HARD_SWISH, LEAKY_RELU, RELU_N1_TO_1 and ELU; PRELU;
// DIV and SQUARED_DIFFERENCE, float32; MEAN, SQUEEZE, EXPAND_DIMS, SLICE,
// STRIDED_SLICE, SPLIT_V and PADV2, which keep every activation's rank
// between 1 and 4; RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR, DEPTH_TO_SPACE
// and SPACE_TO_DEPTH; QUANTIZE and DEQUANTIZE, whose outputs of another
// type than the graph's are graph outputs only; TRANSPOSE_CONV), so that
// the graphs of existing seeds and options stay as they were. Can says which
// ops it makes in which type.
//
// It is public, part of the conformance kit (package delegatetest, which
// generates graphs from a plugin's declared support with it): a plugin's
// author may use it in tests of their own. Production code never imports it
// (the import rules in integration/layers_test.go hold that).
package randgraph

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Options shape the generated graphs. The zero value is usable.
type Options struct {
	// Types are the activation types to choose from (kernels.Float32,
	// kernels.Uint8); empty means both.
	Types []tensor.DType
	// MinNodes and MaxNodes bound the number of operators (defaults 5 and 40).
	MinNodes, MaxNodes int
	// MaxInputs bounds the number of graph inputs (default 3).
	MaxInputs int
	// Ops restricts the ops used; empty means all of [Ops]. It may name any
	// op of [AllOps].
	Ops []schema.BuiltinOperator
	// Version chooses an op's version; nil gives every op version 1.
	Version func(op schema.BuiltinOperator, t tensor.DType, r *rand.Rand) int
}

// Ops lists the ops the generator emits by default, when Options.Ops is
// empty. It never grows, so that default graphs stay the same for a seed:
// new ops go to AllOps.
func Ops() []schema.BuiltinOperator {
	return []schema.BuiltinOperator{
		schema.BuiltinOperatorADD, schema.BuiltinOperatorSUB, schema.BuiltinOperatorMUL,
		schema.BuiltinOperatorMAXIMUM, schema.BuiltinOperatorMINIMUM,
		schema.BuiltinOperatorCONV_2D, schema.BuiltinOperatorDEPTHWISE_CONV_2D, schema.BuiltinOperatorFULLY_CONNECTED,
		schema.BuiltinOperatorRELU, schema.BuiltinOperatorRELU6, schema.BuiltinOperatorLOGISTIC, schema.BuiltinOperatorTANH,
		schema.BuiltinOperatorSOFTMAX, schema.BuiltinOperatorCONCATENATION, schema.BuiltinOperatorRESHAPE,
		schema.BuiltinOperatorSPLIT, schema.BuiltinOperatorTRANSPOSE,
		schema.BuiltinOperatorAVERAGE_POOL_2D, schema.BuiltinOperatorMAX_POOL_2D, schema.BuiltinOperatorPAD,
	}
}

// extraOps are the ops the generator emits only when Options.Ops names them.
func extraOps() []schema.BuiltinOperator {
	return []schema.BuiltinOperator{
		schema.BuiltinOperatorABS, schema.BuiltinOperatorNEG, schema.BuiltinOperatorFLOOR,
		schema.BuiltinOperatorSQRT, schema.BuiltinOperatorRSQRT, schema.BuiltinOperatorEXP, schema.BuiltinOperatorLOG,
		schema.BuiltinOperatorHARD_SWISH, schema.BuiltinOperatorLEAKY_RELU, schema.BuiltinOperatorRELU_N1_TO_1,
		schema.BuiltinOperatorELU, schema.BuiltinOperatorPRELU,
		schema.BuiltinOperatorDIV, schema.BuiltinOperatorSQUARED_DIFFERENCE,
		schema.BuiltinOperatorMEAN, schema.BuiltinOperatorSQUEEZE, schema.BuiltinOperatorEXPAND_DIMS,
		schema.BuiltinOperatorSLICE, schema.BuiltinOperatorSTRIDED_SLICE, schema.BuiltinOperatorSPLIT_V,
		schema.BuiltinOperatorPADV2,
		schema.BuiltinOperatorRESIZE_BILINEAR, schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR,
		schema.BuiltinOperatorDEPTH_TO_SPACE, schema.BuiltinOperatorSPACE_TO_DEPTH,
		schema.BuiltinOperatorQUANTIZE, schema.BuiltinOperatorDEQUANTIZE,
		schema.BuiltinOperatorTRANSPOSE_CONV,
	}
}

// AllOps lists every op the generator can emit: those of Ops, and those
// graphs hold only when Options.Ops names them.
func AllOps() []schema.BuiltinOperator { return append(Ops(), extraOps()...) }

// Types lists the activation types the generator makes graphs of: float32,
// and uint8 and int8 quantized (int8 weights symmetric, as TFLite's int8
// scheme has them). Options.Types defaults to float32 and uint8.
func Types() []tensor.DType { return []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int8} }

// Can reports whether the generator makes op in graphs of type t: every op
// of AllOps in every type of Types, except those TFLite defines for fewer
// types: MAXIMUM, MINIMUM, NEG, FLOOR, SQRT, RSQRT, EXP and LOG float32
// only, ABS and ELU float32 and int8; DIV and SQUARED_DIFFERENCE, float32
// only here (their quantized forms are not generated); DEQUANTIZE of uint8
// and int8 (the graph's type is its input's).
func Can(op schema.BuiltinOperator, t tensor.DType) bool {
	if !slices.Contains(AllOps(), op) || !slices.Contains(Types(), t) {
		return false
	}
	switch op {
	case schema.BuiltinOperatorMAXIMUM, schema.BuiltinOperatorMINIMUM,
		schema.BuiltinOperatorNEG, schema.BuiltinOperatorFLOOR, schema.BuiltinOperatorSQRT,
		schema.BuiltinOperatorRSQRT, schema.BuiltinOperatorEXP, schema.BuiltinOperatorLOG,
		schema.BuiltinOperatorDIV, schema.BuiltinOperatorSQUARED_DIFFERENCE:
		return t == tensor.Float32
	case schema.BuiltinOperatorABS, schema.BuiltinOperatorELU:
		return t == tensor.Float32 || t == tensor.Int8
	case schema.BuiltinOperatorDEQUANTIZE:
		return t != tensor.Float32
	}
	return true
}

// positiveOnly says whether op is defined for positive inputs only.
func positiveOnly(op schema.BuiltinOperator) bool {
	return op == schema.BuiltinOperatorSQRT || op == schema.BuiltinOperatorRSQRT || op == schema.BuiltinOperatorLOG
}

// AnyVersion returns a Version function that picks uniformly among the
// versions reg registers for each op, so graphs exercise version ranges.
// The kernels ignore the version for the types generated here.
func AnyVersion(reg *kernel.Registry) func(schema.BuiltinOperator, tensor.DType, *rand.Rand) int {
	return func(op schema.BuiltinOperator, _ tensor.DType, r *rand.Rand) int {
		rg, ok := reg.Lookup(op, "")
		if !ok {
			return 1
		}
		return rg.Versions.Min + r.IntN(rg.Versions.Max-rg.Versions.Min+1)
	}
}

// Graph is one generated model.
type Graph struct {
	Seed  uint64
	Type  tensor.DType
	Model []byte
	// Nodes are the operators, in model order.
	Nodes []Node
	// Inputs and Outputs are the graph's input and output tensors.
	Inputs, Outputs []int
	// InputShapes are the shapes of the inputs, in order.
	InputShapes [][]int

	positive bool // float32 inputs in [minPositive, 1]: see InputData
}

// Node is one generated operator.
type Node struct {
	Op      schema.BuiltinOperator
	Version int
	Inputs  []int // tensors, constants included
	Outputs []int
}

// String summarises the graph for failure messages.
func (g *Graph) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "randgraph seed %d (%s, %d nodes, inputs %v, outputs %v):", g.Seed, g.Type, len(g.Nodes), g.Inputs, g.Outputs)
	for i, n := range g.Nodes {
		fmt.Fprintf(&b, "\n  %d: %s v%d %v -> %v", i, model.OpName(n.Op), n.Version, n.Inputs, n.Outputs)
	}
	return b.String()
}

// InputData returns random values for every graph input, in order: float32
// values in [-1, 1] (in [0.05, 1] when the graph's options name an op
// defined for positive inputs only: SQRT, RSQRT, LOG), or uniform bytes for
// quantized types; deterministic from seed.
func (g *Graph) InputData(seed uint64) [][]byte {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([][]byte, len(g.InputShapes))
	for i, s := range g.InputShapes {
		n := tensor.NumElements(s)
		if g.Type == tensor.Float32 {
			out[i] = floats(r, n, 1)
			if g.positive {
				toPositive(out[i])
			}
		} else {
			out[i] = make([]byte, n)
			for k := range out[i] {
				out[i][k] = byte(r.UintN(256))
			}
		}
	}
	return out
}

// minPositive is the least value of a positive float32 input.
const minPositive = 0.05

// toPositive maps float32 values in [-1, 1] to [minPositive, 1].
func toPositive(b []byte) {
	for i := 0; i < len(b); i += 4 {
		v := math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
		v = minPositive + (1-minPositive)*float32(math.Abs(float64(v)))
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v))
	}
}

// value is an activation tensor available as an input to later ops.
type value struct {
	t     int
	shape []int
	scale float32 // quantized types only
	zp    int64
	uses  int
	input bool
	sink  bool // of another type than the graph's: a graph output only
	// span bounds a float32 value where the generator knows it: the
	// values that ops defined on part of the line, as SQRT, may read.
	span span
}

// span is a closed interval of float32 values; the zero value is unknown.
type span struct {
	known  bool
	lo, hi float64
}

// farFromZero says whether every value of s is at least minPositive
// from zero: a divisor's.
func (s span) farFromZero() bool { return s.known && (s.lo >= minPositive || s.hi <= -minPositive) }

// positive says whether every value of s is positive.
func (s span) positive() bool { return s.known && s.lo >= minPositive*minPositive }

type gen struct {
	r      *rand.Rand
	opts   Options
	typ    tensor.DType
	b      *modelbuild.Builder
	vals   []*value
	nodes  []Node
	names  int
	extras map[int]bool // consumed values also made graph outputs
}

// maxElements bounds every activation's size.
const maxElements = 512

// Generate makes the graph for seed.
func Generate(seed uint64, opts Options) *Graph {
	if opts.MinNodes <= 0 {
		opts.MinNodes = 5
	}
	if opts.MaxNodes < opts.MinNodes {
		opts.MaxNodes = max(40, opts.MinNodes)
	}
	if opts.MaxInputs <= 0 {
		opts.MaxInputs = 3
	}
	if len(opts.Ops) == 0 {
		opts.Ops = Ops()
	}
	if len(opts.Types) == 0 {
		opts.Types = []tensor.DType{tensor.Float32, tensor.Uint8}
	}
	r := rand.New(rand.NewPCG(seed, 0x9a4f))
	g := &gen{r: r, opts: opts, typ: opts.Types[r.IntN(len(opts.Types))], b: modelbuild.New(), extras: map[int]bool{}}
	g.b.Description(fmt.Sprintf("randgraph seed %d", seed))

	out := &Graph{Seed: seed, Type: g.typ, positive: g.typ == tensor.Float32 && slices.ContainsFunc(opts.Ops, positiveOnly)}
	nIn := 1 + r.IntN(opts.MaxInputs)
	for i := range nIn {
		shape := g.randomShape()
		if i == 0 {
			shape = g.fitFirstInput(shape)
		}
		v := g.newValue(shape, g.randomQuant())
		v.input = true
		v.span = span{true, -1, 1}
		if out.positive {
			v.span.lo = minPositive
		}
		out.Inputs = append(out.Inputs, v.t)
		out.InputShapes = append(out.InputShapes, shape)
	}
	target := opts.MinNodes + r.IntN(opts.MaxNodes-opts.MinNodes+1)
	for attempts := 0; len(g.nodes) < target && attempts < 50*target; attempts++ {
		op := opts.Ops[r.IntN(len(opts.Ops))]
		g.addOp(op)
	}
	// An input nothing read yet gets a unary op, so every input matters.
	for _, v := range slices.Clone(g.vals[:nIn]) {
		if v.uses == 0 {
			g.unary(schema.BuiltinOperatorRELU, v)
		}
	}
	for _, v := range g.vals {
		if !v.input && (v.uses == 0 || g.extras[v.t]) {
			out.Outputs = append(out.Outputs, v.t)
		}
	}
	g.b.Inputs(out.Inputs...)
	g.b.Outputs(out.Outputs...)
	out.Nodes = g.nodes
	out.Model = g.b.Bytes()
	return out
}

// fitFirstInput reshapes the first input so that the ops of
// Options.Ops that read only some shapes can read it: a rank EXPAND_DIMS
// can add to, channels DEPTH_TO_SPACE's block divides, a height and width
// SPACE_TO_DEPTH's divides. Ops never names them by default: default graphs
// keep their shapes.
func (g *gen) fitFirstInput(shape []int) []int {
	ops := g.opts.Ops
	if len(shape) != 4 {
		return shape
	}
	if slices.Contains(ops, schema.BuiltinOperatorDEPTH_TO_SPACE) {
		shape[3] = []int{4, 8, 9}[g.r.IntN(3)]
	}
	if slices.Contains(ops, schema.BuiltinOperatorSPACE_TO_DEPTH) {
		shape[1], shape[2] = 2*(1+g.r.IntN(2)), 2*(1+g.r.IntN(3))
	}
	if slices.Contains(ops, schema.BuiltinOperatorEXPAND_DIMS) {
		shape = shape[1:]
	}
	return shape
}

// randomShape is an input's shape: mostly NHWC images, sometimes matrices.
func (g *gen) randomShape() []int {
	if g.r.IntN(5) == 0 {
		return []int{1 + g.r.IntN(2), 1 + g.r.IntN(8)}
	}
	return []int{1, 1 + g.r.IntN(5), 1 + g.r.IntN(5), 1 + g.r.IntN(6)}
}

type quant struct {
	scale float32
	zp    int64
}

func (g *gen) randomQuant() quant {
	return quant{scale: 0.02 + 0.08*g.r.Float32(), zp: g.zeroPoint()}
}

// zeroPoint is a random zero point near the middle of the activation type's
// range.
func (g *gen) zeroPoint() int64 { return g.shift(int64(100 + g.r.IntN(57))) }

// shift moves a uint8 zero point to the activation type's range: int8's
// is 128 lower.
func (g *gen) shift(zp int64) int64 {
	if g.typ == tensor.Int8 {
		return zp - 128
	}
	return zp
}

func (g *gen) uniform(lo, hi float32) float32 { return lo + (hi-lo)*g.r.Float32() }

func (g *gen) name(prefix string) string {
	g.names++
	return fmt.Sprintf("%s_%d", prefix, g.names)
}

func (g *gen) tensorOpts(q quant) []modelbuild.TensorOption {
	if g.typ == tensor.Float32 {
		return nil
	}
	return []modelbuild.TensorOption{modelbuild.Quant(q.scale, q.zp)}
}

func (g *gen) newValue(shape []int, q quant) *value {
	t := g.b.Tensor(g.name("t"), g.typ, shape, g.tensorOpts(q)...)
	v := &value{t: t, shape: slices.Clone(shape), scale: q.scale, zp: q.zp}
	g.vals = append(g.vals, v)
	return v
}

// pick chooses an input value: half the time one nothing reads yet (so
// graphs keep growing), else any (so values fan out).
func (g *gen) pick(ok func(*value) bool) *value {
	var fresh, all []*value
	for _, v := range g.vals {
		if v.sink || ok != nil && !ok(v) {
			continue
		}
		all = append(all, v)
		if v.uses == 0 {
			fresh = append(fresh, v)
		}
	}
	if len(fresh) > 0 && g.r.IntN(2) == 0 {
		return fresh[g.r.IntN(len(fresh))]
	}
	if len(all) == 0 {
		return nil
	}
	return all[g.r.IntN(len(all))]
}

func (g *gen) version(op schema.BuiltinOperator) int {
	if g.opts.Version == nil {
		return 1
	}
	return g.opts.Version(op, g.typ, g.r)
}

// emit adds the operator, marking its activation inputs as used.
func (g *gen) emit(op schema.BuiltinOperator, ins []*value, consts []int, order func(act []int) []int, outs []*value, options *schema.BuiltinOptionsT) {
	act := make([]int, len(ins))
	for i, v := range ins {
		v.uses++
		act[i] = v.t
		if !v.input && g.r.IntN(12) == 0 {
			g.extras[v.t] = true
		}
	}
	inputs := append(act, consts...)
	if order != nil {
		inputs = order(act)
	}
	outputs := make([]int, len(outs))
	for i, v := range outs {
		outputs[i] = v.t
	}
	ver := g.version(op)
	g.b.Op(op, ver, inputs, outputs, options)
	g.nodes = append(g.nodes, Node{Op: op, Version: ver, Inputs: inputs, Outputs: outputs})
}

func (g *gen) addOp(op schema.BuiltinOperator) {
	switch op {
	case schema.BuiltinOperatorADD, schema.BuiltinOperatorSUB, schema.BuiltinOperatorMUL:
		g.binary(op)
	case schema.BuiltinOperatorMAXIMUM, schema.BuiltinOperatorMINIMUM,
		schema.BuiltinOperatorDIV, schema.BuiltinOperatorSQUARED_DIFFERENCE:
		if g.typ == tensor.Float32 {
			g.binary(op)
		}
	case schema.BuiltinOperatorPRELU:
		g.prelu()
	case schema.BuiltinOperatorMEAN:
		g.mean()
	case schema.BuiltinOperatorSQUEEZE:
		g.squeeze()
	case schema.BuiltinOperatorEXPAND_DIMS:
		g.expandDims()
	case schema.BuiltinOperatorSLICE, schema.BuiltinOperatorSTRIDED_SLICE:
		g.slice(op)
	case schema.BuiltinOperatorSPLIT_V:
		g.splitV()
	case schema.BuiltinOperatorPADV2:
		g.padV2()
	case schema.BuiltinOperatorRESIZE_BILINEAR, schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR:
		g.resize(op)
	case schema.BuiltinOperatorDEPTH_TO_SPACE, schema.BuiltinOperatorSPACE_TO_DEPTH:
		g.depthSpace(op)
	case schema.BuiltinOperatorQUANTIZE:
		g.quantize()
	case schema.BuiltinOperatorTRANSPOSE_CONV:
		g.transposeConv()
	case schema.BuiltinOperatorDEQUANTIZE:
		if Can(op, g.typ) {
			g.dequantize()
		}
	case schema.BuiltinOperatorRELU, schema.BuiltinOperatorRELU6, schema.BuiltinOperatorLOGISTIC,
		schema.BuiltinOperatorTANH, schema.BuiltinOperatorSOFTMAX:
		g.unary(op, g.pick(nil))
	case schema.BuiltinOperatorCONV_2D:
		g.conv(false)
	case schema.BuiltinOperatorDEPTHWISE_CONV_2D:
		g.conv(true)
	case schema.BuiltinOperatorFULLY_CONNECTED:
		g.fullyConnected()
	case schema.BuiltinOperatorCONCATENATION:
		g.concat()
	case schema.BuiltinOperatorRESHAPE:
		g.reshape()
	case schema.BuiltinOperatorSPLIT:
		g.split()
	case schema.BuiltinOperatorTRANSPOSE:
		g.transpose()
	case schema.BuiltinOperatorAVERAGE_POOL_2D, schema.BuiltinOperatorMAX_POOL_2D:
		g.pool(op)
	case schema.BuiltinOperatorPAD:
		g.pad()
	case schema.BuiltinOperatorABS, schema.BuiltinOperatorNEG, schema.BuiltinOperatorFLOOR,
		schema.BuiltinOperatorHARD_SWISH, schema.BuiltinOperatorLEAKY_RELU, schema.BuiltinOperatorRELU_N1_TO_1,
		schema.BuiltinOperatorELU:
		if Can(op, g.typ) {
			g.unary(op, g.pick(nil))
		}
	case schema.BuiltinOperatorSQRT, schema.BuiltinOperatorRSQRT, schema.BuiltinOperatorLOG:
		if Can(op, g.typ) {
			g.unary(op, g.pick(func(v *value) bool { return v.span.positive() }))
		}
	case schema.BuiltinOperatorEXP:
		if Can(op, g.typ) { // exp of at most 4 stays far from overflow
			g.unary(op, g.pick(func(v *value) bool { return v.span.known && v.span.hi <= 4 }))
		}
	}
}

func (g *gen) activation() schema.ActivationFunctionType {
	return []schema.ActivationFunctionType{
		schema.ActivationFunctionTypeNONE, schema.ActivationFunctionTypeNONE,
		schema.ActivationFunctionTypeRELU, schema.ActivationFunctionTypeRELU6,
	}[g.r.IntN(4)]
}

func (g *gen) unary(op schema.BuiltinOperator, x *value) {
	if x == nil {
		return
	}
	q := quant{x.scale, x.zp}
	var options *schema.BuiltinOptionsT
	switch op {
	case schema.BuiltinOperatorLOGISTIC:
		q = quant{1.0 / 256, g.shift(0)}
	case schema.BuiltinOperatorTANH:
		q = quant{1.0 / 128, g.shift(128)}
	case schema.BuiltinOperatorSOFTMAX:
		q = quant{1.0 / 256, g.shift(0)}
		beta := []float32{1, 0.5, 2}[g.r.IntN(3)]
		options = modelbuild.Options(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: beta})
	default:
		if g.r.IntN(3) == 0 {
			q = g.randomQuant()
		}
	}
	alpha := float32(0)
	if op == schema.BuiltinOperatorLEAKY_RELU {
		alpha = g.uniform(0.05, 0.5)
		options = modelbuild.Options(schema.BuiltinOptionsLeakyReluOptions, &schema.LeakyReluOptionsT{Alpha: alpha})
	}
	out := g.newValue(x.shape, q)
	out.span = unarySpan(op, x.span, float64(alpha))
	g.emit(op, []*value{x}, nil, nil, []*value{out}, options)
}

// unarySpan bounds the output of a unary op over in (with alpha, LEAKY_RELU's
// slope below zero): unknown where the generator has no need to know it.
func unarySpan(op schema.BuiltinOperator, in span, alpha float64) span {
	if op == schema.BuiltinOperatorRELU_N1_TO_1 {
		if !in.known {
			return span{true, -1, 1}
		}
		return span{true, min(max(in.lo, -1), 1), min(max(in.hi, -1), 1)}
	}
	if !in.known {
		return span{}
	}
	lo, hi := in.lo, in.hi
	below := func(f func(float64) float64) span { // f applied below zero, identity above
		if lo < 0 {
			lo = f(lo)
		}
		if hi < 0 {
			hi = f(hi)
		}
		return span{true, lo, hi}
	}
	switch op {
	case schema.BuiltinOperatorABS:
		if lo < 0 && hi > 0 {
			return span{true, 0, max(-lo, hi)}
		}
		return span{true, min(math.Abs(lo), math.Abs(hi)), max(math.Abs(lo), math.Abs(hi))}
	case schema.BuiltinOperatorNEG:
		return span{true, -hi, -lo}
	case schema.BuiltinOperatorFLOOR:
		return span{true, math.Floor(lo), math.Floor(hi)}
	case schema.BuiltinOperatorSQRT:
		return span{true, math.Sqrt(lo), math.Sqrt(hi)}
	case schema.BuiltinOperatorRSQRT:
		return span{true, 1 / math.Sqrt(hi), 1 / math.Sqrt(lo)}
	case schema.BuiltinOperatorEXP:
		return span{true, math.Exp(lo), math.Exp(hi)}
	case schema.BuiltinOperatorLOG:
		return span{true, math.Log(lo), math.Log(hi)}
	case schema.BuiltinOperatorHARD_SWISH: // least value -3/8, at -3/2
		return span{true, -0.375, max(hi, 0)}
	case schema.BuiltinOperatorLEAKY_RELU:
		return below(func(v float64) float64 { return alpha * v })
	case schema.BuiltinOperatorELU:
		return below(func(v float64) float64 { return math.Expm1(v) })
	}
	return span{}
}

// broadcastable says whether shapes a and b broadcast together.
func broadcastable(a, b []int) bool {
	_, err := tensor.BroadcastShape(a, b)
	return err == nil
}

// binary adds an element-wise op of x and either another activation (same
// or broadcastable shape: a join) or a constant that broadcasts.
func (g *gen) binary(op schema.BuiltinOperator) {
	x := g.pick(nil)
	if x == nil {
		return
	}
	var ins []*value
	var consts []int
	var yq quant
	var yShape []int
	if g.r.IntN(2) == 0 {
		y := g.pick(func(v *value) bool {
			return v != x && broadcastable(x.shape, v.shape) && (op != schema.BuiltinOperatorDIV || v.span.farFromZero())
		})
		if y == nil {
			y = x
		}
		if op == schema.BuiltinOperatorDIV && !y.span.farFromZero() {
			return // no divisor far enough from zero
		}
		ins = []*value{x, y}
		yq, yShape = quant{y.scale, y.zp}, y.shape
	} else {
		yShape = slices.Clone(x.shape)
		for i := range yShape {
			if g.r.IntN(2) == 0 {
				yShape[i] = 1
			}
		}
		for len(yShape) > 1 && g.r.IntN(3) == 0 {
			yShape = yShape[1:]
		}
		yq = quant{0.01 + 0.04*g.r.Float32(), g.zeroPoint()}
		if op == schema.BuiltinOperatorDIV {
			consts = []int{g.divisor(yShape)}
		} else {
			consts = []int{g.constant(yShape, yq)}
		}
		ins = []*value{x}
	}
	shape, _ := tensor.BroadcastShape(x.shape, yShape) // broadcastable by construction
	if tensor.NumElements(shape) > maxElements {
		return // an unread constant may stay behind: harmless
	}
	var oq quant
	switch op {
	case schema.BuiltinOperatorMUL:
		oq = quant{x.scale * yq.scale * g.uniform(32, 128), g.zeroPoint()}
	default:
		oq = quant{max(x.scale, yq.scale) * g.uniform(1, 2), g.zeroPoint()}
	}
	out := g.newValue(shape, oq)
	var options *schema.BuiltinOptionsT
	switch op {
	case schema.BuiltinOperatorADD:
		options = modelbuild.Options(schema.BuiltinOptionsAddOptions, &schema.AddOptionsT{FusedActivationFunction: g.activation()})
	case schema.BuiltinOperatorSUB:
		options = modelbuild.Options(schema.BuiltinOptionsSubOptions, &schema.SubOptionsT{FusedActivationFunction: g.activation()})
	case schema.BuiltinOperatorMUL:
		options = modelbuild.Options(schema.BuiltinOptionsMulOptions, &schema.MulOptionsT{FusedActivationFunction: g.activation()})
	case schema.BuiltinOperatorDIV:
		options = modelbuild.Options(schema.BuiltinOptionsDivOptions, &schema.DivOptionsT{FusedActivationFunction: g.activation()})
	case schema.BuiltinOperatorSQUARED_DIFFERENCE:
		options = modelbuild.Options(schema.BuiltinOptionsSquaredDifferenceOptions, &schema.SquaredDifferenceOptionsT{})
	}
	var order func([]int) []int
	if len(consts) == 1 && op != schema.BuiltinOperatorDIV && g.r.IntN(2) == 0 {
		order = func(act []int) []int { return []int{consts[0], act[0]} } // the constant first (never the divisor)
	}
	g.emit(op, ins, consts, order, []*value{out}, options)
}

// divisor adds a float32 constant of random values in [minPositive, 1],
// either sign: a DIV's divisor.
func (g *gen) divisor(shape []int) int {
	data := floats(g.r, tensor.NumElements(shape), 1)
	toPositive(data)
	for i := 0; i < len(data); i += 4 {
		if g.r.IntN(2) == 0 {
			data[i+3] ^= 0x80 // the sign bit
		}
	}
	return g.b.Const(g.name("c"), tensor.Float32, shape, data)
}

// prelu adds a PRELU with a constant alpha that broadcasts to the input:
// the input's trailing dimensions, some of them 1; for an NHWC input, half
// the time one slope per channel, the form accelerators commonly take.
func (g *gen) prelu() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	ashape := slices.Clone(x.shape[1+g.r.IntN(len(x.shape)):])
	for i := range ashape {
		if g.r.IntN(3) == 0 {
			ashape[i] = 1
		}
	}
	if len(x.shape) == 4 && g.r.IntN(2) == 0 {
		ashape = []int{1, 1, x.shape[3]} // one slope per channel, as converters write it
	}
	alpha := g.constant(ashape, quant{g.uniform(0.002, 0.01), g.zeroPoint()})
	q := quant{x.scale, x.zp}
	if g.r.IntN(2) == 0 {
		q = g.randomQuant()
	}
	out := g.newValue(x.shape, q)
	g.emit(schema.BuiltinOperatorPRELU, []*value{x}, []int{alpha}, nil, []*value{out}, nil)
}

// constant adds a constant activation-typed tensor of random values.
func (g *gen) constant(shape []int, q quant) int {
	n := tensor.NumElements(shape)
	if g.typ == tensor.Float32 {
		return g.b.Const(g.name("c"), tensor.Float32, shape, floats(g.r, n, 1))
	}
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(g.r.UintN(256))
	}
	return g.b.Const(g.name("c"), g.typ, shape, data, modelbuild.Quant(q.scale, q.zp))
}

func floats(r *rand.Rand, n int, scale float32) []byte {
	out := make([]byte, 4*n)
	for i := range n {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(scale*(2*r.Float32()-1)))
	}
	return out
}

func int32s(v ...int) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(int32(x)))
	}
	return out
}

// weights adds the filter (and maybe bias) of a conv or FC layer with
// depth k, and returns them with the output quantization.
func (g *gen) weights(x *value, shape []int, outC, k int) (filter, bias int, oq quant) {
	n := tensor.NumElements(shape)
	bias = -1
	if g.typ == tensor.Float32 {
		filter = g.b.Const(g.name("w"), tensor.Float32, shape, floats(g.r, n, 1/float32(math.Sqrt(float64(k)))))
		if g.r.IntN(5) != 0 {
			bias = g.b.Const(g.name("b"), tensor.Float32, []int{outC}, floats(g.r, outC, 0.5))
		}
		return filter, bias, quant{}
	}
	fs := g.uniform(0.005, 0.02)
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(g.r.UintN(256))
	}
	wzp := int64(100 + g.r.IntN(57))
	if g.typ == tensor.Int8 {
		wzp = 0 // int8 weights are symmetric
	}
	filter = g.b.Const(g.name("w"), g.typ, shape, data, modelbuild.Quant(fs, wzp))
	bs := x.scale * fs
	if g.r.IntN(5) != 0 {
		b := make([]int, outC)
		for i := range b {
			b[i] = g.r.IntN(4001) - 2000
		}
		bias = g.b.Const(g.name("b"), tensor.Int32, []int{outC}, int32s(b...), modelbuild.Quant(bs, 0))
	}
	oq = quant{bs * 64 * float32(math.Sqrt(float64(k))) * g.uniform(0.5, 2), g.zeroPoint()}
	return filter, bias, oq
}

// conv adds a CONV_2D or DEPTHWISE_CONV_2D over an NHWC activation.
func (g *gen) conv(depthwise bool) {
	x := g.pick(func(v *value) bool { return len(v.shape) == 4 })
	if x == nil {
		return
	}
	h, w, c := x.shape[1], x.shape[2], x.shape[3]
	kh, kw := 1+g.r.IntN(3), 1+g.r.IntN(3)
	sh, sw := 1+g.r.IntN(2), 1+g.r.IntN(2)
	dh, dw := 1, 1
	if g.r.IntN(4) == 0 {
		dh, dw = 1+g.r.IntN(2), 1+g.r.IntN(2)
	}
	ekh, ekw := (kh-1)*dh+1, (kw-1)*dw+1
	padding := schema.PaddingSAME
	oh, ow := (h+sh-1)/sh, (w+sw-1)/sw
	if g.r.IntN(2) == 0 && h >= ekh && w >= ekw {
		padding = schema.PaddingVALID
		oh, ow = (h-ekh)/sh+1, (w-ekw)/sw+1
	}
	var outC, k, mult int
	var fshape []int
	if depthwise {
		mult = 1 + g.r.IntN(2)
		outC, k = c*mult, kh*kw
		fshape = []int{1, kh, kw, outC}
	} else {
		outC, k = 1+g.r.IntN(8), kh*kw*c
		fshape = []int{outC, kh, kw, c}
	}
	shape := []int{x.shape[0], oh, ow, outC}
	if tensor.NumElements(shape) > maxElements {
		return
	}
	filter, bias, oq := g.weights(x, fshape, outC, k)
	out := g.newValue(shape, oq)
	var options *schema.BuiltinOptionsT
	op := schema.BuiltinOperatorCONV_2D
	if depthwise {
		op = schema.BuiltinOperatorDEPTHWISE_CONV_2D
		options = modelbuild.Options(schema.BuiltinOptionsDepthwiseConv2DOptions, &schema.DepthwiseConv2DOptionsT{
			Padding: padding, StrideW: int32(sw), StrideH: int32(sh), DepthMultiplier: int32(mult),
			DilationWFactor: int32(dw), DilationHFactor: int32(dh), FusedActivationFunction: g.activation(),
		})
	} else {
		options = modelbuild.Options(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{
			Padding: padding, StrideW: int32(sw), StrideH: int32(sh),
			DilationWFactor: int32(dw), DilationHFactor: int32(dh), FusedActivationFunction: g.activation(),
		})
	}
	consts := []int{filter, bias}
	g.emit(op, []*value{x}, consts, nil, []*value{out}, options)
}

// fullyConnected adds a FULLY_CONNECTED over the last dimension of any activation.
func (g *gen) fullyConnected() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	depth := x.shape[len(x.shape)-1]
	units := 1 + g.r.IntN(8)
	shape := []int{tensor.NumElements(x.shape) / depth, units}
	filter, bias, oq := g.weights(x, []int{units, depth}, units, depth)
	out := g.newValue(shape, oq)
	options := modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{
		FusedActivationFunction: g.activation(),
	})
	consts := []int{filter}
	if bias >= 0 || g.r.IntN(2) == 0 {
		consts = append(consts, bias) // -1: an absent optional bias
	}
	g.emit(schema.BuiltinOperatorFULLY_CONNECTED, []*value{x}, consts, nil, []*value{out}, options)
}

// concat joins two or three activations that agree on every dimension but the axis.
func (g *gen) concat() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	rank := len(x.shape)
	axis := g.r.IntN(rank)
	// TFLite's int8 CONCATENATION takes inputs and output of one
	// quantization.
	sameQuant := g.typ == tensor.Int8
	fits := func(v *value) bool {
		if len(v.shape) != rank || sameQuant && (v.scale != x.scale || v.zp != x.zp) {
			return false
		}
		for d := range rank {
			if d != axis && v.shape[d] != x.shape[d] {
				return false
			}
		}
		return true
	}
	ins := []*value{x}
	for range 1 + g.r.IntN(2) {
		y := g.pick(func(v *value) bool { return v != x && fits(v) })
		if y == nil {
			y = x
		}
		ins = append(ins, y)
	}
	shape := slices.Clone(x.shape)
	shape[axis] = 0
	for _, v := range ins {
		shape[axis] += v.shape[axis]
	}
	if tensor.NumElements(shape) > maxElements {
		return
	}
	q := quant{x.scale, x.zp}
	if !sameQuant && g.r.IntN(2) == 0 {
		q = g.randomQuant()
	}
	out := g.newValue(shape, q)
	optAxis := axis
	if g.r.IntN(3) == 0 {
		optAxis = axis - rank
	}
	g.emit(schema.BuiltinOperatorCONCATENATION, ins, nil, nil, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsConcatenationOptions, &schema.ConcatenationOptionsT{Axis: int32(optAxis)}))
}

// reshape adds a RESHAPE to another rank-2 or rank-4 factorisation.
func (g *gen) reshape() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	n := tensor.NumElements(x.shape)
	var divs []int
	for d := 1; d <= n; d++ {
		if n%d == 0 {
			divs = append(divs, d)
		}
	}
	var shape []int
	if g.r.IntN(2) == 0 {
		a := divs[g.r.IntN(len(divs))]
		shape = []int{a, n / a}
	} else {
		a := divs[g.r.IntN(len(divs))]
		rest := n / a
		var rd []int
		for d := 1; d <= rest; d++ {
			if rest%d == 0 {
				rd = append(rd, d)
			}
		}
		b := rd[g.r.IntN(len(rd))]
		shape = []int{1, a, b, rest / b}
	}
	spec := slices.Clone(shape)
	if g.r.IntN(3) == 0 {
		spec[g.r.IntN(len(spec))] = -1
	}
	c := g.b.Const(g.name("shape"), tensor.Int32, []int{len(spec)}, int32s(spec...))
	out := g.newValue(shape, quant{x.scale, x.zp})
	ns := make([]int32, len(spec))
	for i, d := range spec {
		ns[i] = int32(d)
	}
	g.emit(schema.BuiltinOperatorRESHAPE, []*value{x}, []int{c}, nil, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsReshapeOptions, &schema.ReshapeOptionsT{NewShape: ns}))
}

// split adds a SPLIT into two or three equal parts along an axis that divides.
func (g *gen) split() {
	k := 2 + g.r.IntN(2)
	x := g.pick(func(v *value) bool { return slices.ContainsFunc(v.shape, func(d int) bool { return d%k == 0 }) })
	if x == nil {
		return
	}
	var axes []int
	for d, s := range x.shape {
		if s%k == 0 {
			axes = append(axes, d)
		}
	}
	axis := axes[g.r.IntN(len(axes))]
	shape := slices.Clone(x.shape)
	shape[axis] /= k
	var ashape []int
	if g.r.IntN(2) == 0 {
		ashape = []int{1}
	}
	c := g.b.Const(g.name("axis"), tensor.Int32, ashape, int32s(axis))
	outs := make([]*value, k)
	for i := range outs {
		outs[i] = g.newValue(shape, quant{x.scale, x.zp})
	}
	g.emit(schema.BuiltinOperatorSPLIT, []*value{x}, nil, func(act []int) []int { return []int{c, act[0]} }, outs,
		modelbuild.Options(schema.BuiltinOptionsSplitOptions, &schema.SplitOptionsT{NumSplits: int32(k)}))
}

// transpose adds a TRANSPOSE by a random permutation.
func (g *gen) transpose() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	perm := g.r.Perm(len(x.shape))
	shape := make([]int, len(perm))
	for i, p := range perm {
		shape[i] = x.shape[p]
	}
	c := g.b.Const(g.name("perm"), tensor.Int32, []int{len(perm)}, int32s(perm...))
	out := g.newValue(shape, quant{x.scale, x.zp})
	g.emit(schema.BuiltinOperatorTRANSPOSE, []*value{x}, []int{c}, nil, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsTransposeOptions, &schema.TransposeOptionsT{}))
}

// pool adds an AVERAGE_POOL_2D or MAX_POOL_2D over an NHWC activation, its
// output quantized as its input (as TFLite requires of 8-bit pools).
func (g *gen) pool(op schema.BuiltinOperator) {
	x := g.pick(func(v *value) bool { return len(v.shape) == 4 })
	if x == nil {
		return
	}
	h, w := x.shape[1], x.shape[2]
	fh, fw := 1+g.r.IntN(3), 1+g.r.IntN(3)
	sh, sw := 1+g.r.IntN(2), 1+g.r.IntN(2)
	padding := schema.PaddingSAME
	oh, ow := (h+sh-1)/sh, (w+sw-1)/sw
	if g.r.IntN(2) == 0 && h >= fh && w >= fw {
		padding = schema.PaddingVALID
		oh, ow = (h-fh)/sh+1, (w-fw)/sw+1
	}
	out := g.newValue([]int{x.shape[0], oh, ow, x.shape[3]}, quant{x.scale, x.zp})
	g.emit(op, []*value{x}, nil, nil, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsPool2DOptions, &schema.Pool2DOptionsT{
			Padding: padding, StrideW: int32(sw), StrideH: int32(sh),
			FilterWidth: int32(fw), FilterHeight: int32(fh), FusedActivationFunction: g.activation(),
		}))
}

// padding draws PAD's and PADV2's paddings for x, up to two elements before
// and after each dimension, and the padded shape; ok is false when that
// shape is larger than the generator allows.
func (g *gen) padding(x *value) (paddings, shape []int, ok bool) {
	paddings = make([]int, 2*len(x.shape))
	shape = slices.Clone(x.shape)
	for d := range shape {
		paddings[2*d], paddings[2*d+1] = g.r.IntN(3), g.r.IntN(3)
		shape[d] += paddings[2*d] + paddings[2*d+1]
	}
	return paddings, shape, tensor.NumElements(shape) <= maxElements
}

// pad adds a PAD of zero to two elements before and after each dimension
// (the zero point for quantized types), its output quantized as its input.
func (g *gen) pad() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	paddings, shape, ok := g.padding(x)
	if !ok {
		return
	}
	c := g.b.Const(g.name("paddings"), tensor.Int32, []int{len(x.shape), 2}, int32s(paddings...))
	out := g.newValue(shape, quant{x.scale, x.zp})
	g.emit(schema.BuiltinOperatorPAD, []*value{x}, []int{c}, nil, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsPadOptions, &schema.PadOptionsT{}))
}

// like adds an output of x's quantization and span, for ops that move
// values without changing them.
func (g *gen) like(x *value, shape []int) *value {
	out := g.newValue(shape, quant{x.scale, x.zp})
	out.span = x.span
	return out
}

// axisConst adds a constant int32 vector of axes, or a scalar when one
// axis is given and a coin says so.
func (g *gen) axisConst(axes ...int) int {
	shape := []int{len(axes)}
	if len(axes) == 1 && g.r.IntN(2) == 0 {
		shape = []int{}
	}
	return g.b.Const(g.name("axis"), tensor.Int32, shape, int32s(axes...))
}

// negate writes axis d of a rank-r shape as the negative index -r+d a
// third of the time, which TFLite accepts alike.
func (g *gen) negate(d, r int) int {
	if g.r.IntN(3) == 0 {
		return d - r
	}
	return d
}

// mean adds a MEAN over one or more axes, keeping the reduced dimensions
// or dropping them (never all of them: no rank-0 activations); over the
// height and width of an NHWC activation half the time, the global average
// pooling accelerators commonly take.
func (g *gen) mean() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	rank := len(x.shape)
	keep := g.r.IntN(2) == 0
	n := 1 + g.r.IntN(rank)
	if !keep && n == rank {
		if rank == 1 {
			keep = true
		} else {
			n--
		}
	}
	dims := g.r.Perm(rank)[:n]
	if rank == 4 && g.r.IntN(2) == 0 {
		dims = []int{1, 2}
		if g.r.IntN(2) == 0 {
			dims = []int{2, 1}
		}
		n = 2
	}
	var shape []int
	for d, s := range x.shape {
		switch {
		case !slices.Contains(dims, d):
			shape = append(shape, s)
		case keep:
			shape = append(shape, 1)
		}
	}
	axes := make([]int, n)
	for i, d := range dims {
		axes[i] = g.negate(d, rank)
	}
	c := g.b.Const(g.name("axis"), tensor.Int32, []int{n}, int32s(axes...))
	q := quant{x.scale, x.zp}
	if g.r.IntN(2) == 0 {
		q = g.randomQuant()
	}
	out := g.newValue(shape, q)
	out.span = x.span
	g.emit(schema.BuiltinOperatorMEAN, []*value{x}, []int{c}, nil, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsReducerOptions, &schema.ReducerOptionsT{KeepDims: keep}))
}

// squeeze adds a SQUEEZE of some or all of the size-1 dimensions of an
// activation of rank 2 or more that has any, leaving rank 1 at least.
func (g *gen) squeeze() {
	ones := func(v *value) []int {
		var d []int
		for i, s := range v.shape {
			if s == 1 {
				d = append(d, i)
			}
		}
		return d
	}
	x := g.pick(func(v *value) bool { return len(v.shape) > 1 && len(ones(v)) > 0 })
	if x == nil {
		return
	}
	rank, dims := len(x.shape), ones(x)
	var opt []int32 // empty: every size-1 dimension
	if len(dims) == rank || g.r.IntN(3) != 0 {
		g.r.Shuffle(len(dims), func(i, j int) { dims[i], dims[j] = dims[j], dims[i] })
		dims = dims[:1+g.r.IntN(min(len(dims), rank-1))]
		for _, d := range dims {
			opt = append(opt, int32(g.negate(d, rank)))
		}
	}
	var shape []int
	for d, s := range x.shape {
		if !slices.Contains(dims, d) {
			shape = append(shape, s)
		}
	}
	g.emit(schema.BuiltinOperatorSQUEEZE, []*value{x}, nil, nil, []*value{g.like(x, shape)},
		modelbuild.Options(schema.BuiltinOptionsSqueezeOptions, &schema.SqueezeOptionsT{SqueezeDims: opt}))
}

// expandDims adds an EXPAND_DIMS of an activation of rank 3 or less.
func (g *gen) expandDims() {
	x := g.pick(func(v *value) bool { return len(v.shape) < 4 })
	if x == nil {
		return
	}
	rank := len(x.shape) + 1
	d := g.r.IntN(rank)
	shape := slices.Insert(slices.Clone(x.shape), d, 1)
	c := g.axisConst(g.negate(d, rank))
	g.emit(schema.BuiltinOperatorEXPAND_DIMS, []*value{x}, []int{c}, nil, []*value{g.like(x, shape)},
		modelbuild.Options(schema.BuiltinOptionsExpandDimsOptions, &schema.ExpandDimsOptionsT{}))
}

// slice adds a SLICE (begin and size, a size sometimes -1: to the end) or a
// STRIDED_SLICE (begin, end and strides of 1 or 2, begin and end sometimes
// negative or masked) of a non-empty part of an activation.
func (g *gen) slice(op schema.BuiltinOperator) {
	x := g.pick(nil)
	if x == nil {
		return
	}
	rank := len(x.shape)
	begin, second, strides := make([]int, rank), make([]int, rank), make([]int, rank)
	shape := make([]int, rank)
	var beginMask, endMask int32
	for d, s := range x.shape {
		b := g.r.IntN(s)
		size := 1 + g.r.IntN(s-b)
		begin[d], strides[d] = b, 1+g.r.IntN(2)
		if op == schema.BuiltinOperatorSLICE {
			second[d], shape[d] = size, size
			if b+size == s && g.r.IntN(2) == 0 {
				second[d] = -1
			}
			continue
		}
		e := b + size
		if g.r.IntN(4) == 0 {
			beginMask |= 1 << d
			b = 0
		}
		if e == s && g.r.IntN(2) == 0 {
			endMask |= 1 << d
		}
		shape[d] = (e - b + strides[d] - 1) / strides[d]
		if g.r.IntN(4) == 0 {
			begin[d] -= s // the same place, counted from the end
		}
		second[d] = e
		if e < s && g.r.IntN(4) == 0 {
			second[d] = e - s
		}
	}
	c1 := g.b.Const(g.name("begin"), tensor.Int32, []int{rank}, int32s(begin...))
	c2 := g.b.Const(g.name("end"), tensor.Int32, []int{rank}, int32s(second...))
	consts := []int{c1, c2}
	options := modelbuild.Options(schema.BuiltinOptionsSliceOptions, &schema.SliceOptionsT{})
	if op == schema.BuiltinOperatorSTRIDED_SLICE {
		consts = append(consts, g.b.Const(g.name("strides"), tensor.Int32, []int{rank}, int32s(strides...)))
		options = modelbuild.Options(schema.BuiltinOptionsStridedSliceOptions, &schema.StridedSliceOptionsT{BeginMask: beginMask, EndMask: endMask})
	}
	g.emit(op, []*value{x}, consts, nil, []*value{g.like(x, shape)}, options)
}

// splitV adds a SPLIT_V into two or three parts of random sizes along an
// axis of at least 2, one size sometimes -1 (the rest).
func (g *gen) splitV() {
	x := g.pick(func(v *value) bool { return slices.ContainsFunc(v.shape, func(d int) bool { return d > 1 }) })
	if x == nil {
		return
	}
	var axes []int
	for d, s := range x.shape {
		if s > 1 {
			axes = append(axes, d)
		}
	}
	axis := axes[g.r.IntN(len(axes))]
	dim := x.shape[axis]
	k := 2 + g.r.IntN(min(2, dim-1))
	// k-1 distinct cut points in 1..dim-1.
	cuts := g.r.Perm(dim - 1)[:k-1]
	for i := range cuts {
		cuts[i]++
	}
	slices.Sort(cuts)
	sizes := make([]int, k)
	prev := 0
	for i, c := range append(cuts, dim) {
		sizes[i], prev = c-prev, c
	}
	outs := make([]*value, k)
	for i, s := range sizes {
		shape := slices.Clone(x.shape)
		shape[axis] = s
		outs[i] = g.like(x, shape)
	}
	spec := slices.Clone(sizes)
	if g.r.IntN(3) == 0 {
		spec[g.r.IntN(k)] = -1
	}
	cs := g.b.Const(g.name("sizes"), tensor.Int32, []int{k}, int32s(spec...))
	ca := g.axisConst(g.negate(axis, len(x.shape)))
	g.emit(schema.BuiltinOperatorSPLIT_V, []*value{x}, []int{cs, ca}, nil, outs,
		modelbuild.Options(schema.BuiltinOptionsSplitVOptions, &schema.SplitVOptionsT{NumSplits: int32(k)}))
}

// padV2 adds a PADV2 like pad's, of a constant value: a float32 in
// [-1, 1], or a quantized byte of the input's quantization (TFLite's
// 8-bit PADV2 requires it).
func (g *gen) padV2() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	paddings, shape, ok := g.padding(x)
	if !ok {
		return
	}
	cp := g.b.Const(g.name("paddings"), tensor.Int32, []int{len(x.shape), 2}, int32s(paddings...))
	out := g.newValue(shape, quant{x.scale, x.zp})
	var cv int
	if g.typ == tensor.Float32 {
		data := floats(g.r, 1, 1)
		cv = g.b.Const(g.name("c"), tensor.Float32, []int{}, data)
		if v := float64(math.Float32frombits(binary.LittleEndian.Uint32(data))); x.span.known {
			out.span = span{true, min(x.span.lo, v), max(x.span.hi, v)}
		}
	} else {
		cv = g.b.Const(g.name("c"), g.typ, []int{}, []byte{byte(g.r.UintN(256))}, modelbuild.Quant(x.scale, x.zp))
	}
	g.emit(schema.BuiltinOperatorPADV2, []*value{x}, []int{cp, cv}, nil, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsPadV2Options, &schema.PadV2OptionsT{}))
}

// resize adds a RESIZE_BILINEAR or RESIZE_NEAREST_NEIGHBOR of an NHWC
// activation to a height and width of 1 to twice its own, with
// align_corners or half_pixel_centers (never both, as TFLite requires),
// its output quantized as its input.
func (g *gen) resize(op schema.BuiltinOperator) {
	x := g.pick(func(v *value) bool { return len(v.shape) == 4 })
	if x == nil {
		return
	}
	oh, ow := 1+g.r.IntN(2*x.shape[1]), 1+g.r.IntN(2*x.shape[2])
	shape := []int{x.shape[0], oh, ow, x.shape[3]}
	if tensor.NumElements(shape) > maxElements {
		return
	}
	var align, half bool
	switch g.r.IntN(3) {
	case 1:
		align = true
	case 2:
		half = true
	}
	size := g.b.Const(g.name("size"), tensor.Int32, []int{2}, int32s(oh, ow))
	options := modelbuild.Options(schema.BuiltinOptionsResizeBilinearOptions, &schema.ResizeBilinearOptionsT{AlignCorners: align, HalfPixelCenters: half})
	if op == schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR {
		options = modelbuild.Options(schema.BuiltinOptionsResizeNearestNeighborOptions, &schema.ResizeNearestNeighborOptionsT{AlignCorners: align, HalfPixelCenters: half})
	}
	g.emit(op, []*value{x}, []int{size}, nil, []*value{g.like(x, shape)}, options)
}

// depthSpace adds a DEPTH_TO_SPACE or SPACE_TO_DEPTH of block 2 or 3 of an
// NHWC activation whose channels (or height and width) the block divides.
func (g *gen) depthSpace(op schema.BuiltinOperator) {
	toSpace := op == schema.BuiltinOperatorDEPTH_TO_SPACE
	fits := func(v *value, b int) bool {
		if len(v.shape) != 4 {
			return false
		}
		if toSpace {
			return v.shape[3]%(b*b) == 0
		}
		return v.shape[1]%b == 0 && v.shape[2]%b == 0
	}
	x := g.pick(func(v *value) bool { return fits(v, 2) || fits(v, 3) })
	if x == nil {
		return
	}
	b := 2
	if !fits(x, 2) || fits(x, 3) && g.r.IntN(2) == 0 {
		b = 3
	}
	n, h, w, c := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	shape := []int{n, h / b, w / b, c * b * b}
	options := modelbuild.Options(schema.BuiltinOptionsSpaceToDepthOptions, &schema.SpaceToDepthOptionsT{BlockSize: int32(b)})
	if toSpace {
		shape = []int{n, h * b, w * b, c / (b * b)}
		options = modelbuild.Options(schema.BuiltinOptionsDepthToSpaceOptions, &schema.DepthToSpaceOptionsT{BlockSize: int32(b)})
	}
	g.emit(op, []*value{x}, nil, nil, []*value{g.like(x, shape)}, options)
}

// sinkValue adds a graph output of type typ, which no op reads.
func (g *gen) sinkValue(typ tensor.DType, shape []int, q quant) *value {
	var opts []modelbuild.TensorOption
	if typ != tensor.Float32 {
		opts = []modelbuild.TensorOption{modelbuild.Quant(q.scale, q.zp)}
	}
	v := &value{t: g.b.Tensor(g.name("t"), typ, shape, opts...), shape: slices.Clone(shape), scale: q.scale, zp: q.zp, sink: true}
	g.vals = append(g.vals, v)
	return v
}

// quantize adds a QUANTIZE: of float32 to uint8 or int8, or a
// requantization of uint8 or int8 to another scale and zero point of
// either type. An output of the graph's type is a value later ops read; one
// of another type, a graph output.
func (g *gen) quantize() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	typ := g.typ
	switch {
	case g.typ == tensor.Float32:
		typ = []tensor.DType{tensor.Uint8, tensor.Int8}[g.r.IntN(2)]
	case g.r.IntN(3) != 0: // the graph's type
	case g.typ == tensor.Uint8:
		typ = tensor.Int8
	default:
		typ = tensor.Uint8
	}
	q := quant{0.02 + 0.08*g.r.Float32(), int64(100 + g.r.IntN(57))}
	if typ == tensor.Int8 {
		q.zp -= 128
	}
	var out *value
	if typ == g.typ {
		out = g.newValue(x.shape, q)
	} else {
		out = g.sinkValue(typ, x.shape, q)
	}
	g.emit(schema.BuiltinOperatorQUANTIZE, []*value{x}, nil, nil, []*value{out}, nil)
}

// dequantize adds a DEQUANTIZE of a uint8 or int8 activation to float32:
// a graph output.
func (g *gen) dequantize() {
	x := g.pick(nil)
	if x == nil {
		return
	}
	out := g.sinkValue(tensor.Float32, x.shape, quant{})
	g.emit(schema.BuiltinOperatorDEQUANTIZE, []*value{x}, nil, nil, []*value{out}, nil)
}

// transposeConv adds a TRANSPOSE_CONV over an NHWC activation: an output
// whose convolution through the filter gives back the input's size, as
// TFLite's col2im assumes, and an optional bias.
func (g *gen) transposeConv() {
	x := g.pick(func(v *value) bool { return len(v.shape) == 4 })
	if x == nil {
		return
	}
	h, w, c := x.shape[1], x.shape[2], x.shape[3]
	kh, kw := 1+g.r.IntN(3), 1+g.r.IntN(3)
	sh, sw := 1+g.r.IntN(2), 1+g.r.IntN(2)
	padding := schema.PaddingSAME
	oh, ow := h*sh-g.r.IntN(sh), w*sw-g.r.IntN(sw)
	if g.r.IntN(2) == 0 {
		padding = schema.PaddingVALID
		oh, ow = (h-1)*sh+kh+g.r.IntN(sh), (w-1)*sw+kw+g.r.IntN(sw)
	}
	outC := 1 + g.r.IntN(8)
	shape := []int{x.shape[0], oh, ow, outC}
	if tensor.NumElements(shape) > maxElements {
		return
	}
	filter, bias, oq := g.weights(x, []int{outC, kh, kw, c}, outC, kh*kw*c)
	out := g.newValue(shape, oq)
	size := g.b.Const(g.name("shape"), tensor.Int32, []int{4}, int32s(shape...))
	order := func(act []int) []int {
		ins := []int{size, filter, act[0]}
		if bias >= 0 {
			ins = append(ins, bias)
		}
		return ins
	}
	g.emit(schema.BuiltinOperatorTRANSPOSE_CONV, []*value{x}, nil, order, []*value{out},
		modelbuild.Options(schema.BuiltinOptionsTransposeConvOptions, &schema.TransposeConvOptionsT{
			Padding: padding, StrideW: int32(sw), StrideH: int32(sh),
		}))
}
