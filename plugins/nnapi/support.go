package nnapi

import (
	"fmt"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/nnapi/nn"
	"github.com/delego/delego/tensor"
)

// The support declared here is TensorFlow Lite 2.9's NNAPI delegate's, as
// NNAPIDelegateKernel::Validate decides it (tensorflow/lite/delegates/nnapi/
// nnapi_delegate.cc): per op, the highest op version it maps, the NNAPI
// feature level the op needs, and the op's conditions, some of which depend
// on the feature level (per-channel int8 from 29, signed int8 activations
// from 30, ...). Validate calls the level "android_sdk_version"; it is the
// target feature level (target): the runtime's, or lower when every target
// device is older. Where delego departs from TFLite (an op TFLite lowers to
// several NNAPI operations on older levels, a form delego cannot lower yet)
// the check says so in its comment, and the reason says so to the user.

// nnOp is one row of the table: an op TFLite's NNAPI delegate maps, the
// highest version it takes, the feature level NNAPI has it from, and the
// finer check (nil when there is none beyond version and level).
type nnOp struct {
	code     schema.BuiltinOperator
	max      int
	minLevel int64
	check    func(*node) string
}

// nnOps is the table, in the order of the list.
func nnOps() []nnOp {
	return []nnOp{
		{schema.BuiltinOperatorCONV_2D, 3, 27, checkConv},
		{schema.BuiltinOperatorDEPTHWISE_CONV_2D, 3, 27, checkDepthwise},
		{schema.BuiltinOperatorFULLY_CONNECTED, 5, 27, checkFullyConnected},
		{schema.BuiltinOperatorADD, 2, 27, checkAddMul},
		{schema.BuiltinOperatorSUB, 3, 28, checkSub},
		{schema.BuiltinOperatorMUL, 2, 27, checkAddMul},
		{schema.BuiltinOperatorDIV, 1, 28, checkFloatOnly},
		{schema.BuiltinOperatorAVERAGE_POOL_2D, 2, 27, checkAvgPool},
		{schema.BuiltinOperatorMAX_POOL_2D, 2, 27, checkFloatOrQuant8},
		{schema.BuiltinOperatorL2_POOL_2D, 1, 27, checkL2Pool},
		{schema.BuiltinOperatorCONCATENATION, 2, 27, checkConcat},
		{schema.BuiltinOperatorRESHAPE, 1, 27, checkReshape},
		{schema.BuiltinOperatorSQUEEZE, 1, 28, checkSqueeze},
		{schema.BuiltinOperatorSOFTMAX, 2, 27, checkSoftmax},
		{schema.BuiltinOperatorLOGISTIC, 2, 27, checkFloatOrQuant8},
		{schema.BuiltinOperatorTANH, 2, 27, checkTanh},
		{schema.BuiltinOperatorRELU, 2, 27, checkFloatOrQuant8},
		{schema.BuiltinOperatorRELU6, 2, 27, checkFloatOrQuant8},
		{schema.BuiltinOperatorRELU_N1_TO_1, 2, 27, checkFloatOrQuant8},
		{schema.BuiltinOperatorLEAKY_RELU, 1, 29, checkLeakyRelu},
		{schema.BuiltinOperatorPRELU, 1, 29, checkPrelu},
		{schema.BuiltinOperatorHARD_SWISH, 1, 27, checkHardSwish},
		{schema.BuiltinOperatorPAD, 2, 28, checkPad},
		{schema.BuiltinOperatorPADV2, 2, 28, checkPad},
		{schema.BuiltinOperatorRESIZE_BILINEAR, 3, 27, checkResizeBilinear},
		{schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, 3, 29, checkResizeNearest},
		{schema.BuiltinOperatorMEAN, 2, 28, checkMean},
		{schema.BuiltinOperatorTRANSPOSE, 2, 28, checkTranspose},
		{schema.BuiltinOperatorSTRIDED_SLICE, 2, 28, nil},
		{schema.BuiltinOperatorSPLIT, 3, 29, checkSplit},
		{schema.BuiltinOperatorGATHER, 2, 29, checkGather},
		{schema.BuiltinOperatorARG_MAX, 2, 29, checkArgMax},
		{schema.BuiltinOperatorQUANTIZE, 2, 29, checkQuantize},
		{schema.BuiltinOperatorDEQUANTIZE, 2, 27, checkDequantize},
		{schema.BuiltinOperatorUNIDIRECTIONAL_SEQUENCE_LSTM, 2, 29, checkSequenceLSTM},
	}
}

// declaredTypes are the element types Validate lets through for the
// non-constant tensors of some op: the finer checks narrow them per op.
func declaredTypes() []tensor.DType {
	return []tensor.DType{tensor.Float32, tensor.Float16, tensor.Uint8, tensor.Int8, tensor.Int32, tensor.Int16, tensor.Bool}
}

