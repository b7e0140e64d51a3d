package core

import (
	"errors"
	"fmt"
	"strings"

	"github.com/delego/delego/internal/words"
)

// This file renders a PlanReport for people: Text is the whole plan
// ("delego plan"), SummaryLine the plan in one line, Dot the plan as a
// graph, and the fallback lines Text shares with plan_story.go's account
// of a run.

// Text is the plan for people: the model and its CPU twin, the delegates
// and their devices, the summary line, each partition with its nodes (and
// the reasons of higher-priority delegates that refused them) and boundary
// tensors, the nodes left on the CPU with each delegate's reason, the
// execution order, the fallbacks and the error.
func (r *PlanReport) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %s\n", r.Model)
	if r.Twin != nil {
		fmt.Fprintf(&b, "CPU twin: %s runs instead: %s; the plan below is the model's\n", r.Twin.Path, WhatFailed(r.Twin.Fallbacks))
		for _, q := range r.Twin.Requantized {
			fmt.Fprintf(&b, "  %s\n", q)
		}
	}
	if len(r.Delegates) == 0 {
		fmt.Fprintln(&b, "delegates: none: every node runs on delego's CPU kernels")
	} else {
		fmt.Fprintf(&b, "delegates: %s (in priority order)\n", strings.Join(r.Delegates, ", "))
		for _, d := range r.Devices {
			for _, dev := range d.Devices {
				fmt.Fprintf(&b, "  %s device %s: %s\n", d.Delegate, dev.Name, dev.Description)
			}
		}
	}
	fmt.Fprintln(&b, r.SummaryLine())
	for _, p := range r.Partitions {
		r.writePartition(&b, p)
	}
	r.writeCPUNodes(&b)
	for _, sg := range r.Subgraphs {
		fmt.Fprintf(&b, "\nsubgraph %d (%q, %d nodes): on the CPU: %s\n", sg.Index, sg.Name, sg.Nodes, sg.Reason)
	}
	if len(r.Partitions) > 0 {
		var steps []string
		for _, s := range r.Steps {
			if s.Partition != nil {
				steps = append(steps, fmt.Sprintf("partition %d", *s.Partition))
			} else {
				steps = append(steps, fmt.Sprintf("node %d", *s.Node))
			}
		}
		fmt.Fprintf(&b, "\nexecution order: %s\n", strings.Join(steps, ", "))
	}
	if len(r.Fallbacks) > 0 {
		fmt.Fprintln(&b, "\nfallbacks:")
		for _, fb := range r.Fallbacks {
			fmt.Fprintf(&b, "  %s\n", describeFallback(fb, r.Twin))
		}
	}
	if r.Error != "" {
		fmt.Fprintf(&b, "\n%s\n", r.Error)
	}
	return b.String()
}

// writePartition writes p's section of Text.
func (r *PlanReport) writePartition(b *strings.Builder, p PlanPartition) {
	fmt.Fprintf(b, "\npartition %d on %s: %s", p.Index, p.Delegate, words.Plural(len(p.Nodes), "node", "nodes"))
	switch {
	case p.Fallback != "" && p.Fallback != OutcomeCPU:
		fmt.Fprint(b, ", cannot compile here")
	case p.FellBack:
		fmt.Fprint(b, ", fell back to the CPU")
	}
	fmt.Fprintln(b)
	if p.CannotCompile != "" {
		fmt.Fprintf(b, "  why: %s\n  then: %s\n", p.CannotCompile, outcomeText(p.Fallback, r.Twin))
	}
	fmt.Fprintln(b, "  nodes:")
	for _, n := range p.Nodes {
		fmt.Fprintf(b, "    %d %s v%d\n", n.Node, n.Op, n.Version)
		for _, reason := range n.Reasons {
			fmt.Fprintf(b, "      not %s\n", reason)
		}
	}
	for _, side := range []struct {
		what string
		ts   []PlanTensor
	}{{"inputs", p.Inputs}, {"outputs", p.Outputs}} {
		fmt.Fprintf(b, "  %s:\n", side.what)
		for _, t := range side.ts {
			fmt.Fprintf(b, "    tensor %d %q\n", t.Tensor, t.Name)
		}
	}
}

