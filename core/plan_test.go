package core

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/shared"
	"google.golang.org/protobuf/proto"
)

var update = flag.Bool("update", false, "rewrite the golden plans in testdata")

// edgeTPUAbsent is the edgetpu delegate without a device: it declares
// edgetpu-custom-op beside delegate.ErrNoDevice and compiles nothing.
func edgeTPUAbsent() delegate.Delegate { return edgeTPUWithoutDevice{} }

type edgeTPUWithoutDevice struct{}

var errNoCoral = fmt.Errorf("%w: no Coral device plugged in", delegate.ErrNoDevice)

func (edgeTPUWithoutDevice) Name() string { return "edgetpu" }
func (edgeTPUWithoutDevice) Support(context.Context) (*delegate.Support, error) {
	return &delegate.Support{Custom: map[string]delegate.OpSupport{"edgetpu-custom-op": {Versions: tensor.VersionRange{Min: 1, Max: 1}}}}, errNoCoral
}
func (edgeTPUWithoutDevice) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	return nil, errNoCoral
}
func (edgeTPUWithoutDevice) Close() error { return nil }

// convAbsent claims every convolution of a model and cannot compile them.
type convAbsent struct{}

func (convAbsent) Name() string { return "conv" }
func (convAbsent) Support(context.Context) (*delegate.Support, error) {
	any := delegate.OpSupport{Versions: tensor.VersionRange{Min: 1, Max: 9}}
	return &delegate.Support{Builtins: map[schema.BuiltinOperator]delegate.OpSupport{
		schema.BuiltinOperatorCONV_2D: any, schema.BuiltinOperatorDEPTHWISE_CONV_2D: any}}, nil
}
func (convAbsent) Compile(context.Context, *delegate.Partition) (delegate.Executable, error) {
	return nil, fmt.Errorf("%w: out of device memory", delegate.ErrNoDevice)
}
func (convAbsent) Close() error { return nil }

// allowCompileFallback are settings that let the CPU take over a
// partition that cannot compile.
func allowCompileFallback() *config.TFLiteSettings {
	return &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(true)}}
}

