package tune_test

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/testdelegates"
	"github.com/delego/delego/tune"
)

// TestRunNeverChoosesAnIdleDelegate: a delegate that declares only an op
// the model lacks delegates none of its nodes; it runs correctly (the CPU
// kernels ran everything) but is never chosen, and the report says why.
func TestRunNeverChoosesAnIdleDelegate(t *testing.T) {
	m, in := mobilenet(t)
	open := func(ctx context.Context, name string) delegate.Delegate {
		if name == "idle" {
			return testdelegates.NewSubset(name, testdelegates.Op{Code: schema.BuiltinOperatorCONV_3D})
		}
		return opener(ctx, name)
	}
	opts := tune.Options{Candidates: []string{"idle", tune.CPU}, Open: open, Inputs: in, Runs: 2, Warmup: -1, Thresholds: tune.DefaultThresholds()}
	r, err := tune.Run(t.Context(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	idle := r.Candidates[0]
	if !idle.OK() || idle.Delegated != 0 || idle.Nodes != m.Subgraph(0).NumOperators() {
		t.Fatalf("idle: ok %v, %d of %d nodes delegated; want correct with none", idle.OK(), idle.Delegated, idle.Nodes)
	}
	if r.Best() == nil || r.Best().Name != tune.CPU {
		t.Errorf("chosen %d (%s), want cpu", r.Chosen, r.Reason)
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "idle: rejected: its delegate ran none of the 31 nodes") {
		t.Errorf("the report does not say why idle was not chosen:\n%s", b.String())
	}

	opts.Candidates = []string{"idle"}
	r, err = tune.Run(t.Context(), m, opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Best() != nil || !strings.Contains(r.Reason, "delegating no node") {
		t.Errorf("only idle: chosen %d (%s), want none, saying why", r.Chosen, r.Reason)
	}
}

// TestRunChosenSettingsSelectThePlugin: the settings chosen for a delegate
// the enum cannot name select it by stable_delegate_loader_settings, with
// its options, which its Compile got while it was tried.
func TestRunChosenSettingsSelectThePlugin(t *testing.T) {
	m, in := mobilenet(t)
	var opened *testdelegates.Configured
	open := func(_ context.Context, name string) delegate.Delegate {
		opened = testdelegates.NewConfigured(cpu.New(), nil, delegate.Option{Name: "cores"})
		return opened
	}
	options := map[string]string{"cores": "2"}
	r, err := tune.Run(t.Context(), m, tune.Options{Candidates: []string{"mytpu"}, Open: open, Inputs: in, Runs: 1, Warmup: -1,
		Thresholds: tune.DefaultThresholds(), DelegateOptions: map[string]map[string]string{"mytpu": options}})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Best()
	if b == nil {
		t.Fatalf("none chosen: %s", r.Reason)
	}
	if b.Chosen.Delegate != nil || b.Chosen.GetStableDelegateLoaderSettings().GetDelegateName() != "mytpu" ||
		!maps.Equal(b.Chosen.GetDelegateOptions(), options) {
		t.Errorf("chosen settings %v, want stable_delegate_loader_settings naming mytpu and its options", b.Chosen)
	}
	if got := opened.Compiled(); len(got) != 1 || !maps.Equal(got[0], options) {
		t.Errorf("Compile got options %v, want %v", got, options)
	}
}
