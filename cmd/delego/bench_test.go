package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
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
		want latency
	}{
		{"empty", nil, latency{}},
		{"one", ms(3), latency{1, 3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond, 0}},
		{"odd, unsorted", ms(5, 1, 4, 2, 3), latency{5, time.Millisecond, 3 * time.Millisecond, 5 * time.Millisecond, 3 * time.Millisecond,
			time.Duration(math.Round(math.Sqrt(2) * float64(time.Millisecond)))}},
		{"even: median between the middle two", ms(10, 1, 2, 4), latency{4, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond,
			4250 * time.Microsecond, time.Duration(math.Round(math.Sqrt(12.1875) * float64(time.Millisecond)))}},
		{"equal", ms(2, 2, 2, 2), latency{4, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond, 0}},
	} {
		in := slices.Clone(c.in)
		if got := latencyStats(c.in); got != c.want {
			t.Errorf("%s: latencyStats = %+v, want %+v", c.name, got, c.want)
		}
		if !slices.Equal(in, c.in) {
			t.Errorf("%s: latencyStats reordered its argument", c.name)
		}
	}
}

func TestBuildProfile(t *testing.T) {
	m, err := model.Load(shared.Model(t, "split_concat.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	p := newNodeProfiler()
	// Over 2 runs: node 0 CONCATENATION 6ms, node 1 SPLIT 12ms, node 2 CONCATENATION 2ms.
	p.NodeDone(m, 0, "CONCATENATION", time.Hour) // not active: ignored
	p.active = true
	for range 2 {
		p.NodeDone(m, 0, "CONCATENATION", 3*time.Millisecond)
		p.NodeDone(m, 1, "SPLIT", 6*time.Millisecond)
		p.NodeDone(m, 2, "CONCATENATION", time.Millisecond)
	}
	p.NodeDone(m, 99, "BOGUS", time.Hour) // out of range: ignored
	ops, nodes := buildProfile(p, m, 2)
	wantOps := []opProfile{
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
	_, nodes = buildProfile(p, m, 2)
	if n := nodes[0]; n.Model != "twin" || n.Node != 1 || n.Op != "SPLIT" || len(nodes) != 4 {
		t.Errorf("nodes %+v, want the twin's node 1 first", nodes)
	}
}

func approxOp(a, b opProfile) bool {
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return a.Op == b.Op && a.Count == b.Count && near(a.AvgMs, b.AvgMs) && near(a.Percent, b.Percent) && near(a.Cumulative, b.Cumulative)
}

func TestBenchJSONAndText(t *testing.T) {
	var calls int
	reg := fakeRegistry(map[schema.BuiltinOperator]func(*kernels.Node) error{
		schema.BuiltinOperatorSPLIT:         func(*kernels.Node) error { calls++; return nil },
		schema.BuiltinOperatorCONCATENATION: fill(1),
	})
	model := shared.Model(t, "split_concat.tflite")
	var stdout, stderr bytes.Buffer
	if err := benchWith(context.Background(), []string{model, "--runs", "7", "--warmup", "2", "--json"}, &stdout, &stderr, env{registry: reg}); err != nil {
		t.Fatal(err)
	}
	if calls != 9 {
		t.Errorf("SPLIT ran %d times, want 2 warm-up + 7 timed", calls)
	}
	var r benchReport
	dec := json.NewDecoder(&stdout)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	if r.Model != model || r.Runs != 7 || r.Warmup != 2 || r.Threads != 1 || !(r.MinMs <= r.MedianMs && r.MedianMs <= r.MaxMs) || r.MeanMs < r.MinMs || r.MeanMs > r.MaxMs {
		t.Errorf("report %+v", r)
	}
	counts := map[string]int{}
	for _, p := range r.Profile {
		counts[p.Op] = p.Count
	}
	if counts["CONCATENATION"] != 2 || counts["SPLIT"] != 1 || len(r.Nodes) != 3 {
		t.Errorf("profile %+v nodes %+v", r.Profile, r.Nodes)
	}

	stdout.Reset()
	if err := benchWith(context.Background(), []string{"--runs", "3", model}, &stdout, &stderr, env{registry: reg}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1 thread, 1 warm-up run, 3 timed runs", "latency (ms): min ", "Summary by op type", "CONCATENATION", "Top 10 nodes", "concat/split0"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, stdout.String())
		}
	}
}

func TestBenchErrors(t *testing.T) {
	dir := t.TempDir()
	short := writeFile(t, dir, "short.raw", []byte{1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg := splitConcatRegistry(0)
	model := shared.Model(t, "split_concat.tflite")
	for _, c := range []struct {
		name string
		ctx  context.Context
		args []string
		want string
	}{
		{"wrong input count", context.Background(), []string{model, "--input", short}, "needs 3 --input files"},
		{"cancelled", ctx, []string{model}, "context canceled"},
		{"unresolved op", context.Background(), []string{shared.Model(t, "model_invoking_error.tflite")}, "fake-op-double"},
	} {
		err := benchWith(c.ctx, c.args, &bytes.Buffer{}, &bytes.Buffer{}, env{registry: reg})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
}
