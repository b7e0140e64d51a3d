package partition

import (
	"fmt"
	"strings"
)

// Explain lists the plan for people: a summary, the steps in execution order
// with every partition's nodes and boundary tensors, and every node that stays
// on the CPU with each delegate's reason for refusing it, plus delegated nodes
// that a higher-priority delegate refused.
func (p *Plan) Explain() string {
	var b strings.Builder
	perDelegate := map[string]int{} // counted here, printed in step order
	var delegates []string
	for _, pt := range p.Partitions {
		if perDelegate[pt.Delegate] == 0 {
			delegates = append(delegates, pt.Delegate)
		}
		perDelegate[pt.Delegate]++
	}
	fmt.Fprintf(&b, "%d nodes: %d partition(s)", len(p.Nodes), len(p.Partitions))
	for k, d := range delegates {
		sep := ", "
		if k == 0 {
			sep = " ("
		}
		fmt.Fprintf(&b, "%s%s %d", sep, d, perDelegate[d])
	}
	if len(delegates) > 0 {
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ", %d node(s) on the CPU\n", len(p.CPUNodes))

	b.WriteString("steps:\n")
	for k, s := range p.Steps {
		if s.Partition < 0 {
			fmt.Fprintf(&b, "  %3d. cpu  node %d %s\n", k, s.Node, p.op(s.Node))
			continue
		}
		pt := &p.Partitions[s.Partition]
		fmt.Fprintf(&b, "  %3d. partition %d on %s: %d node(s) %v, inputs %v, outputs %v\n",
			k, s.Partition, pt.Delegate, len(pt.Nodes), pt.Nodes, pt.Inputs, pt.Outputs)
		for _, i := range pt.Nodes {
			fmt.Fprintf(&b, "         node %d %s\n", i, p.op(i))
			for _, r := range p.Nodes[i].Reasons {
				fmt.Fprintf(&b, "           not %s\n", r)
			}
		}
	}
	if len(p.CPUNodes) > 0 {
		b.WriteString("on the CPU:\n")
		for _, c := range p.CPUNodes {
			fmt.Fprintf(&b, "  node %d %s\n", c.Node, p.op(c.Node))
			if len(c.Reasons) == 0 {
				b.WriteString("    no delegate\n")
			}
			for _, r := range c.Reasons {
				fmt.Fprintf(&b, "    %s\n", r)
			}
		}
	}
	return b.String()
}

// op is node i's op name, when the plan knows it.
func (p *Plan) op(i int) string {
	if i >= 0 && i < len(p.ops) && p.ops[i] != "" {
		return "(" + p.ops[i] + ")"
	}
	return ""
}

// colour is the k-th colour of a small palette, cycled.
func colour(k int) string {
	palette := [...]string{"#8ecae6", "#ffb703", "#90be6d", "#cdb4db", "#f28482", "#bde0fe"}
	return palette[k%len(palette)]
}

// Dot renders the plan over g, the graph it was made from, in Graphviz's DOT
// language: each partition is a cluster coloured by its delegate, CPU nodes
// are grey with their reasons as tooltips, edges are tensors (labelled with
// their index), and graph inputs and outputs are small plain nodes.
func (p *Plan) Dot(g Graph) string {
	var b strings.Builder
	b.WriteString("digraph plan {\n  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n")
	delegateColour := map[string]string{} // lookup only
	for _, pt := range p.Partitions {
		if _, ok := delegateColour[pt.Delegate]; !ok {
			delegateColour[pt.Delegate] = colour(len(delegateColour))
		}
	}
	label := func(i int) string {
		if i < len(g.Nodes) {
			return fmt.Sprintf("%d: %s", i, g.Nodes[i].Op)
		}
		return fmt.Sprint(i)
	}
	for k, pt := range p.Partitions {
		fmt.Fprintf(&b, "  subgraph cluster_p%d {\n    label=%s;\n    style=filled;\n    color=%s;\n    fillcolor=%s;\n",
			k, dotQuote(fmt.Sprintf("partition %d: %s (%d node(s))", k, pt.Delegate, len(pt.Nodes))),
			dotQuote(delegateColour[pt.Delegate]), dotQuote(delegateColour[pt.Delegate]+"40"))
		for _, i := range pt.Nodes {
			tip := fmt.Sprintf("partition %d on %s", k, pt.Delegate)
			if r := p.Nodes[i].Reasons; len(r) > 0 {
				tip += "\nnot " + strings.Join(r, "\nnot ")
			}
			fmt.Fprintf(&b, "    n%d [label=%s, fillcolor=%s, tooltip=%s];\n",
				i, dotQuote(label(i)), dotQuote(delegateColour[pt.Delegate]), dotQuote(tip))
		}
		b.WriteString("  }\n")
	}
	for _, c := range p.CPUNodes {
		tip := "CPU"
		if len(c.Reasons) > 0 {
			tip += ":\n" + strings.Join(c.Reasons, "\n")
		}
		fmt.Fprintf(&b, "  n%d [label=%s, fillcolor=\"#e0e0e0\", tooltip=%s];\n", c.Node, dotQuote(label(c.Node)), dotQuote(tip))
	}

	producer := make([]int, g.NumTensors)
	for t := range producer {
		producer[t] = -1
	}
	for i, nd := range g.Nodes {
		for _, t := range nd.Outputs {
			if t >= 0 && t < g.NumTensors {
				producer[t] = i
			}
		}
	}
	isConst := func(t int) bool { return t < len(g.Constant) && g.Constant[t] }
	for _, t := range g.Inputs {
		if t >= 0 && t < g.NumTensors {
			fmt.Fprintf(&b, "  t%d [label=%s, shape=plaintext, style=\"\"];\n", t, dotQuote(fmt.Sprintf("input t%d", t)))
		}
	}
	for _, t := range g.Outputs {
		if t >= 0 && t < g.NumTensors {
			fmt.Fprintf(&b, "  out%d [label=%s, shape=plaintext, style=\"\"];\n", t, dotQuote(fmt.Sprintf("output t%d", t)))
			if producer[t] >= 0 {
				fmt.Fprintf(&b, "  n%d -> out%d;\n", producer[t], t)
			} else {
				fmt.Fprintf(&b, "  t%d -> out%d;\n", t, t)
			}
		}
	}
	isInput := make([]bool, g.NumTensors)
	for _, t := range g.Inputs {
		if t >= 0 && t < g.NumTensors {
			isInput[t] = true
		}
	}
	for i, nd := range g.Nodes {
		for _, t := range nd.Inputs {
			if t < 0 || t >= g.NumTensors || isConst(t) {
				continue
			}
			switch {
			case producer[t] >= 0:
				fmt.Fprintf(&b, "  n%d -> n%d [label=\"t%d\"];\n", producer[t], i, t)
			case isInput[t]:
				fmt.Fprintf(&b, "  t%d -> n%d;\n", t, i)
			}
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// dotQuote quotes s as a DOT string.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r', '\t':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
