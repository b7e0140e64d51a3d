package main

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/delego/delego/model"
)

// This file is what "delego bench" measures: latency statistics, and the
// time of each node and op type (core.Profiler).

// latency summarises a set of durations.
type latency struct {
	N                              int
	Min, Median, Max, Mean, StdDev time.Duration
}

// latencyStats computes the statistics of ds without changing it. The median
// of an even count is the mean of the two middle values; the standard
// deviation is the population one.
func latencyStats(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	l := latency{N: len(s), Min: s[0], Max: s[len(s)-1]}
	if n := len(s); n%2 == 1 {
		l.Median = s[n/2]
	} else {
		l.Median = s[n/2-1] + (s[n/2]-s[n/2-1])/2
	}
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	mean := sum / float64(len(s))
	var sq float64
	for _, d := range s {
		sq += (float64(d) - mean) * (float64(d) - mean)
	}
	l.Mean = time.Duration(math.Round(mean))
	l.StdDev = time.Duration(math.Round(math.Sqrt(sq / float64(len(s)))))
	return l
}

// nodeProfiler is a core.Profiler that adds up each node's time while
// active, per model: the one asked for, and the CPU twin when it ran.
type nodeProfiler struct {
	active bool
	models []*model.Model // in the order they first reported
	times  map[*model.Model]*nodeTimes
}

// nodeTimes are one model's node times.
type nodeTimes struct {
	total []time.Duration // by node index
	op    []string
}

func newNodeProfiler() *nodeProfiler {
	return &nodeProfiler{times: map[*model.Model]*nodeTimes{}}
}

// NodeDone implements core.Profiler.
func (p *nodeProfiler) NodeDone(m *model.Model, node int, op string, elapsed time.Duration) {
	if !p.active {
		return
	}
	t := p.times[m]
	if t == nil {
		n := m.Subgraph(0).NumOperators()
		t = &nodeTimes{total: make([]time.Duration, n), op: make([]string, n)}
		p.times[m] = t
		p.models = append(p.models, m)
	}
	if node < 0 || node >= len(t.total) {
		return
	}
	t.total[node] += elapsed
	t.op[node] = op
}

type opProfile struct {
	Op         string  `json:"op"`
	Count      int     `json:"count"`
	AvgMs      float64 `json:"avg_ms"`
	Percent    float64 `json:"percent"`
	Cumulative float64 `json:"cumulative_percent"`
}

type nodeProfile struct {
	Node int `json:"node"`
	// Model is "twin" for a node of the CPU twin, which ran instead of
	// the model; empty for the model's own.
	Model   string  `json:"model,omitempty"`
	Op      string  `json:"op"`
	Output  string  `json:"output"`
	AvgMs   float64 `json:"avg_ms"`
	Percent float64 `json:"percent"`
}

// buildProfile turns the profiler's totals over runs into per-op-type and
// per-node tables, slowest first (ties by op name, node index).
func buildProfile(p *nodeProfiler, asked *model.Model, runs int) ([]opProfile, []nodeProfile) {
	var all time.Duration
	for _, t := range p.times {
		for _, d := range t.total {
			all += d
		}
	}
	pct := func(d time.Duration) float64 {
		if all == 0 {
			return 0
		}
		return 100 * float64(d) / float64(all)
	}
	perRun := func(d time.Duration) float64 { return ms(d) / float64(max(runs, 1)) }
	nodes := []nodeProfile{}
	byOp := map[string]*opProfile{}
	totals := map[string]time.Duration{}
	for _, m := range p.models {
		t, sg, which := p.times[m], m.Subgraph(0), ""
		if m != asked {
			which = "twin"
		}
		for i, d := range t.total {
			op := t.op[i]
			if op == "" {
				continue // never reported: the node did not run
			}
			out := ""
			if o := sg.Operator(i).Outputs(); len(o) > 0 && o[0] >= 0 {
				out = sg.Tensor(o[0]).Name
			}
			nodes = append(nodes, nodeProfile{Node: i, Model: which, Op: op, Output: out, AvgMs: perRun(d), Percent: pct(d)})
			if byOp[op] == nil {
				byOp[op] = &opProfile{Op: op}
			}
			byOp[op].Count++
			totals[op] += d
		}
	}
	slices.SortStableFunc(nodes, func(a, b nodeProfile) int { return cmp.Compare(b.AvgMs, a.AvgMs) })
	ops := []opProfile{}
	for op, p := range byOp {
		p.AvgMs, p.Percent = perRun(totals[op]), pct(totals[op])
		ops = append(ops, *p)
	}
	slices.SortFunc(ops, func(a, b opProfile) int {
		if c := cmp.Compare(totals[b.Op], totals[a.Op]); c != 0 {
			return c
		}
		return cmp.Compare(a.Op, b.Op)
	})
	var cum time.Duration
	for i := range ops {
		cum += totals[ops[i].Op]
		ops[i].Cumulative = pct(cum)
	}
	return ops, nodes
}
