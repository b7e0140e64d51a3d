package gpu

import (
	"fmt"
	"slices"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// The support declared here is TensorFlow Lite's GPU delegate's, as its
// model builder decides it (tensorflow/lite/delegates/gpu/common/
// model_builder.cc: each op parser's CheckMaxSupportedOpVersion and
// IsSupported, whose checks live in tensorflow/lite/tools/versioning/
// gpu_compatibility.cc; and GetOpsToReplace's tensor checks). Where a
// condition comes from a parser's Parse rather than IsSupported (TFLite would
// fail at compile time rather than leave the node to the CPU), the check
// says so in its comment. SUPPORT.md lists the table.

// gpuOp is one op TFLite's GPU delegate parses: the highest version its
// parser accepts and the finer check (nil when there is none beyond the
// common ones).
type gpuOp struct {
	code  schema.BuiltinOperator
	max   int
	check func(*nodeCtx) string
}

// gpuOps lists the ops. max is the parser's CheckMaxSupportedOpVersion;
// for parsers without one (RELU_N1_TO_1, HARD_SWISH, MEAN, SPLIT) it is
// the highest version TFLite 2.9 defines for the op, since TFLite takes
// every version of them.
func gpuOps() []gpuOp {
	return []gpuOp{
		{schema.BuiltinOperatorADD, 2, checkAddMul},
		{schema.BuiltinOperatorSUB, 2, checkTwoOperand},
		{schema.BuiltinOperatorMUL, 3, checkAddMul},
		{schema.BuiltinOperatorDIV, 2, checkTwoOperand},
		{schema.BuiltinOperatorMAXIMUM, 2, checkTwoOperand},
		{schema.BuiltinOperatorMINIMUM, 2, checkTwoOperand},
		{schema.BuiltinOperatorCONV_2D, 6, checkConv2D},
		{schema.BuiltinOperatorDEPTHWISE_CONV_2D, 6, checkDepthwiseConv2D},
		{schema.BuiltinOperatorFULLY_CONNECTED, 9, checkFullyConnected},
		{schema.BuiltinOperatorTRANSPOSE_CONV, 3, checkTransposeConv},
		{schema.BuiltinOperatorAVERAGE_POOL_2D, 2, checkPool},
		{schema.BuiltinOperatorMAX_POOL_2D, 2, checkPool},
		{schema.BuiltinOperatorCONCATENATION, 2, checkConcat},
		{schema.BuiltinOperatorRESHAPE, 1, checkOneRuntimeInput},
		{schema.BuiltinOperatorSOFTMAX, 2, checkSoftmax},
		{schema.BuiltinOperatorLOGISTIC, 2, checkUnary},
		{schema.BuiltinOperatorTANH, 2, checkUnary},
		{schema.BuiltinOperatorRELU, 2, nil},
		{schema.BuiltinOperatorRELU6, 2, nil},
		{schema.BuiltinOperatorRELU_N1_TO_1, 1, nil},
		{schema.BuiltinOperatorLEAKY_RELU, 2, nil},
		{schema.BuiltinOperatorPRELU, 1, checkPRelu},
		{schema.BuiltinOperatorHARD_SWISH, 1, checkOneRuntimeInput},
		{schema.BuiltinOperatorPAD, 2, checkPad},
		{schema.BuiltinOperatorRESIZE_BILINEAR, 3, checkResizeBilinear},
		{schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR, 3, checkOneRuntimeInput},
		{schema.BuiltinOperatorMEAN, 3, checkMean},
		{schema.BuiltinOperatorTRANSPOSE, 2, checkOneRuntimeInput},
		{schema.BuiltinOperatorSPLIT, 4, checkSplit},
		{schema.BuiltinOperatorSLICE, 2, checkSlice},
		{schema.BuiltinOperatorSTRIDED_SLICE, 2, checkStridedSlice},
		{schema.BuiltinOperatorDEQUANTIZE, 3, checkDequantize},
		{schema.BuiltinOperatorQUANTIZE, 2, checkQuantize},
	}
}

// declaredTypes are the element types TFLite's GPU delegate accepts for
// non-constant tensors: FLOAT32 and FLOAT16, and INT8/UINT8 with quantized
// inference (which checkNode enforces, as the declared support cannot see
// the settings).
func declaredTypes() []tensor.DType {
	return []tensor.DType{tensor.Float32, tensor.Float16, tensor.Int8, tensor.Uint8}
}

// support is the declared support: every op of gpuOps, versions 1 to its
// maximum.
func support() *delegate.Support {
	s := &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{}, Custom: map[string]delegate.OpSupport{}}
	for _, op := range gpuOps() {
		s.Builtins[op.code] = delegate.OpSupport{Versions: tensor.VersionRange{Min: 1, Max: op.max}, Types: declaredTypes()}
	}
	return s
}

// checkNodes is the finer support check (delegate.Checker's CheckNodes
// without the delegate): one verdict per node of the model's primary
// subgraph.
func checkNodes(data []byte, nodes []int, opts settings) ([]delegate.Verdict, error) {
	m, err := model.New(data)
	if err != nil {
		return nil, fmt.Errorf("gpu: check nodes: %w", err)
	}
	defer m.Close()
	return checkModelNodes(m, nodes, opts)
}

