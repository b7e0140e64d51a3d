package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/testsupport/shared"
)

// decodeJSON decodes data into v, refusing unknown fields.
func decodeJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}

// plan runs "delego plan" with e and returns its output and error.
func plan(t *testing.T, e env, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = planWith(context.Background(), args, &out, &errOut, e)
	return out.String(), errOut.String(), err
}

// planJSON runs "delego plan --json" and decodes what it printed.
func planJSON(t *testing.T, e env, args ...string) (planReport, error) {
	t.Helper()
	out, _, err := plan(t, e, append(args, "--json")...)
	var r planReport
	decodeJSON(t, []byte(out), &r)
	return r, err
}

func checkContains(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

func TestPlanSplitConcat(t *testing.T) {
	model := shared.Model(t, "split_concat.tflite")
	out, stderr, err := plan(t, env{}, model, "--delegate", "cpu")
	if err != nil || stderr != "" {
		t.Fatalf("err %v, stderr %q", err, stderr)
	}
	checkContains(t, "text plan", out,
		"delegates: cpu (in priority order)\n",
		"3 nodes: 3 on delegates in 1 partition, 0 on the CPU\n",
		"partition 0 on cpu: 3 nodes\n",
		"    0 CONCATENATION v1\n    1 SPLIT v1\n    2 CONCATENATION v1\n",
		"  inputs:\n    tensor 0 \"input1\"\n    tensor 1 \"inputs/rnn1\"\n    tensor 2 \"inputs/rnn2\"\n",
		"    tensor 10 \"outputs/rnn2\"\n",
		"execution order: partition 0\n")

	r, err := planJSON(t, env{}, model, "--delegate", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	want := planSummary{Nodes: 3, DelegatedNodes: 3, Partitions: 1}
	if r.Summary != want || len(r.Partitions) != 1 || len(r.CPUNodes) != 0 || len(r.Fallbacks) != 0 || r.Error != "" {
		t.Fatalf("plan %+v", r)
	}
	p := r.Partitions[0]
	if p.Delegate != "cpu" || p.FellBack || len(p.Nodes) != 3 || p.Nodes[1].Op != "SPLIT" || p.Nodes[1].Version != 1 ||
		len(p.Inputs) != 3 || p.Inputs[0] != (planTensor{Tensor: 0, Name: "input1"}) || len(p.Outputs) != 5 {
		t.Errorf("partition %+v", p)
	}
	if len(r.Steps) != 1 || r.Steps[0].Partition == nil || *r.Steps[0].Partition != 0 || r.Steps[0].Node != nil {
		t.Errorf("steps %+v", r.Steps)
	}

	dot, _, err := plan(t, env{}, model, "--delegate", "cpu", "--format", "dot")
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "dot", dot, "digraph plan {", "subgraph cluster_p0 {", `label="partition 0: cpu (3 node(s))"`,
		`n1 [label="1: SPLIT v1"`, "n0 -> n1")
}

func TestPlanWithoutDelegates(t *testing.T) {
	model := shared.Model(t, "split_concat.tflite")
	out, _, err := plan(t, env{}, model)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "text plan", out,
		"delegates: none: every node runs on delego's CPU kernels\n",
		"3 nodes: 0 on delegates in 0 partitions, 3 on the CPU (no delegate)\n",
		"on the CPU:\n  0 CONCATENATION v1\n    no delegate\n")
	r, err := planJSON(t, env{}, model)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary != (planSummary{Nodes: 3, CPUNodes: 3}) || len(r.CPUNodes) != 3 || len(r.Steps) != 3 ||
		r.Delegates == nil || len(r.Delegates) != 0 || r.CPUNodes[2].Reasons == nil {
		t.Errorf("plan %+v", r)
	}
	dot, _, err := plan(t, env{}, model, "--format", "dot")
	if err != nil || strings.Contains(dot, "cluster") || !strings.Contains(dot, `n2 [label="2: CONCATENATION v1", fillcolor="#e0e0e0"`) {
		t.Errorf("err %v, dot:\n%s", err, dot)
	}
}

