package core

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/delego/delego/model"
)

// This file is what a benchmark of an Interpreter measures: latency
// statistics over runs, and the time of each node and op type (a
// Profiler that adds them up).

// Latency summarises a set of durations: how many, their least, median,
// greatest and mean, and their (population) standard deviation.
type Latency struct {
	N                              int
	Min, Median, Max, Mean, StdDev time.Duration
}

// LatencyOf computes the statistics of ds without changing it. The median
// of an even count is the mean of the two middle values; the standard
// deviation is the population one.
func LatencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	l := Latency{N: len(s), Min: s[0], Max: s[len(s)-1]}
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

// NodeTimer is a Profiler that adds up each node's time while it is on
// (between Start and Stop), per model: the model asked for, and the CPU
// twin when that ran instead. It is not safe for concurrent use, as the
// Interpreter it times is not.
type NodeTimer struct {
	on     bool
	models []*model.Model // in the order they first reported
	times  map[*model.Model]*nodeTimes
}

// nodeTimes are one model's node times.
type nodeTimes struct {
	total []time.Duration // by node index
	op    []string
}

// NewNodeTimer returns a NodeTimer, off.
func NewNodeTimer() *NodeTimer {
	return &NodeTimer{times: map[*model.Model]*nodeTimes{}}
}

// Start turns the timer on: NodeDone adds up what it is told from now.
func (p *NodeTimer) Start() { p.on = true }

// Stop turns the timer off: NodeDone ignores what it is told from now.
func (p *NodeTimer) Stop() { p.on = false }

// Timing reports whether the timer is on (PausableProfiler): while it is
// off, Invoke does not time the nodes for it.
func (p *NodeTimer) Timing() bool { return p.on }

// NodeDone adds elapsed to node's time in m while the timer is on
// (Profiler). A node outside m's primary subgraph is ignored.
func (p *NodeTimer) NodeDone(m *model.Model, node int, op string, elapsed time.Duration) {
	if !p.on {
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

// OpTime is the time of one op type: how many nodes ran it, their
// average time per run, its share of the total and the cumulative share
// of it and the op types before it (slowest first).
type OpTime struct {
	Op         string  `json:"op"`
	Count      int     `json:"count"`
	AvgMs      float64 `json:"avg_ms"`
	Percent    float64 `json:"percent"`
	Cumulative float64 `json:"cumulative_percent"`
}

// NodeTime is the time of one node: its index, its op, its first output
// tensor's name, its average time per run and its share of the total.
type NodeTime struct {
	Node int `json:"node"`
	// Model is "twin" for a node of the CPU twin, which ran instead of
	// the model; empty for the model's own.
	Model   string  `json:"model,omitempty"`
	Op      string  `json:"op"`
	Output  string  `json:"output"`
	AvgMs   float64 `json:"avg_ms"`
	Percent float64 `json:"percent"`
}

// Profile turns the totals over runs into per-op-type and per-node
// tables, slowest first (ties by op name, node index). Nodes of a model
// other than asked (the CPU twin) are marked "twin".
func (p *NodeTimer) Profile(asked *model.Model, runs int) ([]OpTime, []NodeTime) {
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
	perRun := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) / float64(max(runs, 1)) }
	nodes := []NodeTime{}
	byOp := map[string]*OpTime{}
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
			nodes = append(nodes, NodeTime{Node: i, Model: which, Op: op, Output: out, AvgMs: perRun(d), Percent: pct(d)})
			if byOp[op] == nil {
				byOp[op] = &OpTime{Op: op}
			}
			byOp[op].Count++
			totals[op] += d
		}
	}
	slices.SortStableFunc(nodes, func(a, b NodeTime) int { return cmp.Compare(b.AvgMs, a.AvgMs) })
	ops := []OpTime{}
	for op, p := range byOp {
		p.AvgMs, p.Percent = perRun(totals[op]), pct(totals[op])
		ops = append(ops, *p)
	}
	slices.SortFunc(ops, func(a, b OpTime) int {
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