// support is the declared support: every op of nnOps, versions 1 to its
// maximum. What depends on the feature level is CheckNodes' to say.
func support() *delegate.Support {
	s := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}, Custom: map[string]delegate.OpSupport{}}
	for _, op := range nnOps() {
		s.Builtins[op.code] = delegate.OpSupport{Versions: tensor.VersionRange{Min: 1, Max: op.max}, Types: declaredTypes()}
	}
	return s
}

func findOp(code schema.BuiltinOperator) (nnOp, bool) {
	for _, op := range nnOps() {
		if op.code == code {
			return op, true
		}
	}
	return nnOp{}, false
}

// target is what the nodes are checked against: the feature level
// TFLite's delegate targets, and who has it, for the reasons.
type target struct {
	level int64
	// who has the level: `device "npu-x"`, `the NNAPI runtime`.
	who string
	// acceleratorNamed is Validate's is_accelerator_specified.
	acceleratorNamed bool
}

// checkNode applies Validate's conditions to operator n of m's primary
// subgraph at target t: the op, its version, the level NNAPI has it from,
// then the op's own conditions. It returns "" when TFLite's delegate takes
// the node, else the reason.
func checkNode(m *model.Model, n int, t target) string {
	c := newNode(m, n, t)
	op, ok := findOp(c.code)
	if !ok {
		return c.label() + ": TFLite's NNAPI delegate does not map this op"
	}
	if c.version > op.max {
		return fmt.Sprintf("%s: TFLite's NNAPI delegate takes versions up to %d", c.label(), op.max)
	}
	if why := c.needs(op.minLevel, ""); why != "" {
		return why
	}
	if op.check != nil {
		return op.check(c)
	}
	return ""
}

// node is one node under check.
type node struct {
	m       *model.Model
	sg      *model.Subgraph
	index   int
	code    schema.BuiltinOperator
	name    string
	version int
	ins     []int // -1 for an omitted optional input
	outs    []int
	options any // *schema.XxxOptionsT; nil when the node has none
	t       target
}

func newNode(m *model.Model, n int, t target) *node {
	sg := m.Subgraph(0)
	op := sg.Operator(n)
	oc := m.OpCodeOf(op)
	c := &node{m: m, sg: sg, index: n, code: oc.Builtin, name: oc.Name(), version: oc.Version,
		ins: op.Inputs(), outs: op.Outputs(), t: t}
	c.options, _ = op.BuiltinOptions() // unreadable: none, and the op's check refuses it
	return c
}

// label is the node's op and version: "CONV_2D v3".
func (c *node) label() string { return fmt.Sprintf("%s v%d", c.name, c.version) }

// refuse is a reason about the node.
func (c *node) refuse(format string, args ...any) string {
	return c.label() + ": " + fmt.Sprintf(format, args...)
}

// needs is "" when the target has feature level, else the refusal that
// names the level needed and the level there is; form says which form of
// the op needs it ("int8 per-channel"), "" for the op itself.
func (c *node) needs(level int64, form string) string {
	if c.t.level >= level {
		return ""
	}
	what := c.label()
	if form != "" {
		what += " (" + form + ")"
	}
	return fmt.Sprintf("%s needs NNAPI feature level %d; %s has %s", what, level, c.t.who, levelShort(c.t.level))
}

// levelShort is a level as the refusals print it: 28, or "1000006
// (feature level 6)".
func levelShort(l int64) string {
	if l > 1000000 {
		return nn.LevelName(l)
	}
	return fmt.Sprint(l)
}

func (c *node) tensor(ti int) model.TensorInfo { return c.sg.Tensor(ti) }

// in is input i's tensor, or -1 when the node has no such input.
func (c *node) in(i int) int {
	if i < len(c.ins) {
		return c.ins[i]
	}
	return -1
}

// inType is input i's element type (FLOAT64, which no check takes, for a
// missing input).
func (c *node) inType(i int) tensor.DType {
	if ti := c.in(i); ti >= 0 {
		return c.tensor(ti).Type
	}
	return tensor.Float64
}

func (c *node) outType(i int) tensor.DType { return c.tensor(c.outs[i]).Type }

// isConst is TFLite's IsConstantTensor (kTfLiteMmapRo): a buffer with data.
func (c *node) isConst(ti int) bool { return ti >= 0 && c.m.Buffer(c.tensor(ti).Buffer) != nil }

// quant is tensor ti's quantization: scale and zero point of a per-tensor
// quantization (0, 0 without one), and its number of scales.
func (c *node) quant(ti int) (scale float32, zp int64, scales int) {
	q := c.tensor(ti).Quant
	if q == nil || len(q.Scale) == 0 {
		return 0, 0, 0
	}
	scale = q.Scale[0]
	if len(q.ZeroPoint) > 0 {
		zp = q.ZeroPoint[0]
	}
	return scale, zp, len(q.Scale)
}

func (c *node) rank(ti int) int { return len(c.tensor(ti).Shape) }
