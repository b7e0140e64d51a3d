package control

import (
	"fmt"
	"slices"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// whileOp is WHILE: the node's inputs are the loop's first state; while
// the cond subgraph, given the state, answers true, the body subgraph
// makes the next state from it; the last state is the node's outputs. When
// the body's outputs are not the shape of its inputs (or are only known
// when it runs), the state may change shape from one iteration to the
// next, and the outputs are dynamic.
type whileOp struct {
	cond, body int
	condOut    []*tensor.Tensor // the cond subgraph's answer, one bool
}

func newWhile(info kernel.OpInfo) (kernel.Op, error) {
	o := &whileOp{condOut: []*tensor.Tensor{{Name: "WHILE condition", Type: tensor.Bool, Dynamic: true}}}
	if tbl, ok := info.Options(schema.BuiltinOptionsWhileOptions); ok {
		var opts schema.WhileOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.cond, o.body = int(opts.CondSubgraphIndex()), int(opts.BodySubgraphIndex())
	}
	return o, nil
}

// Prepare checks the subgraphs against the node and each other, and sizes
// the outputs: the inputs' shapes, or dynamic.
func (o *whileOp) Prepare(n *kernel.Node) error {
	const op = "WHILE"
	if n.Graphs == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	if err := n.CheckPresent(op); err != nil {
		return err
	}
	if len(n.Outputs) != len(n.Inputs) {
		return fmt.Errorf("%s: %d inputs and %d outputs; a loop's state needs as many of each", op, len(n.Inputs), len(n.Outputs))
	}
	if o.cond == o.body {
		return fmt.Errorf("%s: the cond and body are the same subgraph, %d", op, o.cond)
	}
	condOuts, err := n.Graphs.PrepareGraph(o.cond, n.Inputs)
	if err != nil {
		return fmt.Errorf("%s: cond: %w", op, err)
	}
	if len(condOuts) != 1 {
		return fmt.Errorf("%s: the cond subgraph %d has %d outputs, want 1", op, o.cond, len(condOuts))
	}
	if err := checkCond(condOuts[0], !condOuts[0].Dynamic); err != nil {
		return fmt.Errorf("%s: the cond subgraph %d: %w", op, o.cond, err)
	}
	bodyOuts, err := n.Graphs.PrepareGraph(o.body, n.Inputs)
	if err != nil {
		return fmt.Errorf("%s: body: %w", op, err)
	}
	if len(bodyOuts) != len(n.Inputs) {
		return fmt.Errorf("%s: the body subgraph %d has %d outputs for a state of %d tensors", op, o.body, len(bodyOuts), len(n.Inputs))
	}
	dynamic := false
	for i, t := range bodyOuts {
		if t.Type != n.Inputs[i].Type {
			return kernel.Unsupported("%s: body output %d is %s for an input of %s", op, i, t.Type, n.Inputs[i].Type)
		}
		if n.Outputs[i].Type != t.Type {
			return kernel.Unsupported("%s: output %d is %s for a state of %s", op, i, n.Outputs[i].Type, t.Type)
		}
		dynamic = dynamic || t.Dynamic
	}
	// A body whose outputs have a shape other than its inputs' keeps
	// changing the state's shape, as TFLite says of a body that pads.
	dynamic = dynamic || !sameShapes(bodyOuts, n.Inputs)
	for i, out := range n.Outputs {
		if dynamic {
			out.Dynamic = true
		} else {
			out.Shape = slices.Clone(n.Inputs[i].Shape)
		}
	}
	return nil
}

// checkCond checks a cond subgraph's output: one bool, of shape [] or [1]
// when shaped says its shape is known.
func checkCond(t *tensor.Tensor, shaped bool) error {
	if t.Type != tensor.Bool {
		return fmt.Errorf("output is %s, want BOOL", t.Type)
	}
	if shaped && len(t.Shape) != 0 && !slices.Equal(t.Shape, []int{1}) {
		return fmt.Errorf("output has shape %v, want [] or [1]", t.Shape)
	}
	return nil
}

// Eval runs the loop.
func (o *whileOp) Eval(n *kernel.Node) error {
	for i, in := range n.Inputs {
		if err := kernel.CopyTensor(n.Outputs[i], in); err != nil {
			return fmt.Errorf("WHILE: output %d: %w", i, err)
		}
	}
	for {
		if err := n.Graphs.RunGraph(o.cond, n.Outputs, o.condOut); err != nil {
			return fmt.Errorf("WHILE: cond: %w", err)
		}
		if err := checkCond(o.condOut[0], true); err != nil {
			return fmt.Errorf("WHILE: the cond subgraph %d: %w", o.cond, err)
		}
		if o.condOut[0].Data[0] == 0 {
			return nil
		}
		if err := n.Graphs.RunGraph(o.body, n.Outputs, n.Outputs); err != nil {
			return fmt.Errorf("WHILE: body: %w", err)
		}
	}
}

// ifOp is IF: input 0, a bool, picks the then or the else subgraph, which
// runs on the other inputs and gives the outputs. Outputs whose shapes the
// branches disagree on (or know only when they run) are dynamic.
type ifOp struct {
	then, els int
	branch    [2][]*tensor.Tensor // [then, else]: the branches' outputs at Prepare
}

func newIf(info kernel.OpInfo) (kernel.Op, error) {
	o := &ifOp{}
	if tbl, ok := info.Options(schema.BuiltinOptionsIfOptions); ok {
		var opts schema.IfOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.then, o.els = int(opts.ThenSubgraphIndex()), int(opts.ElseSubgraphIndex())
	}
	return o, nil
}

// Prepare checks the condition and both branches, and sizes the outputs.
func (o *ifOp) Prepare(n *kernel.Node) error {
	const op = "IF"
	if n.Graphs == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	if err := n.CheckPresent(op); err != nil {
		return err
	}
	if len(n.Inputs) == 0 {
		return fmt.Errorf("%s: no inputs; input 0 is the condition", op)
	}
	cond := n.Inputs[0]
	if cond.Type != tensor.Bool {
		return kernel.Unsupported("%s: condition of type %s (want BOOL)", op, cond.Type)
	}
	if cond.NumElements() != 1 {
		return fmt.Errorf("%s: the condition has shape %v; it must hold one value", op, cond.Shape)
	}
	dynamic := false
	for b, sg := range [2]int{o.then, o.els} {
		outs, err := n.Graphs.PrepareGraph(sg, n.Inputs[1:])
		if err != nil {
			return fmt.Errorf("%s: %s branch: %w", op, branchName(b), err)
		}
		if len(outs) != len(n.Outputs) {
			return fmt.Errorf("%s: the %s subgraph %d has %d outputs, the node %d", op, branchName(b), sg, len(outs), len(n.Outputs))
		}
		for i, t := range outs {
			if t.Type != n.Outputs[i].Type {
				return kernel.Unsupported("%s: the %s subgraph's output %d is %s for an output of %s", op, branchName(b), i, t.Type, n.Outputs[i].Type)
			}
			dynamic = dynamic || t.Dynamic
		}
		o.branch[b] = outs
	}
	dynamic = dynamic || !sameShapes(o.branch[0], o.branch[1])
	for i, out := range n.Outputs {
		if dynamic {
			out.Dynamic = true
		} else {
			out.Shape = slices.Clone(o.branch[0][i].Shape)
		}
	}
	return nil
}

func branchName(b int) string {
	if b == 0 {
		return "then"
	}
	return "else"
}

// Eval runs the branch the condition picks.
func (o *ifOp) Eval(n *kernel.Node) error {
	sg, b := o.then, 0
	if n.Inputs[0].Data[0] == 0 {
		sg, b = o.els, 1
	}
	if err := n.Graphs.RunGraph(sg, n.Inputs[1:], n.Outputs); err != nil {
		return fmt.Errorf("IF: %s branch: %w", branchName(b), err)
	}
	return nil
}

// callOnceOp is CALL_ONCE: it runs its init subgraph (which has no inputs
// or outputs, and typically assigns resource variables) the first time
// the interpreter runs it, and does nothing after.
type callOnceOp struct{ init int }

func newCallOnce(info kernel.OpInfo) (kernel.Op, error) {
	o := &callOnceOp{}
	if tbl, ok := info.Options(schema.BuiltinOptionsCallOnceOptions); ok {
		var opts schema.CallOnceOptions
		opts.Init(tbl.Bytes, tbl.Pos)
		o.init = int(opts.InitSubgraphIndex())
	}
	return o, nil
}

// Prepare checks the node and its init subgraph: neither has inputs or
// outputs.
func (o *callOnceOp) Prepare(n *kernel.Node) error {
	const op = "CALL_ONCE"
	if n.Graphs == nil {
		return fmt.Errorf("%s: %w", op, errNoInterpreter)
	}
	if len(n.Inputs) != 0 || len(n.Outputs) != 0 {
		return fmt.Errorf("%s: %d inputs and %d outputs, want none", op, len(n.Inputs), len(n.Outputs))
	}
	outs, err := n.Graphs.PrepareGraph(o.init, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if len(outs) != 0 {
		return fmt.Errorf("%s: the init subgraph %d has %d outputs, want none", op, o.init, len(outs))
	}
	return nil
}

// Eval runs the init subgraph unless it ran before.
func (o *callOnceOp) Eval(n *kernel.Node) error {
	if err := n.Graphs.RunOnce(o.init); err != nil {
		return fmt.Errorf("CALL_ONCE: %w", err)
	}
	return nil
}