// TestPlanNodeWithoutKernel: the custom op is no delegate's and has no CPU
// kernel. The plan is still printed, then the command fails.
func TestPlanNodeWithoutKernel(t *testing.T) {
	model := shared.Model(t, "model_invoking_error.tflite")
	const reason = "cpu: fake-op-double v1: cpu does not support this op"
	check := func(err error) {
		t.Helper()
		if err == nil || !errors.Is(err, core.ErrUnsupportedOp) || !strings.Contains(err.Error(), "cannot run as planned") ||
			!strings.Contains(err.Error(), "fake-op-double version 1 (node 0): unresolved custom op") {
			t.Errorf("err = %v, want the missing kernel", err)
		}
	}
	out, _, err := plan(t, env{}, model, "--delegate", "cpu")
	check(err)
	checkContains(t, "text plan", out, "1 node: 0 on delegates in 0 partitions, 1 on the CPU\n",
		"on the CPU:\n  0 fake-op-double v1\n    "+reason+"\n")

	r, err := planJSON(t, env{}, model, "--delegate", "cpu")
	check(err)
	if len(r.CPUNodes) != 1 || r.CPUNodes[0].Op != "fake-op-double" || len(r.CPUNodes[0].Reasons) != 1 ||
		r.CPUNodes[0].Reasons[0] != reason || !strings.Contains(r.Error, "unresolved custom op") {
		t.Errorf("plan %+v", r)
	}

	dot, _, err := plan(t, env{}, model, "--delegate", "cpu", "--format", "dot")
	check(err)
	checkContains(t, "dot", dot, `n0 [label="0: fake-op-double v1"`, reason)

	code, out, stderr := cli(t, "plan", model, "--delegate", "cpu")
	if code != exitError || !strings.Contains(out, reason) || !strings.Contains(stderr, "unresolved custom op") {
		t.Errorf("status %d, stdout %q, stderr %q", code, out, stderr)
	}

	// run fails on the same node.
	in := writeFile(t, t.TempDir(), "in.raw", []byte{1, 2, 3})
	var stdout, errOut bytes.Buffer
	err = runCmd(context.Background(), []string{model, "--input", in, "--delegate", "cpu"}, &stdout, &errOut)
	if !errors.Is(err, core.ErrUnsupportedOp) || !strings.Contains(err.Error(), "fake-op-double version 1 (node 0): unresolved custom op") {
		t.Errorf("run: err = %v", err)
	}
}

func TestPlanUnavailableDelegate(t *testing.T) {
	model := shared.Model(t, "split_concat.tflite")
	// Without fallback the plan is shown all the same, and says a run fails.
	r, err := planJSON(t, env{}, model, "--delegate", "xnnpack")
	if err != nil {
		t.Fatalf("plan without fallback: %v", err)
	}
	if len(r.Fallbacks) != 1 || r.Fallbacks[0].Delegate != "xnnpack" || r.Fallbacks[0].Outcome != "error" ||
		!strings.Contains(r.Fallbacks[0].Error, `unknown delegate "xnnpack"`) || !strings.Contains(r.Error, "a run here would fail") {
		t.Fatalf("plan without fallback: %+v", r)
	}

	s := settingsFile(t, fallbackXNNPACK)
	out, _, err := plan(t, env{}, model, "--settings", s)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "text plan", out, "delegates: xnnpack (in priority order)\n",
		"3 nodes: 0 on delegates in 0 partitions, 3 on the CPU\n",
		`    xnnpack: unavailable: unknown delegate "xnnpack"`,
		"fallbacks:\n  delegate xnnpack: compile error: unknown delegate")
	r, err = planJSON(t, env{}, model, "--delegate", "cpu,xnnpack", "--settings", s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary != (planSummary{Nodes: 3, DelegatedNodes: 3, Partitions: 1}) || len(r.Fallbacks) != 1 ||
		r.Fallbacks[0].Partition != -1 || r.Fallbacks[0].Delegate != "xnnpack" || r.Fallbacks[0].Stage != "compile" {
		t.Errorf("plan %+v", r)
	}
}

