package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/testsupport/shared"
)

func TestBenchJSONAndText(t *testing.T) {
	var calls int
	reg := fakeRegistry(map[schema.BuiltinOperator]func(*kernel.Node) error{
		schema.BuiltinOperatorSPLIT:         func(*kernel.Node) error { calls++; return nil },
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
	if r.Kernels != kernels.Sets() || r.Kernels.Q8 == "" || r.Kernels.Float == "" {
		t.Errorf("kernels %+v, want this process's %+v", r.Kernels, kernels.Sets())
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
	sets := kernels.Sets()
	for _, want := range []string{"1 thread, 1 warm-up run, 3 timed runs", "latency (ms): min ", "CPU kernels: 8-bit " + sets.Q8 + ", float " + sets.Float + "\n", "Summary by op type", "CONCATENATION", "Top 10 nodes", "concat/split0"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, stdout.String())
		}
	}
}

// TestBenchNoProfile: --no-profile times the same runs with no node timed,
// and reports no profile, in text or JSON.
func TestBenchNoProfile(t *testing.T) {
	model := shared.Model(t, "split_concat.tflite")
	var stdout, stderr bytes.Buffer
	if err := benchWith(context.Background(), []string{model, "--runs", "5", "--no-profile", "--json"}, &stdout, &stderr, env{}); err != nil {
		t.Fatal(err)
	}
	var r map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	if _, ok := r["profile"]; ok || r["nodes"] != nil || r["runs"] != 5.0 || !(r["median_ms"].(float64) > 0) {
		t.Errorf("JSON %s", stdout.String())
	}
	stdout.Reset()
	if err := benchWith(context.Background(), []string{model, "--runs", "5", "--no-profile"}, &stdout, &stderr, env{}); err != nil {
		t.Fatal(err)
	}
	if out := stdout.String(); !strings.HasSuffix(out, "\n") || !strings.Contains(out, "latency (ms): min ") || strings.Contains(out, "Summary by op type") || strings.Contains(out, "Top 10") {
		t.Errorf("text:\n%s", out)
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
