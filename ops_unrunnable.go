package delego

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// This file finds the ops of a model that no runtime of an op table runs,
// for "delego inspect".

// UnrunnableOp is an op of a model, at one version and main tensor type,
// that no runtime here runs, with the nodes that carry it.
type UnrunnableOp struct {
	Subgraph int    `json:"subgraph"` // the subgraph holding the nodes
	Op       string `json:"op"`       // the builtin's name or the custom op's
	Custom   bool   `json:"custom"`   // whether it is a custom op
	Version  int    `json:"version"`  // the op's version in the model
	// Type is the element type of the nodes' main tensor (see
	// kernel.Registration.Main); "" when they have none.
	Type  string `json:"type"`
	Nodes []int  `json:"nodes"` // the operators, by index in the subgraph
	// Reasons say why the kernels, and each plugin that declares the op,
	// do not run it: "runtime: reason".
	Reasons []string `json:"reasons"`
}

// Unrunnable lists the ops of m that no usable runtime of r runs, in the
// order of their first node (empty, never nil, when every op runs). The
// kernels run every subgraph; plugins are given subgraph 0 only, as the
// partitioner plans it.
func (r *OpsReport) Unrunnable(m *model.Model) []UnrunnableOp {
	out := []UnrunnableOp{}
	index := map[string]int{}
	regs := kernels.Builtins()
	for si, sg := range m.Subgraphs() {
		for ni := range sg.NumOperators() {
			n := r.node(m, regs, si, ni)
			if n.reasons == nil {
				continue
			}
			key := fmt.Sprint(si, n.op.Custom, n.op.Op, n.op.Version, n.op.Type)
			i, ok := index[key]
			if !ok {
				i, index[key] = len(out), len(out)
				n.op.Reasons = n.reasons
				out = append(out, n.op)
			}
			out[i].Nodes = append(out[i].Nodes, ni)
		}
	}
	return out
}

// nodeCheck is one node as Unrunnable sees it: its op, version and main
// type, the types of its non-constant tensors (subgraph 0 only: what
// plugins are asked about), and why each runtime does not run it (nil when
// one does).
type nodeCheck struct {
	op      UnrunnableOp
	main    *tensor.DType
	types   []tensor.DType
	reasons []string
}

// node checks operator ni of subgraph si against every runtime of r; regs
// are the CPU kernels, which say which input is an op's main one.
func (r *OpsReport) node(m *model.Model, regs *kernel.Registry, si, ni int) nodeCheck {
	code := m.OpCodeOf(m.Subgraph(si).Operator(ni))
	n := nodeCheck{op: UnrunnableOp{Subgraph: si, Op: code.Name(), Custom: code.Custom != "", Version: code.Version}}
	if n.main = mainType(m, regs, si, ni); n.main != nil {
		n.op.Type = n.main.String()
	}
	if si == 0 {
		n.types = m.NodeView(ni).Types
	}
	row, _ := r.row(n.op.Op, n.op.Custom)
	for _, rt := range r.Runtimes {
		why := n.refusal(row, rt)
		if why == "" {
			return nodeCheck{op: n.op}
		}
		if _, ok := row.supportOf(rt.Name); ok || rt.Name == KernelsRuntime {
			n.reasons = append(n.reasons, rt.Name+": "+why)
		}
	}
	if !slices.ContainsFunc(row.Support, func(s OpSupport) bool { return s.Runtime != KernelsRuntime }) {
		n.reasons = append(n.reasons, "plugins: no plugin found declares it")
	}
	return n
}

// refusal says why runtime rt, which declares row's op as row says, does
// not run the node, or "" when it does.
func (n *nodeCheck) refusal(row OpsRow, rt OpsRuntime) string {
	s, declared := row.supportOf(rt.Name)
	var types []tensor.DType // the types s.Types must hold
	switch {
	case !rt.Usable:
		return "not usable here: " + rt.Reason
	case rt.Name != KernelsRuntime && n.op.Subgraph != 0:
		return "plugins are given subgraph 0 only"
	case !declared:
		return "does not run this op"
	case n.op.Version < s.MinVersion || n.op.Version > s.MaxVersion:
		return "runs versions " + versions(s.MinVersion, s.MaxVersion)
	case rt.Name == KernelsRuntime && n.main != nil:
		types = []tensor.DType{*n.main}
	case rt.Name != KernelsRuntime:
		types = n.types
	}
	for _, t := range types {
		if len(s.Types) > 0 && !slices.Contains(s.Types, t.String()) {
			return fmt.Sprintf("takes %s, not %s", strings.Join(s.Types, ","), t)
		}
	}
	return ""
}

// row finds the op's row.
func (r *OpsReport) row(op string, custom bool) (OpsRow, bool) {
	i := slices.IndexFunc(r.Ops, func(o OpsRow) bool { return o.Op == op && o.Custom == custom })
	if i < 0 {
		return OpsRow{}, false
	}
	return r.Ops[i], true
}

// mainType is the element type of the main tensor of operator ni of
// subgraph si: the input the CPU kernel names (input 0 for an op without
// one), or output 0 for a node without inputs; nil when it has none.
func mainType(m *model.Model, regs *kernel.Registry, si, ni int) *tensor.DType {
	sg := m.Subgraph(si)
	o := sg.Operator(ni)
	code := m.OpCodeOf(o)
	ins, outs := o.Inputs(), o.Outputs()
	var idx int
	reg, _ := regs.Lookup(code.Builtin, code.Custom)
	switch i := reg.MainTensor(len(ins)); {
	case i >= 0 && i < len(ins):
		idx = ins[i]
	case i < 0 && len(outs) > 0:
		idx = outs[0]
	default:
		return nil
	}
	if idx < 0 {
		return nil
	}
	t := sg.Tensor(idx).Type
	return &t
}

// WriteUnrunnable writes ops for people, as "delego inspect" prints them:
// one line per op, version and type with its nodes, then each runtime's
// reason; or a line saying every op runs here.
func WriteUnrunnable(w io.Writer, ops []UnrunnableOp) error {
	var b strings.Builder
	if len(ops) == 0 {
		b.WriteString("\nevery op runs here (on the CPU kernels or a plugin)\n")
	} else {
		fmt.Fprintf(&b, "\nops no runtime here runs (%d):\n", len(ops))
	}
	for _, op := range ops {
		typ := ""
		if op.Type != "" {
			typ = " " + op.Type
		}
		nodes := make([]string, len(op.Nodes))
		for i, n := range op.Nodes {
			nodes[i] = fmt.Sprint(n)
		}
		noun := "node"
		if len(nodes) > 1 {
			noun = "nodes"
		}
		fmt.Fprintf(&b, "  %s version %d%s (subgraph %d, %s %s)\n", op.Op, op.Version, typ, op.Subgraph, noun, firstAndLast(nodes, 8))
		for _, why := range op.Reasons {
			fmt.Fprintf(&b, "    %s\n", why)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