// checkModelNodes is checkNodes on a loaded model.
func checkModelNodes(m *model.Model, nodes []int, opts settings) ([]delegate.Verdict, error) {
	n := m.Subgraph(0).NumOperators()
	out := make([]delegate.Verdict, len(nodes))
	for i, node := range nodes {
		if node < 0 || node >= n {
			return nil, fmt.Errorf("gpu: check nodes: node %d is out of range (the subgraph has %d)", node, n)
		}
		out[i] = checkNode(m, node, opts)
	}
	return out, nil
}

// checkNode applies TFLite's GPU delegate's conditions to operator node of
// m's primary subgraph: the op and its version, the op's own conditions,
// then the tensors' ranks and types.
func checkNode(m *model.Model, node int, opts settings) delegate.Verdict {
	c := newNodeCtx(m, node, opts)
	op, ok := findOp(c.code)
	if !ok {
		return refuse("%s: TFLite's GPU delegate has no parser for this op", c.name)
	}
	if c.version > op.max {
		return refuse("%s: version %d; TFLite's GPU delegate takes versions up to %d", c.name, c.version, op.max)
	}
	// TFLite asks the parser first, then checks the tensors.
	for _, check := range []func(*nodeCtx) string{op.check, checkRanks, checkTypes} {
		if check == nil {
			continue
		}
		if why := check(c); why != "" {
			return delegate.Verdict{Reason: c.name + ": " + why}
		}
	}
	return delegate.Verdict{Accept: true}
}

func findOp(code schema.BuiltinOperator) (gpuOp, bool) {
	for _, op := range gpuOps() {
		if op.code == code {
			return op, true
		}
	}
	return gpuOp{}, false
}

func refuse(format string, args ...any) delegate.Verdict {
	return delegate.Verdict{Reason: fmt.Sprintf(format, args...)}
}

// checkRanks is GetOpsToReplace's shape check: no input or output tensor of
// 5 dimensions or more.
func checkRanks(c *nodeCtx) string {
	for _, ti := range slices.Concat(c.ins, c.outs) {
		if ti >= 0 && len(c.tensor(ti).Shape) > 4 {
			return fmt.Sprintf("%s has %d dimensions; TFLite's GPU delegate takes 4 at most", c.desc(ti), len(c.tensor(ti).Shape))
		}
	}
	return ""
}

// checkTypes is GetOpsToReplace's type check on non-constant tensors:
// FLOAT32 or FLOAT16, and INT8/UINT8 only with quantized inference.
func checkTypes(c *nodeCtx) string {
	for _, ti := range slices.Concat(c.ins, c.outs) {
		if ti < 0 || c.isConst(ti) {
			continue
		}
		switch t := c.tensor(ti).Type; t {
		case tensor.Float32, tensor.Float16:
		case tensor.Int8, tensor.Uint8:
			if !c.opts.quantized {
				return fmt.Sprintf("%s is %s and quantized inference is off", c.desc(ti), t)
			}
		default:
			return fmt.Sprintf("%s is %s; TFLite's GPU delegate takes FLOAT32 or FLOAT16 (and INT8/UINT8 with quantized inference)", c.desc(ti), t)
		}
	}
	return ""
}

// nodeCtx is one node under check.
type nodeCtx struct {
	m       *model.Model
	sg      *model.Subgraph
	code    schema.BuiltinOperator
	name    string
	version int
	ins     []int // -1 for an omitted optional input
	outs    []int
	options any // *schema.XxxOptionsT; nil when the node has none
	opts    settings
}

func newNodeCtx(m *model.Model, node int, opts settings) *nodeCtx {
	sg := m.Subgraph(0)
	op := sg.Operator(node)
	oc := m.OpCodeOf(op)
	c := &nodeCtx{m: m, sg: sg, code: oc.Builtin, name: oc.Name(), version: oc.Version,
		ins: op.Inputs(), outs: op.Outputs(), opts: opts}
	c.options, _ = op.BuiltinOptions() // unreadable: none, and the op's check refuses it
	return c
}

func (c *nodeCtx) tensor(ti int) model.TensorInfo { return c.sg.Tensor(ti) }

// isConst says whether tensor ti holds constant data (TFLite's
// IsConstantTensor: a read-only buffer with data).
func (c *nodeCtx) isConst(ti int) bool { return c.m.Buffer(c.tensor(ti).Buffer) != nil }

// desc names tensor ti for a reason: `tensor 3 "w"`.
func (c *nodeCtx) desc(ti int) string { return fmt.Sprintf("tensor %d %q", ti, c.tensor(ti).Name) }

// shape is tensor ti's shape.
func (c *nodeCtx) shape(ti int) []int { return c.tensor(ti).Shape }

// in returns input i, or -1 when the node has no such input (or it is omitted).
func (c *nodeCtx) in(i int) int {
	if i < len(c.ins) {
		return c.ins[i]
	}
	return -1
}

// runtimeInputs counts the inputs that are present and not constant
// (TFLite's GetNumberOfRuntimeInputs).
func (c *nodeCtx) runtimeInputs() int {
	n := 0
	for _, ti := range c.ins {
		if ti >= 0 && !c.isConst(ti) {
			n++
		}
	}
	return n
}

// constInputs counts the constant inputs.
func (c *nodeCtx) constInputs() int {
	n := 0
	for _, ti := range c.ins {
		if ti >= 0 && c.isConst(ti) {
			n++
		}
	}
	return n
}

// dims formats a shape as TFLite's messages do: [1,2,3].
func dims(shape []int) string {
	s := make([]string, len(shape))
	for i, d := range shape {
		s[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(s, ",") + "]"
}