// planOf plans the shared model called name.
func planOf(t *testing.T, name string, opts Options) *PlanReport {
	t.Helper()
	path := shared.Model(t, name)
	m, err := model.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	r, err := PlanModel(context.Background(), PlanRequest{Model: m, Path: name, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs; got:\n%s", name, got)
	}
}

// TestPlanEdgeTPUTwin: an Edge TPU model whose delegate cannot compile here
// is planned as itself, and the plan says its CPU twin runs instead; with
// no fallback allowed, it says a run fails.
func TestPlanEdgeTPUTwin(t *testing.T) {
	const name = "mobilenet_v1_0.25_128_quant_edgetpu.tflite"
	twin := LoadTwin(shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"))
	twin.Path = "mobilenet_v1_0.25_128_quant.tflite" // as the golden names it
	t.Cleanup(func() { twin.Model.Close() })
	opts := Options{Delegates: []delegate.Delegate{edgeTPUAbsent()}, Settings: allowCompileFallback(), Twin: twin}
	r := planOf(t, name, opts)
	if r.Twin == nil || r.Twin.Path != twin.Path || len(r.Fallbacks) != 1 || r.Fallbacks[0].Outcome != OutcomeTwin ||
		r.Partitions[0].Fallback != OutcomeTwin || r.Error != "" || r.CannotRun() != nil {
		t.Errorf("plan %+v", r)
	}
	golden(t, "plan_edgetpu_twin.txt", r.Text())

	opts.Settings = nil
	r = planOf(t, name, opts)
	if r.Twin != nil || r.Fallbacks[0].Outcome != OutcomeError || !strings.HasPrefix(r.Error, "a run here would fail: the settings allow no fallback") {
		t.Errorf("plan without fallback %+v", r)
	}
	golden(t, "plan_edgetpu_nofallback.txt", r.Text())
}

// TestPlanNoKernel: a node no delegate takes and no CPU kernel runs is
// planned all the same, marked, and CannotRun says why.
func TestPlanNoKernel(t *testing.T) {
	r := planOf(t, "model_invoking_error.tflite", Options{})
	if err := r.CannotRun(); !errors.Is(err, ErrUnsupportedOp) {
		t.Errorf("CannotRun() = %v, want the missing kernel", err)
	}
	if len(r.CPUNodes) != 1 || !r.CPUNodes[0].NoCPUKernel || r.CPUNodes[0].Op != "fake-op-double" ||
		r.Error != "op 0: encountered unresolved custom op: fake-op-double" {
		t.Errorf("plan %+v", r)
	}
	golden(t, "plan_nokernel.txt", r.Text())

	// Explain words the error for the report; the error still wraps the
	// interpreter's.
	m, err := model.Load(shared.Model(t, "model_invoking_error.tflite"))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	r, err = PlanModel(context.Background(), PlanRequest{Model: m, Explain: func(err error) error { return fmt.Errorf("worded: %w", err) }})
	if err != nil || !strings.HasPrefix(r.Error, "worded: ") || !errors.Is(r.CannotRun(), ErrUnsupportedOp) {
		t.Errorf("err %v, report error %q, CannotRun %v", err, r.Error, r.CannotRun())
	}
}

// TestPlanJSON: the JSON form has the documented field names, and a report
// decoded from it renders the same text.
func TestPlanJSON(t *testing.T) {
	r := planOf(t, "mobilenet_v1_0.25_128_quant.tflite", Options{Delegates: []delegate.Delegate{convAbsent{}}, Settings: allowCompileFallback()})
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"cpu_nodes", "delegates", "fallbacks", "model", "partitions", "steps", "summary"}; !slices.Equal(keys, want) {
		t.Errorf("fields %q, want %q", keys, want)
	}
	for _, want := range []string{`"summary":{"nodes":31,"delegated_nodes":0,"partitions":0,"cpu_nodes":31,"fallback_nodes":28}`,
		`"fell_back":true,"cannot_compile":"no usable device: out of device memory","fallback":"cpu"`,
		`"stage":"compile","error":"no usable device: out of device memory","outcome":"cpu"`, `"steps":[{"partition":0},{"node":27},{"partition":1},{"node":29},{"node":30}]`,
		`{"node":1,"op":"DEPTHWISE_CONV_2D","version":1,"reasons":[]}`, `"inputs":[{"tensor":`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("JSON lacks %s:\n%s", want, data)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var back PlanReport
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.Text() != r.Text() {
		t.Errorf("decoded:\n%s\nmade:\n%s", back.Text(), r.Text())
	}
	if _, err := back.Dot(); err == nil {
		t.Error("a decoded plan drew a graph it does not hold")
	}
}

var (
	dotNode    = regexp.MustCompile(`^\s*n(\d+) \[label="(\d+): ([^"]*)", fillcolor="([^"]*)"`)
	dotDecl    = regexp.MustCompile(`^\s*(\w+) \[label=`)
	dotEdge    = regexp.MustCompile(`^\s*(\w+) -> (\w+)`)
	dotCluster = regexp.MustCompile(`^\s*subgraph cluster_p(\d+) \{$`)
)

// TestPlanDot reads the DOT rendering back: a cluster per partition
// holding its nodes, every node once with its op, CPU nodes grey, and
// every edge between declared nodes.
func TestPlanDot(t *testing.T) {
	r := planOf(t, "mobilenet_v1_0.25_128_quant.tflite", Options{Delegates: []delegate.Delegate{convAbsent{}}, Settings: allowCompileFallback()})
	dot, err := r.Dot()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(dot, "\n"), "\n")
	if lines[0] != "digraph plan {" || lines[len(lines)-1] != "}" || strings.Count(dot, "{") != strings.Count(dot, "}") {
		t.Fatalf("not one digraph:\n%s", dot)
	}
	cluster := -1
	inCluster := map[int]int{} // node: cluster, -1 outside any
	declared := map[string]bool{}
	for _, l := range lines {
		if m := dotDecl.FindStringSubmatch(l); m != nil {
			declared[m[1]] = true
		}
	}
	for _, l := range lines[1:] {
		if m := dotCluster.FindStringSubmatch(l); m != nil {
			fmt.Sscan(m[1], &cluster)
			continue
		}
		if strings.TrimSpace(l) == "}" {
			cluster = -1
			continue
		}
		if m := dotNode.FindStringSubmatch(l); m != nil {
			var n int
			fmt.Sscan(m[1], &n)
			if _, dup := inCluster[n]; dup || m[1] != m[2] {
				t.Errorf("node %d declared twice or mislabelled: %s", n, l)
			}
			inCluster[n] = cluster
			if (cluster < 0) != (m[4] == "#e0e0e0") {
				t.Errorf("node %d: grey exactly when on the CPU: %s", n, l)
			}
			continue
		}
		if m := dotEdge.FindStringSubmatch(l); m != nil && (!declared[m[1]] || !declared[m[2]]) {
			t.Errorf("edge between undeclared nodes: %s", l)
		}
	}
	if len(inCluster) != r.Summary.Nodes {
		t.Errorf("%d nodes drawn, want %d", len(inCluster), r.Summary.Nodes)
	}
	for _, p := range r.Partitions {
		for _, n := range p.Nodes {
			if inCluster[n.Node] != p.Index {
				t.Errorf("node %d drawn in cluster %d, want partition %d", n.Node, inCluster[n.Node], p.Index)
			}
		}
	}
	for _, n := range r.CPUNodes {
		if inCluster[n.Node] != -1 {
			t.Errorf("CPU node %d drawn in cluster %d", n.Node, inCluster[n.Node])
		}
	}
}

// TestCompileOutcome: what a run does about a partition that cannot
// compile, as the settings and the model decide it.
func TestCompileOutcome(t *testing.T) {
	allow, deny := delegate.Fallback{OnCompilationError: true}, delegate.Fallback{OnExecutionError: true}
	for _, c := range []struct {
		policy         delegate.Fallback
		twin, noKernel bool
		want           string
	}{
		{allow, false, false, OutcomeCPU},
		{allow, true, false, OutcomeTwin},
		{allow, true, true, OutcomeTwin},
		{allow, false, true, OutcomeNoCPUKernel},
		{deny, true, true, OutcomeError},
		{deny, false, false, OutcomeError},
	} {
		if got := compileOutcome(c.policy, c.twin, c.noKernel); got != c.want {
			t.Errorf("compileOutcome(%+v, twin %v, no kernel %v) = %q, want %q", c.policy, c.twin, c.noKernel, got, c.want)
		}
	}
}
