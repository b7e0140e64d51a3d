package gpu

import (
	"fmt"
	"slices"

	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// plan is a partition lowered to OpenCL: one kernel per node (RESHAPE
// needs none: its output shares its input's buffer), the tensors each
// reads and writes, and the constants to upload.
type plan struct {
	steps   []step
	tensors []tensorPlan // by tensor index of the partition's subgraph
	inputs  []int        // boundary inputs, in order
	outputs []int        // boundary outputs, in order
	// precision is how the device stores and computes the float tensors;
	// the program opens with its prelude.
	precision precision
}

// bound reports, per tensor, whether some step binds it (or an alias of
// it) to a kernel argument, or the host reads or writes it.
func (p *plan) bound() []bool {
	out := make([]bool, len(p.tensors))
	mark := func(ti int) {
		out[ti] = true
		if a := p.tensors[ti].alias; a >= 0 {
			out[a] = true
		}
	}
	for _, st := range p.steps {
		for _, ti := range st.args {
			mark(ti)
		}
	}
	for _, ti := range slices.Concat(p.inputs, p.outputs) {
		mark(ti)
	}
	return out
}

// step is one node's kernel.
type step struct {
	node   int
	op     string // e.g. "CONV_2D"
	kernel string // the kernel function's name
	src    string // its OpenCL C source, #defines included
	args   []int  // tensor indices bound to its buffer arguments, in order
	global []int  // work items per dimension, before rounding to work-groups
}

// tensorPlan is what a tensor needs on the device.
type tensorPlan struct {
	used  bool
	shape []int
	bytes int
	data  []byte // a constant's float32 bytes (aliasing the partition model)
	alias int    // the tensor whose buffer it shares (RESHAPE); -1 for none
	// host marks a staging tensor: its bytes are the host's (quantized, or
	// float32 over half storage), not elements of the device's precision.
	host bool
}

// lowerer builds a plan from a partition model.
type lowerer struct {
	m  *model.Model
	sg *model.Subgraph
	p  *plan
	// quantized is enable_quantized_inference: UINT8/INT8 tensors are
	// accepted and computed in float (quant.go).
	quantized bool
}

// newLowerer starts a plan for m's primary subgraph.
func newLowerer(m *model.Model) *lowerer {
	sg := m.Subgraph(0)
	l := &lowerer{m: m, sg: sg, p: &plan{tensors: make([]tensorPlan, sg.NumTensors())}, quantized: true}
	for i := range l.p.tensors {
		l.p.tensors[i].alias = -1
	}
	return l
}

// lower lowers every node of the partition's primary subgraph, then its
// boundary: a quantized input or output, or any over half storage, gets a
// staging tensor of the host's bytes and a kernel that converts it
// (quant.go).
func lower(m *model.Model, s settings, prec precision) (*plan, error) {
	l := newLowerer(m)
	l.quantized = s.quantized
	l.p.precision = prec
	sg := l.sg
	boundary := make(map[int]bool)
	for _, ti := range sg.Outputs() {
		boundary[ti] = true
	}
	for i := range sg.NumOperators() {
		name := m.OpCodeOf(sg.Operator(i)).Name()
		if err := l.lowerNode(i); err != nil {
			return nil, fmt.Errorf("node %d (%s): %w", i, name, err)
		}
		if err := l.adjust(i, m.OpCodeOf(sg.Operator(i)).Builtin, boundary); err != nil {
			return nil, fmt.Errorf("node %d (%s): %w", i, name, err)
		}
	}
	var pre []step
	for k, ti := range sg.Inputs() {
		if err := l.use(ti, false); err != nil {
			return nil, fmt.Errorf("input tensor %d: %w", ti, err)
		}
		if l.p.tensors[ti].data != nil {
			return nil, fmt.Errorf("input tensor %d is a constant", ti)
		}
		host, s, err := l.hostTensor(ti, k, true)
		if err != nil {
			return nil, fmt.Errorf("input tensor %d: %w", ti, err)
		}
		if s != nil {
			pre = append(pre, *s)
		}
		l.p.inputs = append(l.p.inputs, host)
	}
	l.p.steps = append(pre, l.p.steps...)
	for k, ti := range sg.Outputs() {
		if ti < 0 || ti >= sg.NumTensors() || !l.p.tensors[ti].used || l.p.tensors[ti].data != nil {
			return nil, fmt.Errorf("output tensor %d is not computed by the partition", ti)
		}
		host, s, err := l.hostTensor(ti, k, false)
		if err != nil {
			return nil, fmt.Errorf("output tensor %d: %w", ti, err)
		}
		if s != nil {
			l.p.steps = append(l.p.steps, *s)
		}
		l.p.outputs = append(l.p.outputs, host)
	}
	return l.p, nil
}

// use marks tensor ti as needed on the device and records its shape and,
// for a constant, its data. On the device every tensor is float32: FLOAT32
// tensors, and with quantized inference quantized ones (a quantized
// constant is dequantized here, at Compile). DEQUANTIZE's constant FLOAT16
// input goes through halfConst instead and never reaches the device.
func (l *lowerer) use(ti int, allowConst bool) error {
	if ti < 0 || ti >= len(l.p.tensors) {
		return fmt.Errorf("tensor %d does not exist", ti)
	}
	t := l.sg.Tensor(ti)
	data := l.m.Buffer(t.Buffer)
	quantized, err := l.checkType(ti, t, data != nil)
	if err != nil {
		return err
	}
	tp := &l.p.tensors[ti]
	n := tensor.NumElements(t.Shape)
	tp.used, tp.shape, tp.bytes = true, t.Shape, 4*n
	if data != nil {
		if !allowConst {
			return fmt.Errorf("tensor %d is a constant where the op computes one", ti)
		}
		if want := n * t.Type.Size(); len(data) != want {
			return fmt.Errorf("constant tensor %d holds %d bytes, its shape %v needs %d", ti, len(data), t.Shape, want)
		}
		if quantized {
			if data, err = dequantConst(ti, t, data); err != nil {
				return err
			}
		}
		tp.data = data
	}
	if tp.bytes == 0 {
		return fmt.Errorf("tensor %d has no elements (shape %v)", ti, t.Shape)
	}
	return nil
}

// lowerNode lowers node i.
func (l *lowerer) lowerNode(i int) error {
	op := l.sg.Operator(i)
	oc := l.m.OpCodeOf(op)
	opts, err := op.BuiltinOptions()
	if err != nil {
		return err
	}
	n := &node{l: l, index: i, name: oc.Name(), in: op.Inputs(), out: op.Outputs(), opts: opts}
	if len(n.out) != 1 && oc.Builtin != schema.BuiltinOperatorSPLIT {
		return fmt.Errorf("%d outputs; the gpu delegate handles 1 (SPLIT several)", len(n.out))
	}
	if ok, err := n.quantOp(oc.Builtin); ok {
		return err
	}
	switch oc.Builtin {
	case schema.BuiltinOperatorADD, schema.BuiltinOperatorSUB, schema.BuiltinOperatorMUL,
		schema.BuiltinOperatorDIV, schema.BuiltinOperatorMAXIMUM, schema.BuiltinOperatorMINIMUM,
		schema.BuiltinOperatorPRELU:
		return n.binary(oc.Builtin)
	case schema.BuiltinOperatorLOGISTIC, schema.BuiltinOperatorTANH, schema.BuiltinOperatorRELU,
		schema.BuiltinOperatorRELU6, schema.BuiltinOperatorRELU_N1_TO_1, schema.BuiltinOperatorLEAKY_RELU,
		schema.BuiltinOperatorHARD_SWISH:
		return n.unary(oc.Builtin)
	case schema.BuiltinOperatorMAX_POOL_2D:
		return n.maxPool()
	case schema.BuiltinOperatorCONCATENATION:
		return n.concat()
	case schema.BuiltinOperatorPAD:
		return n.pad()
	case schema.BuiltinOperatorRESIZE_BILINEAR, schema.BuiltinOperatorRESIZE_NEAREST_NEIGHBOR:
		return n.resize(oc.Builtin)
	case schema.BuiltinOperatorMEAN:
		return n.mean()
	case schema.BuiltinOperatorCONV_2D:
		return n.conv()
	case schema.BuiltinOperatorDEPTHWISE_CONV_2D:
		return n.depthwise()
	case schema.BuiltinOperatorAVERAGE_POOL_2D:
		return n.avgPool()
	case schema.BuiltinOperatorRESHAPE:
		return n.reshape()
	case schema.BuiltinOperatorSOFTMAX:
		return n.softmax()

	// FULLY_CONNECTED, TRANSPOSE_CONV (ops_fc.go); TRANSPOSE, SPLIT, SLICE,
	// STRIDED_SLICE (ops_tensor.go). DEQUANTIZE and QUANTIZE: quantOp.
	case schema.BuiltinOperatorFULLY_CONNECTED:
		return n.fullyConnected()
	case schema.BuiltinOperatorTRANSPOSE_CONV:
		return n.transposeConv()
	case schema.BuiltinOperatorTRANSPOSE:
		return n.transpose()
	case schema.BuiltinOperatorSPLIT:
		return n.split()
	case schema.BuiltinOperatorSLICE:
		return n.slice()
	case schema.BuiltinOperatorSTRIDED_SLICE:
		return n.stridedSlice()
	}
	return fmt.Errorf("not supported by the gpu delegate")
}

// node is one operator being lowered.
type node struct {
	l       *lowerer
	index   int
	name    string
	in, out []int
	opts    any
}

// inputs checks the node has at least min and at most max inputs (-1 for
// an omitted optional one counts).
func (n *node) inputs(min, max int) error {
	if len(n.in) < min || len(n.in) > max {
		return fmt.Errorf("%d inputs, want %d to %d", len(n.in), min, max)
	}
	return nil
}

// mainIO checks that the node has min to max inputs and uses its first
// input (a constant only when constIn) and its outputs (io), returning the
// shapes of that input and the first output: the start of most ops'
// lowering.
func (n *node) mainIO(min, max int, constIn bool) (in, out []int, err error) {
	if err := n.inputs(min, max); err != nil {
		return nil, nil, err
	}
	if err := n.io(n.in[0], constIn); err != nil {
		return nil, nil, err
	}
	return n.shape(n.in[0]), n.shape(n.out[0]), nil
}

// shape is tensor ti's shape (after use).
func (n *node) shape(ti int) []int { return n.l.p.tensors[ti].shape }

// emit appends the node's kernel.
func (n *node) emit(src string, args []int, global ...int) {
	n.emitNamed(kernelName(n.index), src, args, global...)
}

// emitNamed appends one of the node's kernels when it has several (one per
// input of a CONCATENATION); kernel is the function's name in src.
func (n *node) emitNamed(kernel, src string, args []int, global ...int) {
	n.l.p.steps = append(n.l.p.steps, step{
		node: n.index, op: n.name, kernel: kernel, src: src, args: slices.Clone(args), global: global,
	})
}

// where names the step in errors: "node 3 (CONV_2D)", or for a boundary
// conversion, which has no node, "input 0: DEQUANTIZE".
func (s *step) where() string {
	if s.node < 0 {
		return s.op
	}
	return fmt.Sprintf("node %d (%s)", s.node, s.op)
}

func kernelName(node int) string { return fmt.Sprintf("node%d", node) }
