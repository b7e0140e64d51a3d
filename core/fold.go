package core

import (
	"reflect"
	"slices"

	"github.com/delego/delego/model/schema"
)

// Constant folding: a DEQUANTIZE node whose input is a constant of the
// model (fp16 or 8- and 16-bit integer weights stored compactly) computes
// the same float32 values on every Invoke. The interpreter computes them
// once, when it prepares the node, keeps them in the model's store of
// derived data (model.Derived) so that every interpreter of the model
// shares one copy, and makes the node's output a constant that points at
// them. The node then never runs: its consumers read the shared values
// directly, and since they now see a constant input they pack it once at
// Prepare as they do the model's own float weights.
//
// The folded output is read-only from then on: it is not an arena tensor
// (the arena plans only tensors that are neither constant, variable nor
// dynamic), no other node writes it (a tensor has one producer), the
// public Tensor refuses to overwrite a constant, and a node is folded only
// when its output is not one of its graph's inputs or outputs.

// foldKey names the folded output of one node of one subgraph in the
// model's store of derived data: the model is read-only, so the node, its
// constant input and the kernel computing it (interpreters of one model
// may have different registries) say everything the values depend on.
type foldKey struct {
	subgraph, node int
	kernel         reflect.Type
}

// folded is a node's output computed once: its bytes, or why it could not
// be computed (the node then runs on every Invoke, where the error
// surfaces as any kernel's does).
type folded struct {
	data []byte
	err  error
}

// foldable reports whether n, a prepared CPU node, is one the interpreter
// computes once: a DEQUANTIZE that no delegate runs, whose input is a
// constant of fixed size and whose output is an ordinary tensor of the
// graph (not an input or output of it, not a variable) that only CPU
// nodes read (a delegate gets the node's output as it always has).
func (g *graph) foldable(n *node) bool {
	if g.inPartition(n.index) {
		return false
	}
	op := g.sg.Operator(n.index)
	if g.model.OpCodeOf(op).Builtin != schema.BuiltinOperatorDEQUANTIZE {
		return false
	}
	ins, outs := op.Inputs(), op.Outputs()
	if len(ins) != 1 || len(outs) != 1 || ins[0] < 0 || outs[0] < 0 {
		return false
	}
	in, out := g.tensors[ins[0]], g.tensors[outs[0]]
	if !in.Const || in.Dynamic || out.Const || out.Variable || out.Dynamic {
		return false
	}
	if slices.Contains(g.inputs, outs[0]) || slices.Contains(g.outputs, outs[0]) {
		return false
	}
	for _, r := range g.readers()[outs[0]] {
		if g.inPartition(r) {
			return false
		}
	}
	return true
}

// readers lists, per tensor, the nodes that read it (as an input), in
// order; it is worked out once per graph.
func (g *graph) readers() [][]int {
	if g.readBy == nil {
		g.readBy = make([][]int, len(g.tensors))
		for i := range g.sg.NumOperators() {
			for _, ti := range g.sg.Operator(i).Inputs() {
				if ti >= 0 && ti < len(g.readBy) && !slices.Contains(g.readBy[ti], i) {
					g.readBy[ti] = append(g.readBy[ti], i)
				}
			}
		}
	}
	return g.readBy
}

// fold computes n's output once for every interpreter of the model and
// makes it a constant holding those values; n then never runs. It reports
// whether it did: when the kernel fails, n stays an ordinary node.
func (g *graph) fold(n *node) bool {
	out := n.kn.Outputs[0]
	f := g.model.Derived(foldKey{g.index, n.index, reflect.TypeOf(n.op)}, func() any {
		data := make([]byte, out.Bytes())
		saved := out.Data
		out.Data = data
		err := guard(func() error { return n.op.Eval(&n.kn) })
		out.Data = saved
		for _, t := range n.kn.Inputs {
			g.model.Release(t.Data) // read once, for every interpreter
		}
		return folded{data: data, err: err}
	}).(folded)
	if f.err != nil {
		return false
	}
	out.Data, out.Const = f.data, true
	n.folded = true
	return true
}
