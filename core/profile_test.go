package core

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/delego/delego/model"
	"github.com/delego/delego/testsupport/shared"
)

func TestLatencyStats(t *testing.T) {
	ms := func(v ...float64) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x * float64(time.Millisecond))
		}
		return out
	}
	for _, c := range []struct {
		name string
		in   []time.Duration
		want Latency
	}{
		{"empty", nil, Latency{}},
		{"one", ms(3), Latency{1, 3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond, 0}},
		{"odd, unsorted", ms(5, 1, 4, 2, 3), Latency{5, time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 3 * time.Millisecond,
			time.Duration(math.Round(math.Sqrt(2) * float64(time.Millisecond)))}},
		{"even: median between the middle two", ms(10, 1, 2, 4), Latency{4, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond,
			4250 * time.Microsecond, time.Duration(math.Round(math.Sqrt(12.1875) * float64(time.Millisecond)))}},
		{"equal", ms(2, 2, 2, 2), Latency{4, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 0}},
	} {
		in := slices.Clone(c.in)
		if got := LatencyOf(c.in); got != c.want {
			t.Errorf("%s: LatencyOf = %+v, want %+v", c.name, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("%s: LatencyOf reordered its argument", c.name)
		}
	}
}

func TestNodeTimerProfile(t *testing.T) {
	m, err := model.Load(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	p := NewNodeTimer()
	// Over 2 runs: node 0 CONCATENATION 6ms, node 1 SPLIT 12ms, node 2 CONCATENATION 2ms.
	p.NodeDone(m, 0, "CONCATENATION", time.Hour) // not active: ignored
	p.Start()
	for range 2 {
		p.NodeDone(m, 0, "CONCATENATION", 3*time.Millisecond)
		p.NodeDone(m, 1, "SPLIT", 6*time.Millisecond)
		p.NodeDone(m, 2, "CONCATENATION", time.Millisecond)
	}
	p.NodeDone(m, 99, "BOGUS", time.Hour) // out of range: ignored
	ops, nodes := p.Profile(m, 2)
	wantOps := []OpTime{
		{Op: "SPLIT", Count: 1, AvgMs: 6, Percent: 60, Cumulative: 60},
		{Op: "CONCATENATION", Count: 2, AvgMs: 4, Percent: 40, Cumulative: 100},
	}
	if !slices.EqualFunc(ops, wantOps, approxOp) {
		t.Errorf("by op type %+v, want %+v", ops, wantOps)
	}
	var order []int
	for _, n := range nodes {
		order = append(order, n.Node)
	}
	if !slices.Equal(order, []int{1, 0, 2}) || nodes[0].Op != "SPLIT" || math.Abs(nodes[2].AvgMs-1) > 1e-9 || math.Abs(nodes[0].Percent-60) > 1e-9 {
		t.Errorf("nodes %+v, want 1, 0, 2 slowest first", nodes)
	}
	sg := m.Subgraph(0)
	if nodes[0].Output != sg.Tensor(sg.Operator(1).Outputs()[0]).Name || nodes[0].Model != "" {
		t.Errorf("node 1 output %q, model %q", nodes[0].Output, nodes[0].Model)
	}

	// A CPU twin that ran instead reports its own nodes: they are named
	// as the twin has them, and marked.
	twin, err := model.Load(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	p.NodeDone(twin, 1, "SPLIT", 100*time.Millisecond)
	_, nodes = p.Profile(m, 2)
	if n := nodes[0]; n.Model != "twin" || n.Node != 1 || n.Op != "SPLIT" || len(nodes) != 4 {
		t.Errorf("nodes %+v, want the twin's node 1 first", nodes)
	}
}

func approxOp(a, b OpTime) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Op == b.Op && a.Count == b.Count && near(a.AvgMs, b.AvgMs) && near(a.Percent, b.Percent) && near(a.Cumulative, b.Cumulative)
}

// pausableCounter counts the nodes it is told of, and times them only
// while on (a PausableProfiler).
type pausableCounter struct {
	on    bool
	nodes int
}

func (c *pausableCounter) NodeDone(*model.Model, int, string, time.Duration) { c.nodes++ }
func (c *pausableCounter) Timing() bool                                      { return c.on }

// TestPausableProfilerOff: while a PausableProfiler's Timing says false,
// Invoke tells it of no CPU node; while true, of every node each run.
func TestPausableProfilerOff(t *testing.T) {
	m, err := model.Load(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	p := &pausableCounter{}
	it, err := NewInterpreter(m, &Options{Profiler: p})
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	if err := it.AllocateTensors(); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true, false} {
		p.on, p.nodes = on, 0
		for range 2 {
			if err := it.Invoke(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
		if want := map[bool]int{false: 0, true: 6}[on]; p.nodes != want {
			t.Errorf("timing %v: told of %d nodes over 2 runs, want %d", on, p.nodes, want)
		}
	}
}