func TestPlanCompileFallback(t *testing.T) {
	model := shared.Model(t, "split_concat.tflite")
	s := settingsFile(t, `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	var closed closeCount
	e := flakyEnv(errors.New("out of device memory"), nil, &closed)
	r, err := planJSON(t, e, model, "--delegate", "flaky", "--settings", s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary != (planSummary{Nodes: 3, CPUNodes: 3, FallbackNodes: 3}) || len(r.Partitions) != 1 || !r.Partitions[0].FellBack ||
		len(r.Fallbacks) != 1 || r.Fallbacks[0].Partition != 0 || len(r.Fallbacks[0].Nodes) != 3 ||
		!strings.Contains(r.Fallbacks[0].Error, "out of device memory") {
		t.Errorf("plan %+v", r)
	}
	if closed.delegates != 1 {
		t.Errorf("closed %+v, want the delegate closed", closed)
	}
	out, _, err := plan(t, e, model, "--delegate", "flaky", "--settings", s)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "text plan", out, "3 nodes: 0 on delegates in 0 partitions, 3 on the CPU (3 of them after a fallback)\n",
		"partition 0 on flaky: 3 nodes, fell back to the CPU\n",
		"partition 0 (flaky, 3 nodes): compile error: out of device memory; it runs on the CPU")
}

// TestPlanMobilenet: every node of mobilenet has a CPU kernel, so the cpu
// delegate takes the whole graph as one partition. (This needs the pooling
// kernels.)
func TestPlanMobilenet(t *testing.T) {
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	r, err := planJSON(t, env{}, model, "--delegate", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary != (planSummary{Nodes: 31, DelegatedNodes: 31, Partitions: 1}) || len(r.Partitions) != 1 ||
		len(r.Partitions[0].Nodes) != 31 || len(r.CPUNodes) != 0 {
		t.Errorf("summary %+v, %d partitions, %d CPU nodes", r.Summary, len(r.Partitions), len(r.CPUNodes))
	}
	out, _, err := plan(t, env{}, model, "--delegate", "cpu")
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "text plan", out, "31 nodes: 31 on delegates in 1 partition, 0 on the CPU\n",
		"partition 0 on cpu: 31 nodes\n", "    27 AVERAGE_POOL_2D v1\n")
	dot, _, err := plan(t, env{}, model, "--delegate", "cpu", "--format", "dot")
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "dot", dot, `label="partition 0: cpu (31 node(s))"`)
}

// TestPlanPrintsTheLibrarysPlan: "delego plan" prints what delego.Plan
// returns, as text, JSON and DOT, for a model planned on the cpu
// delegate, an Edge TPU model whose CPU twin runs instead, and a model
// with a node no kernel runs.
func TestPlanPrintsTheLibrarysPlan(t *testing.T) {
	fallback := `{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`
	for _, c := range []struct {
		model string
		args  []string
		opts  []delego.Option
	}{
		{"mobilenet_v1_0.25_128_quant.tflite", []string{"--delegate", "cpu"}, []delego.Option{delego.WithDelegates("cpu")}},
		{"mobilenet_v1_0.25_128_quant_edgetpu.tflite", []string{"--settings", settingsFile(t, fallback)},
			[]delego.Option{delego.WithSettingsData([]byte(fallback))}},
		{"model_invoking_error.tflite", nil, nil},
	} {
		path := shared.Model(t, c.model)
		r, _ := delego.Plan(context.Background(), path, c.opts...)
		if r == nil {
			t.Fatalf("%s: no plan", c.model)
		}
		dot, err := r.Dot()
		if err != nil {
			t.Fatal(err)
		}
		var js bytes.Buffer
		if err := writeJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		for format, want := range map[string]string{"text": r.Text(), "json": js.String(), "dot": dot} {
			out, _, _ := plan(t, env{}, append([]string{path, "--format", format}, c.args...)...)
			if out != want {
				t.Errorf("%s: delego plan --format %s printed:\n%s\nwant delego.Plan's:\n%s", c.model, format, out, want)
			}
		}
	}
}
