package delego_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego"
	"github.com/delego/delego/core"
	"github.com/delego/delego/testsupport/shared"
)

// Plan where each node of a model would run, and why, without running it:
// here the whole graph on delego's own kernels through the cpu delegate.
// r.Text() is what "delego plan" prints, json.Marshal(r) its --json and
// r.Dot() its --format dot.
func ExamplePlan() {
	ctx := context.Background()
	r, err := delego.Plan(ctx, "../shared/models/split_concat.tflite", delego.WithDelegates("cpu"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.SummaryLine())
	for _, p := range r.Partitions {
		fmt.Printf("partition %d on %s:", p.Index, p.Delegate)
		for _, n := range p.Nodes {
			fmt.Printf(" %d %s", n.Node, n.Op)
		}
		fmt.Println()
	}
	// Output:
	// 3 nodes: 3 on delegates in 1 partition, 0 on the CPU
	// partition 0 on cpu: 0 CONCATENATION 1 SPLIT 2 CONCATENATION
}

// TestPlanEdgeTPUDefault: with no delegate chosen, an Edge TPU model is
// planned for the edgetpu delegate. Here it has no plugin, so delego does
// not know what it would declare: no partition, the compiled op on the CPU
// saying why (the missing plugin, how to install it), and what the
// fallback settings make of it: the CPU twin runs instead, or without
// fallback a run fails. (With delego-edgetpu and no device, the plan shows
// its partition: the plugin declares it; see cmd/delego's
// TestPlanEveryEdgeTPUModel.)
func TestPlanEdgeTPUDefault(t *testing.T) {
	ctx := context.Background()
	noPlugin := func(r *core.PlanReport) bool {
		return len(r.Delegates) == 1 && r.Delegates[0] == "edgetpu" && len(r.Partitions) == 0 && len(r.CPUNodes) == 1 &&
			len(r.CPUNodes[0].Reasons) == 1 && strings.Contains(r.CPUNodes[0].Reasons[0], "edgetpu: unavailable: ") &&
			strings.Contains(r.CPUNodes[0].Reasons[0], "go install github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu@latest")
	}
	fallback := []byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	r, err := delego.Plan(ctx, shared.Model(t, quantE), delego.WithSettingsData(fallback), delego.WithPluginDirs())
	if err != nil {
		t.Fatal(err)
	}
	if !noPlugin(r) || r.Twin == nil || !strings.HasSuffix(r.Twin.Path, quant) || len(r.Fallbacks) != 1 || r.Fallbacks[0].Outcome != core.OutcomeTwin {
		t.Errorf("plan with fallback %+v", r)
	}
	r, err = delego.Plan(ctx, shared.Model(t, quantE), delego.WithPluginDirs())
	if err != nil {
		t.Fatal(err)
	}
	if !noPlugin(r) || r.Twin != nil || len(r.Fallbacks) != 1 || r.Fallbacks[0].Outcome != core.OutcomeError || !strings.HasPrefix(r.Error, "a run here would fail") {
		t.Errorf("plan without fallback %+v", r)
	}
	// Delegates chosen, none: the CPU cannot run the model.
	r, err = delego.Plan(ctx, shared.Model(t, quantE), delego.WithDelegates())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Delegates) != 0 || !errors.Is(r.CannotRun(), core.ErrUnsupportedOp) ||
		!strings.Contains(r.Error, "edgetpu-custom-op version 1 (node 0): unresolved custom op") ||
		!strings.Contains(r.Error, "(this model is compiled for the Edge TPU; its CPU twin is ") {
		t.Errorf("plan without delegates %+v", r)
	}
}

// TestPlanStopsItsPlugins: Plan starts the delegates' plugins and stops
// them before it returns; mistakes come back before the model is read.
func TestPlanStopsItsPlugins(t *testing.T) {
	dir := buildCPUPlugin(t)
	r, err := delego.Plan(context.Background(), shared.Model(t, quant), delego.WithDelegates("cpu"), delego.WithPluginDirs(dir))
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary != (core.PlanSummary{Nodes: 31, DelegatedNodes: 31, Partitions: 1}) {
		t.Errorf("summary %+v", r.Summary)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("after Plan, child processes %v remain", kids)
	}
	for _, c := range []struct {
		opts []delego.Option
		path string
		want string
	}{
		{[]delego.Option{delego.WithDelegates("CPU")}, "no-such.tflite", `delegate name "CPU"`},
		{[]delego.Option{delego.WithSettingsData([]byte("{"))}, "no-such.tflite", "unexpected EOF"},
		{nil, "no-such.tflite", "no-such.tflite"},
	} {
		if r, err := delego.Plan(context.Background(), c.path, c.opts...); r != nil || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Plan(%s): %v, %v; want an error naming %q", c.path, r, err, c.want)
		}
	}
}

// TestInterpreterReport: the report of an opened interpreter names its
// model file, and after a compile fallback tells of it.
func TestInterpreterReport(t *testing.T) {
	fallback := []byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	it := runGolden(t, quantE, delego.WithDelegates("edgetpu"), delego.WithSettingsData(fallback), delego.WithPluginDirs())
	r := it.Report()
	if r.Model != shared.Model(t, quantE) || r.Twin == nil ||
		!strings.HasSuffix(r.Narrative(false), "the result came from the CPU twin "+r.Twin.Path+"\n") {
		t.Errorf("report %+v, narrative %q", r, r.Narrative(false))
	}
}

// TestPlanUnmapsItsModels: once Plan returns, neither the model nor its
// CPU twin is mapped any more.
func TestPlanUnmapsItsModels(t *testing.T) {
	dir := t.TempDir()
	for from, to := range map[string]string{quantE: "m_edgetpu.tflite", quant: "m.tflite"} {
		data, err := os.ReadFile(shared.Model(t, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fallback := []byte(`{"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	r, err := delego.Plan(context.Background(), filepath.Join(dir, "m_edgetpu.tflite"), delego.WithSettingsData(fallback), delego.WithPluginDirs())
	if err != nil {
		t.Fatal(err)
	}
	if r.Twin == nil || r.Twin.Path != filepath.Join(dir, "m.tflite") {
		t.Fatalf("twin %+v, want the twin beside the model", r.Twin)
	}
	notMapped(t, dir, "after Plan")

	// Open maps the twin too, and Close unmaps it.
	it, err := delego.Open(context.Background(), filepath.Join(dir, "m_edgetpu.tflite"), delego.WithDelegates("edgetpu"),
		delego.WithSettingsData(fallback), delego.WithPluginDirs())
	if err != nil {
		t.Fatal(err)
	}
	if it.Twin() == nil {
		t.Fatal("the CPU twin does not run instead of the Edge TPU model")
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	notMapped(t, dir, "after Close")
}

// notMapped fails t when a file under dir is mapped into the process.
func notMapped(t *testing.T, dir, when string) {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps here")
	}
	for _, l := range strings.Split(string(maps), "\n") {
		if strings.Contains(l, dir) {
			t.Errorf("still mapped %s: %s", when, l)
		}
	}
}
