package tune

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/delego/delego/delegate/config"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TestReportText: the table gives each candidate's figures ("-" where it
// has none), the thresholds, why each candidate that is not ok is not (on
// one line), and the decision.
func TestReportText(t *testing.T) {
	ms := time.Millisecond
	r := &Report{
		Candidates: []*Candidate{
			{Name: "cpu", Init: 2 * ms, Times: []time.Duration{3 * ms, ms, 2 * ms}, PeakMemoryKB: 2048, Delegated: 31, Nodes: 31,
				Accuracy: []Accuracy{{Output: 0, OK: true}, {Output: 1, Float: true, MaxRelativeError: 0.00002, OK: true}}},
			{Name: "gpu", Err: errors.New("compile failed:\nno device"), Nodes: 31},
			{Name: "xnnpack", Init: ms, Times: []time.Duration{ms}, Accuracy: []Accuracy{{Output: 0, MaxSteps: 1}}, Delegated: 30, Nodes: 31},
			{Name: "mytpu", Init: ms, Times: []time.Duration{ms}, Accuracy: []Accuracy{{Output: 0, OK: true}}, Nodes: 31},
		},
		Chosen: 0, Reason: "cpu is the fastest correct candidate (median 2.000 ms)",
		Thresholds: Thresholds{MaxSteps: 0, MaxRelativeError: 1e-4},
	}
	var b strings.Builder
	if err := r.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `candidate  ok     delegated  accuracy            init ms  median ms  p90 ms  peak memory
cpu        yes    31/31      2e-05 rel, 0 steps  2.000    2.000      3.000   2.0 MiB
gpu        error  -          -                   -        -          -       -
xnnpack    no     30/31      1 step              1.000    1.000      1.000   -
mytpu      no     0/31       0 steps             1.000    1.000      1.000   -
thresholds: integers within 0 steps, floats within 0.0001 relative
gpu: compile failed:; no device
xnnpack: rejected: ` + r.Candidates[2].Accuracy[0].String() + `
mytpu: rejected: its delegate ran none of the 31 nodes (its settings would run the model on the CPU kernels)
chosen: cpu: cpu is the fastest correct candidate (median 2.000 ms)
`
	if b.String() != want {
		t.Errorf("wrote\n%s\nwant\n%s", b.String(), want)
	}
	r.Chosen, r.Reason = -1, "none of the 4 candidates ran correctly"
	b.Reset()
	if err := r.WriteText(&b); err != nil || !strings.HasSuffix(b.String(), "\nchosen: none: none of the 4 candidates ran correctly\n") {
		t.Errorf("none chosen: %v\n%s", err, b.String())
	}
}

// TestMarshalSettings: settings.json reads back as the same settings.
func TestMarshalSettings(t *testing.T) {
	cs := &config.ComputeSettings{TfliteSettings: &config.TFLiteSettings{Delegate: config.Delegate_XNNPACK.Enum()}}
	b, err := MarshalSettings(cs)
	if err != nil || !strings.HasSuffix(string(b), "}\n") || !strings.Contains(string(b), `"tflite_settings"`) {
		t.Fatalf("MarshalSettings = %s, %v", b, err)
	}
	back := &config.ComputeSettings{}
	if err := protojson.Unmarshal(b, back); err != nil || !proto.Equal(back, cs) {
		t.Errorf("read back %v (%v), want %v", back, err, cs)
	}
}
