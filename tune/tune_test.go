package tune_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/model"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/testsupport/testdelegates"
	"github.com/delego/delego/tune"
	"google.golang.org/protobuf/proto"
)

// mobilenet loads the small uint8 MobileNet and its golden cat input.
func mobilenet(t *testing.T) (*model.Model, [][]byte) {
	t.Helper()
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	m, err := model.Load(shared.Model(t, gc.Model))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, [][]byte{shared.ReadGolden(t, gc.InputFile)}
}

// opener opens in-process delegates by name: cpu, and the cpu delegate
// wrapped in each testdelegates fault ("corrupt", "hang", "fail-compile");
// any other name is unavailable.
func opener(ctx context.Context, name string) delegate.Delegate {
	faults := map[string]testdelegates.Fault{
		"corrupt": testdelegates.CorruptSilently, "hang": testdelegates.Hang, "fail-compile": testdelegates.FailCompile,
	}
	if name == tune.CPU {
		return cpu.New()
	}
	if f, ok := faults[name]; ok {
		return testdelegates.NewFaulty(cpu.New(), f)
	}
	return delegate.Unavailable(name, errors.New("no such delegate here"))
}

// TestRunChoosesTheCorrectCandidate tries delegates that fail in each way
// beside a correct one: only the correct one is chosen, and each failure is
// an ERROR event at its stage or a result that is not ok.
func TestRunChoosesTheCorrectCandidate(t *testing.T) {
	m, in := mobilenet(t)
	var seen []*config.BenchmarkEvent
	var done []string
	base := &config.TFLiteSettings{FallbackSettings: &config.FallbackSettings{AllowAutomaticFallbackOnExecutionError: proto.Bool(true)}}
	r, err := tune.Run(t.Context(), m, tune.Options{
		Candidates: []string{"nosuch", "fail-compile", "hang", "corrupt", tune.CPU},
		Open:       opener, Settings: base, Inputs: in, Runs: 3, Warmup: 1, Timeout: 200 * time.Millisecond,
		Thresholds: tune.DefaultThresholds(),
		Event:      func(ev *config.BenchmarkEvent) error { seen = append(seen, ev); return nil },
		Done:       func(c *tune.Candidate) { done = append(done, c.Name) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Best() == nil || r.Best().Name != tune.CPU {
		t.Fatalf("chosen %d (%s), want cpu", r.Chosen, r.Reason)
	}
	if got := strings.Join(done, ","); got != "nosuch,fail-compile,hang,corrupt,cpu" {
		t.Errorf("Done called for %s", got)
	}
	if len(seen) != 10 || len(r.Events) != 10 {
		t.Fatalf("%d events seen, %d in the report; want 10", len(seen), len(r.Events))
	}
	want := []struct {
		typ   config.BenchmarkEventType
		stage config.BenchmarkStage
		ok    bool
	}{
		{config.BenchmarkEventType_ERROR, config.BenchmarkStage_INITIALIZATION, false},
		{config.BenchmarkEventType_ERROR, config.BenchmarkStage_INITIALIZATION, false},
		{config.BenchmarkEventType_ERROR, config.BenchmarkStage_INFERENCE, false},
		{config.BenchmarkEventType_END, 0, false},
		{config.BenchmarkEventType_END, 0, true},
	}
	for i, w := range want {
		start, end := seen[2*i], seen[2*i+1]
		if start.GetEventType() != config.BenchmarkEventType_START || end.GetEventType() != w.typ ||
			end.GetError().GetStage() != w.stage || end.GetResult().GetOk() != w.ok {
			t.Errorf("candidate %s: events %v, %v; want START, %s (stage %s, ok %v)", r.Candidates[i].Name, start, end, w.typ, w.stage, w.ok)
		}
		if end.GetTfliteSettings().GetFallbackSettings() != nil {
			t.Errorf("candidate %s ran with fallback settings", r.Candidates[i].Name)
		}
	}
	cs := r.ComputeSettings()
	if cs.GetTfliteSettings().GetDelegate() != config.Delegate_NONE || cs.GetTfliteSettings().Delegate == nil ||
		!cs.GetTfliteSettings().GetFallbackSettings().GetAllowAutomaticFallbackOnExecutionError() {
		t.Errorf("chosen settings %v: want delegate NONE and the base's fallback", cs)
	}
	if c := r.Candidates[3]; c.OK() || !strings.HasPrefix(c.Verdict(), "rejected: output 0") {
		t.Errorf("corrupt: %s", c.Verdict())
	}
}

// TestEventsRoundTrip writes a run's events as events.jsonl lines and reads
// them back through the generated BenchmarkEvent type.
func TestEventsRoundTrip(t *testing.T) {
	m, in := mobilenet(t)
	r, err := tune.Run(t.Context(), m, tune.Options{Candidates: []string{tune.CPU, "nosuch"}, Open: opener, Inputs: in, Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, ev := range r.Events {
		if err := tune.WriteEvent(&buf, ev); err != nil {
			t.Fatal(err)
		}
	}
	if n := bytes.Count(buf.Bytes(), []byte{'\n'}); n != len(r.Events) {
		t.Fatalf("%d lines for %d events: an event spans lines", n, len(r.Events))
	}
	back, err := tune.ReadEvents(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(r.Events) {
		t.Fatalf("read %d events, wrote %d", len(back), len(r.Events))
	}
	for i := range back {
		if !proto.Equal(back[i], r.Events[i]) {
			t.Errorf("event %d: wrote %v, read %v", i, r.Events[i], back[i])
		}
	}
	if _, err := tune.ReadEvents(strings.NewReader(`{"event_type": "START", "no_such_field": 1}`)); err == nil {
		t.Error("an unknown field was accepted")
	}
}

// TestRunOptions: mistakes in the options are errors before anything runs.
func TestRunOptions(t *testing.T) {
	m, in := mobilenet(t)
	cases := map[string]tune.Options{
		"no opener":     {Candidates: []string{tune.CPU}, Inputs: in},
		"no candidates": {Open: opener, Inputs: in},
		"twice":         {Candidates: []string{tune.CPU, tune.CPU}, Open: opener, Inputs: in},
		"no inputs":     {Candidates: []string{tune.CPU}, Open: opener},
		"negative":      {Candidates: []string{tune.CPU}, Open: opener, Inputs: in, Thresholds: tune.Thresholds{MaxSteps: -1}},
	}
	for name, o := range cases {
		if _, err := tune.Run(t.Context(), m, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestRunCanceled: a canceled context stops the run with its error, and
// the candidate under way still gets its ERROR event.
func TestRunCanceled(t *testing.T) {
	m, in := mobilenet(t)
	ctx, cancel := context.WithCancel(t.Context())
	r, err := tune.Run(ctx, m, tune.Options{Candidates: []string{"hang", tune.CPU}, Open: opener, Inputs: in,
		Event: func(ev *config.BenchmarkEvent) error {
			if ev.GetEventType() == config.BenchmarkEventType_START {
				cancel()
			}
			return nil
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if len(r.Events) != 2 || r.Events[1].GetEventType() != config.BenchmarkEventType_ERROR || r.Best() != nil {
		t.Errorf("events %v, chosen %d", r.Events, r.Chosen)
	}
}

// TestKey: the key names the model's hash and the machine.
func TestKey(t *testing.T) {
	m, _ := mobilenet(t)
	k := tune.KeyOf(m)
	if len(k.ModelSHA256) != 64 || k.CPUs < 1 || !strings.HasPrefix(k.String(), k.ModelSHA256+"-") {
		t.Errorf("key %+v (%s)", k, k)
	}
}
