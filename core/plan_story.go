package core

import (
	"fmt"
	"slices"
	"strings"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/internal/words"
)

// This file tells what a run's fallbacks led to, as "delego run" says it
// after a run (Narrative), and the plan in a few lines for its -v
// (Outline).

// Narrative says in a line where the result of the run r reports came
// from when a delegate failed: the CPU twin, the CPU fallback or a
// restarted plugin; with verbose, every fallback and restart on its own
// line. It is empty when nothing failed. Each line ends in a newline.
func (r *PlanReport) Narrative(verbose bool) string {
	var b strings.Builder
	if r.Twin != nil {
		// The twin's line names every failure that led to it.
		fmt.Fprintf(&b, "delego: %s: the result came from the CPU twin %s\n", WhatFailed(r.Twin.Fallbacks), r.Twin.Path)
		return b.String()
	}
	r.writeFallbacks(&b, verbose)
	if r.older > 0 {
		fmt.Fprintf(&b, "delego: %s before these were not kept: the counts above are of the last %d\n",
			words.Plural(r.older, "fallback event", "fallback events"), KeptFallbacks)
	}
	return b.String()
}

// writeFallbacks tells what the delegates' failures led to: with verbose,
// every fallback and restart on its own line; else one line for all of
// them.
func (r *PlanReport) writeFallbacks(b *strings.Builder, verbose bool) {
	if len(r.Fallbacks) == 0 {
		return
	}
	if verbose {
		for _, fb := range r.Fallbacks {
			fmt.Fprintf(b, "fallback: %s\n", describeFallback(fb, nil))
		}
		return
	}
	// Partly: some partition never left its delegate, or came back to it.
	ranOnCPU, back, source := map[int]bool{}, false, "the CPU fallback"
	for _, fb := range r.Fallbacks {
		switch fb.Outcome {
		case OutcomeRestarted, OutcomeRecovered:
			back = true
		case OutcomeTwinOnce:
			ranOnCPU[fb.Partition], source = true, "the CPU twin"
		default:
			ranOnCPU[fb.Partition] = true
		}
	}
	partly := back || slices.ContainsFunc(r.Partitions, func(p PlanPartition) bool { return !ranOnCPU[p.Index] })
	switch {
	case len(ranOnCPU) == 0:
		fmt.Fprintf(b, "delego: %s: the result came from the restarted plugin\n", WhatFailed(r.Fallbacks))
	case partly:
		fmt.Fprintf(b, "delego: %s: the result came partly from %s\n", WhatFailed(r.Fallbacks), source)
	default:
		fmt.Fprintf(b, "delego: %s: the result came from %s\n", WhatFailed(r.Fallbacks), source)
	}
}

// story is what befell one delegate or partition, for WhatFailed.
type story struct {
	who, verb, err         string
	once, restarts, pauses int
	standIn                string // who stood in: "the CPU" or "the CPU twin"
	movedAfterHeals        bool
	recovered              bool
}

// WhatFailed says in one line, for each delegate or partition that failed,
// at which stage and why, and what came of it when it was more than a
// fallback: how often its plugin was lost (the CPU standing in for it
// until the plugin was back) and restarted, and whether its restarts
// paused and it recovered.
func WhatFailed(fbs []PlanFallback) string {
	var stories []*story
	byWho := map[string]*story{}
	for _, fb := range fbs {
		who := fb.Delegate
		if fb.Partition >= 0 {
			who = fmt.Sprintf("partition %d on %s", fb.Partition, fb.Delegate)
		}
		st := byWho[who]
		if st == nil {
			verb := "failed"
			switch fb.Stage {
			case string(delegate.StageCompile):
				verb = "failed to compile"
			case string(delegate.StageExecute):
				verb = "failed to run"
			}
			st = &story{who: who, verb: verb, err: words.OneLine(fb.Error), standIn: "the CPU"}
			byWho[who] = st
			stories = append(stories, st)
		}
		st.add(fb.Outcome)
	}
	what := make([]string, len(stories))
	for i, st := range stories {
		what[i] = st.String()
	}
	return strings.Join(what, "; ")
}

// add counts one more event of the story.
func (st *story) add(outcome string) {
	switch outcome {
	case OutcomeCPUOnce:
		st.once++
	case OutcomeTwinOnce:
		st.once++
		st.standIn = "the CPU twin"
	case OutcomeRestarted:
		st.restarts++
	case OutcomeRestartsPaused:
		st.pauses++
	case OutcomeRecovered:
		st.recovered = true
	default:
		st.movedAfterHeals = st.once+st.restarts > 0
	}
}

func (st *story) String() string {
	s := fmt.Sprintf("%s %s (%s)", st.who, st.verb, st.err)
	var then []string
	switch {
	case st.once > 1 && st.restarts > 0:
		then = append(then, fmt.Sprintf("its plugin was lost %s and restarted %s, %s standing in",
			times(st.once), times(st.restarts), st.standIn))
	case st.once > 1:
		then = append(then, fmt.Sprintf("its plugin was lost %s, %s standing in", times(st.once), st.standIn))
	case st.once == 1:
		then = append(then, st.standIn+" stood in")
		fallthrough
	default:
		if st.restarts > 0 {
			then = append(then, "its plugin was restarted "+times(st.restarts))
		}
	}
	if st.pauses > 0 {
		then = append(then, "its restarts paused "+times(st.pauses)+" after failing in a row")
	}
	if st.recovered {
		then = append(then, "then it recovered")
	}
	if st.movedAfterHeals {
		then = append(then, "then "+st.standIn+" took it over")
	}
	if len(then) > 0 {
		s += "; " + strings.Join(then, ", ")
	}
	return s
}

// times says how many times: once, twice, 3 times.
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}

// Outline is the plan in a few lines, as "delego run -v" prints it: the
// delegates and the summary line, then each partition with its nodes.
func (r *PlanReport) Outline() string {
	var b strings.Builder
	if len(r.Delegates) == 0 {
		fmt.Fprintf(&b, "plan: %s\n", r.SummaryLine())
		return b.String()
	}
	fmt.Fprintf(&b, "plan: delegates %s: %s\n", strings.Join(r.Delegates, ", "), r.SummaryLine())
	for _, p := range r.Partitions {
		nodes := make([]string, len(p.Nodes))
		for i, n := range p.Nodes {
			nodes[i] = fmt.Sprint(n.Node)
		}
		if len(nodes) > 12 {
			// The first 11 and the last: node indices are never all alike.
			nodes = append(nodes[:11], "...", nodes[len(nodes)-1])
		}
		state := ""
		if p.FellBack {
			state = " (fell back to the CPU)"
		}
		fmt.Fprintf(&b, "plan: partition %d on %s%s: %s [%s]\n", p.Index, p.Delegate, state,
			words.Plural(len(p.Nodes), "node", "nodes"), strings.Join(nodes, " "))
	}
	return b.String()
}
