package partition

import (
	"fmt"
	"strings"
)

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

	writeEdges(&b, g)
	b.WriteString("}\n")
	return b.String()
}

// writeEdges draws g's tensors: an edge from each producer to each node
// that reads the tensor (labelled with its index), and the graph's inputs
// and outputs as small plain nodes. Constant tensors are not drawn.
func writeEdges(b *strings.Builder, g Graph) {
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
			fmt.Fprintf(b, "  t%d [label=%s, shape=plaintext, style=\"\"];\n", t, dotQuote(fmt.Sprintf("input t%d", t)))
		}
	}
	for _, t := range g.Outputs {
		if t >= 0 && t < g.NumTensors {
			fmt.Fprintf(b, "  out%d [label=%s, shape=plaintext, style=\"\"];\n", t, dotQuote(fmt.Sprintf("output t%d", t)))
			if producer[t] >= 0 {
				fmt.Fprintf(b, "  n%d -> out%d;\n", producer[t], t)
			} else {
				fmt.Fprintf(b, "  t%d -> out%d;\n", t, t)
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
				fmt.Fprintf(b, "  n%d -> n%d [label=\"t%d\"];\n", producer[t], i, t)
			case isInput[t]:
				fmt.Fprintf(b, "  t%d -> n%d;\n", t, i)
			}
		}
	}
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