// writeCPUNodes writes the nodes left on the CPU, for Text.
func (r *PlanReport) writeCPUNodes(b *strings.Builder) {
	if len(r.CPUNodes) == 0 {
		return
	}
	fmt.Fprintln(b, "\non the CPU:")
	for _, n := range r.CPUNodes {
		fmt.Fprintf(b, "  %d %s v%d\n", n.Node, n.Op, n.Version)
		if len(n.Reasons) == 0 {
			fmt.Fprintln(b, "    no delegate")
		}
		for _, reason := range n.Reasons {
			fmt.Fprintf(b, "    %s\n", reason)
		}
		if n.NoCPUKernel {
			fmt.Fprintln(b, "    no CPU kernel either: it runs nowhere")
		}
		if p := n.FusedInto; p != nil {
			fmt.Fprintf(b, "    %s (node %d) fused into %s (node %d): it runs as that node's activation\n",
				n.Op, n.Node, r.opOf(*p), *p)
		}
		if n.Folded {
			fmt.Fprintln(b, "    folded: its constant output is computed once, when the interpreter is prepared")
		}
	}
}

// opOf is the op of CPU node i, for Text.
func (r *PlanReport) opOf(i int) string {
	for _, n := range r.CPUNodes {
		if n.Node == i {
			return n.Op
		}
	}
	return "?"
}

// SummaryLine is the plan in one line: "N nodes: X on delegates in P
// partitions, Y on the CPU", with the nodes that fell back, or that there
// is no delegate.
func (r *PlanReport) SummaryLine() string {
	s := r.Summary
	line := fmt.Sprintf("%s: %d on delegates in %s, %d on the CPU",
		words.Plural(s.Nodes, "node", "nodes"), s.DelegatedNodes, words.Plural(s.Partitions, "partition", "partitions"), s.CPUNodes)
	if s.FallbackNodes > 0 {
		line += fmt.Sprintf(" (%d of them after a fallback)", s.FallbackNodes)
	}
	if len(r.Delegates) == 0 {
		line += " (no delegate)"
	}
	return line
}

// outcomeText says in words what a run does about a partition that cannot
// compile (a plan's outcome; twin for OutcomeTwin).
func outcomeText(outcome string, twin *PlanTwin) string {
	switch outcome {
	case OutcomeCPU:
		return "its nodes run on delego's CPU kernels"
	case OutcomeTwin:
		return "the CPU twin " + twin.Path + " runs instead"
	case OutcomeError:
		return "the settings allow no fallback (fallback_settings.allow_automatic_fallback_on_compilation_error), so the run stops with this error"
	}
	return "the fallback settings allow the CPU to take over, but no CPU kernel runs some of its nodes and there is no CPU twin to run instead"
}

// describeFallback says what fell back, where and why, in one line.
// A plan's fallback says what a run would do about it (Outcome, with the
// twin for OutcomeTwin); a run's fallback happened, so its nodes run on
// the CPU.
func describeFallback(fb PlanFallback, twin *PlanTwin) string {
	msg := words.OneLine(fb.Error)
	nodes := words.Plural(len(fb.Nodes), "node", "nodes")
	then := "it runs on the CPU"
	if fb.Partition < 0 {
		then = "the nodes it would have run stay on the CPU"
	}
	switch fb.Outcome {
	case "", OutcomeCPU:
	case OutcomeCPUOnce:
		then = "the CPU ran it this time; its plugin restarts for the next run"
	case OutcomeTwinOnce:
		then = "the CPU twin ran this time; its plugin restarts for the next run"
	case OutcomeRestarted:
		return fmt.Sprintf("partition %d (%s, %s): restarted its plugin after: %s", fb.Partition, fb.Delegate, nodes, msg)
	case OutcomeRestartsPaused:
		return fmt.Sprintf("partition %d (%s, %s): %s", fb.Partition, fb.Delegate, nodes, msg)
	case OutcomeRecovered:
		return fmt.Sprintf("partition %d (%s, %s): back on its restarted plugin after: %s", fb.Partition, fb.Delegate, nodes, msg)
	default:
		then = outcomeText(fb.Outcome, twin)
	}
	if fb.Partition < 0 {
		return fmt.Sprintf("delegate %s: %s error: %s; %s", fb.Delegate, fb.Stage, msg, then)
	}
	return fmt.Sprintf("partition %d (%s, %s): %s error: %s; %s", fb.Partition, fb.Delegate, nodes, fb.Stage, msg, then)
}

// Dot renders the plan in Graphviz's DOT language (partition.Plan.Dot over
// the model's graph): each partition a cluster coloured by its delegate,
// CPU nodes grey with their reasons as tooltips, edges labelled with
// tensor indices. Only a report PlanModel or Interpreter.Report made holds
// the graph; for another (one decoded from JSON, say) Dot is an error.
func (r *PlanReport) Dot() (string, error) {
	if r.plan == nil {
		return "", errors.New("this plan holds no graph to draw: only a plan PlanModel or Interpreter.Report made renders as DOT")
	}
	return r.plan.Dot(r.graph), nil
}
