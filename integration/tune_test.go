package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/delegate/config"
	cpuplugin "github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/plugins/xnnpack"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/tune"
	"google.golang.org/protobuf/proto"
)

// tuneArgs are the arguments of "delego tune" on golden case gc's model and
// inputs (written into dir), with the candidates and out.
func tuneArgs(t *testing.T, gc shared.GoldenCase, candidates, out string) []string {
	t.Helper()
	args := goldenArgs(t, gc, filepath.Join(out, "unused.raw"))
	args = slices.DeleteFunc(args, func(a string) bool { return a == "run" || a == "--output" || strings.HasSuffix(a, "unused.raw") })
	return append([]string{"tune"}, append(args, "--delegate", candidates, "--out", out, "--runs", "3", "--warmup", "1")...)
}

// readTuneEvents reads DIR/events.jsonl through tune.ReadEvents and checks
// that every event survives a round trip through protojson unchanged.
func readTuneEvents(t *testing.T, dir string) []*config.BenchmarkEvent {
	t.Helper()
	b := readFile(t, filepath.Join(dir, "events.jsonl"))
	evs, err := tune.ReadEvents(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(evs) {
		t.Fatalf("%d lines, %d events", len(lines), len(evs))
	}
	for i, ev := range evs {
		line, err := tune.MarshalEvent(ev)
		if err != nil {
			t.Fatal(err)
		}
		again, err := tune.ReadEvents(bytes.NewReader(line))
		if err != nil || len(again) != 1 || !proto.Equal(again[0], ev) {
			t.Errorf("event %d does not round-trip: %s (%v)", i, line, err)
		}
	}
	return evs
}

// checkEventPairs checks that the events are a START then an END or ERROR
// per candidate, in order, each pair with the same settings, and returns
// the ending events.
func checkEventPairs(t *testing.T, evs []*config.BenchmarkEvent, n int) []*config.BenchmarkEvent {
	t.Helper()
	if len(evs) != 2*n {
		t.Fatalf("%d events for %d candidates", len(evs), n)
	}
	var ends []*config.BenchmarkEvent
	for i := 0; i < len(evs); i += 2 {
		start, end := evs[i], evs[i+1]
		if start.GetEventType() != config.BenchmarkEventType_START {
			t.Errorf("event %d is %s, want START", i, start.GetEventType())
		}
		if et := end.GetEventType(); et != config.BenchmarkEventType_END && et != config.BenchmarkEventType_ERROR {
			t.Errorf("event %d is %s, want END or ERROR", i+1, et)
		}
		if !proto.Equal(start.GetTfliteSettings(), end.GetTfliteSettings()) || start.WallclockUs == nil || start.BoottimeUs == nil {
			t.Errorf("events %d and %d: settings differ or timestamps missing: %v / %v", i, i+1, start, end)
		}
		ends = append(ends, end)
	}
	return ends
}

// medianUs is the median of an END event's inference times.
func medianUs(ev *config.BenchmarkEvent) int64 {
	s := slices.Clone(ev.GetResult().GetInferenceTimeUs())
	slices.Sort(s)
	return s[(len(s)+1)/2-1]
}

// TestTuneAcceptance is issue 18's acceptance: tune MobileNet V2 float on
// its golden input with xnnpack, a delegate that does not exist and cpu.
// Every candidate has its START and END or ERROR (nosuch an ERROR whose
// reason is on stdout), the faster correct one is chosen, and its
// settings.json makes "delego run --settings" give the golden output.
func TestTuneAcceptance(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	gc := shared.GoldenCaseNamed(t, "mobilenet_v2_1.0_224_float__cat_224_f32")
	out := t.TempDir()
	stdout, stderr, err := runDelego(t, tuneArgs(t, gc, "xnnpack,nosuch,cpu", out)...)
	if err != nil {
		t.Fatalf("delego tune: %v\n%s%s", err, stdout, stderr)
	}
	t.Logf("\n%s", stdout)
	ends := checkEventPairs(t, readTuneEvents(t, out), 3)
	xnn, nosuch, cpu := ends[0], ends[1], ends[2]
	if xnn.GetTfliteSettings().GetDelegate() != config.Delegate_XNNPACK || cpu.GetTfliteSettings().GetDelegate() != config.Delegate_NONE ||
		nosuch.GetTfliteSettings().Delegate != nil {
		t.Errorf("settings: xnnpack %v, nosuch %v, cpu %v", xnn.GetTfliteSettings(), nosuch.GetTfliteSettings(), cpu.GetTfliteSettings())
	}
	if nosuch.GetEventType() != config.BenchmarkEventType_ERROR || nosuch.GetError().GetStage() != config.BenchmarkStage_INITIALIZATION {
		t.Errorf("nosuch: %v, want an ERROR at INITIALIZATION", nosuch)
	}
	if !strings.Contains(stdout, "nosuch: delegate nosuch cannot be had: ") || !strings.Contains(stdout, "no plugin binary delego-nosuch") {
		t.Errorf("stdout does not give nosuch's reason:\n%s", stdout)
	}
	for _, ev := range []*config.BenchmarkEvent{xnn, cpu} {
		r := ev.GetResult()
		if ev.GetEventType() != config.BenchmarkEventType_END || !r.GetOk() || len(r.GetInferenceTimeUs()) != 3 || r.GetMaxMemoryKb() <= 0 {
			t.Errorf("%v: want an ok END with 3 timings and memory", ev)
		}
	}
	want := "xnnpack"
	if medianUs(cpu) < medianUs(xnn) {
		want = "cpu"
	}
	if !strings.Contains(stdout, "chosen: "+want+": ") {
		t.Errorf("stdout does not choose %s (medians: xnnpack %d us, cpu %d us):\n%s", want, medianUs(xnn), medianUs(cpu), stdout)
	}

	settings := filepath.Join(out, "settings.json")
	s, err := config.Load(settings)
	if err != nil {
		t.Fatal(err)
	}
	// What the host honours, with what either candidate declares.
	caps := config.HostCapabilities().With(xnnpack.New().Honours()...).With(cpuplugin.New().Honours()...)
	if issues := s.Check(caps); len(issues) > 0 {
		t.Errorf("settings.json has issues: %v", issues)
	}
	run := filepath.Join(out, "run.raw")
	args := append(goldenArgs(t, gc, run), "--settings", settings)
	if _, stderr, err := runDelego(t, args...); err != nil || stderr != "" {
		t.Fatalf("delego run --settings: %v\n%s", err, stderr)
	}
	if err := compareOutputs(gc, readFile(t, run), shared.ReadGolden(t, gc.OutputFile)); err != nil {
		t.Errorf("delego run --settings %s: %v", settings, err)
	}
	checkNoOrphans(t)
}

// TestTuneFaultPlugins tunes with a plugin that crashes, one that hangs
// and one that answers wrong numbers beside cpu: each ends in an ERROR or a
// result that is not ok, cpu is chosen, and no plugin process is left.
func TestTuneFaultPlugins(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	out := t.TempDir()
	args := append(tuneArgs(t, gc, "fault-crash-invoke,fault-hang,fault-wrong,cpu", out), "--timeout", "2s")
	stdout, stderr, err := runDelego(t, args...)
	if err != nil {
		t.Fatalf("delego tune: %v\n%s%s", err, stdout, stderr)
	}
	t.Logf("\n%s", stdout)
	ends := checkEventPairs(t, readTuneEvents(t, out), 4)
	for i, name := range []string{"fault-crash-invoke", "fault-hang"} {
		if ev := ends[i]; ev.GetEventType() != config.BenchmarkEventType_ERROR || ev.GetError().GetStage() != config.BenchmarkStage_INFERENCE {
			t.Errorf("%s: %v, want an ERROR at INFERENCE", name, ev)
		}
	}
	if e := ends[0].GetError(); e.GetExitCode() != 2 || e.Signal != nil {
		t.Errorf("fault-crash-invoke: exit code %d, signal %d; want 2 (a Go panic) and none", e.GetExitCode(), e.GetSignal())
	}
	if e := ends[1].GetError(); e.GetExitCode() != -1 || e.GetSignal() != 9 {
		t.Errorf("fault-hang: exit code %d, signal %d; want -1 and 9 (the watchdog's SIGKILL)", e.GetExitCode(), e.GetSignal())
	}
	if r := ends[2].GetResult(); ends[2].GetEventType() != config.BenchmarkEventType_END || r.GetOk() {
		t.Errorf("fault-wrong: %v, want an END that is not ok", ends[2])
	}
	if !ends[3].GetResult().GetOk() {
		t.Errorf("cpu: %v, want ok", ends[3])
	}
	for _, w := range []string{"fault-crash-invoke: warm-up invoke 1:", "plugin process died", "fault-hang: warm-up invoke 1:",
		"fault-wrong: rejected: output 0", "chosen: cpu: "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout does not say %q:\n%s", w, stdout)
		}
	}
	s, err := config.Load(filepath.Join(out, "settings.json"))
	if err != nil || s.TFLite.GetDelegate() != config.Delegate_NONE {
		t.Errorf("settings.json: %v, %v; want delegate NONE", s, err)
	}
	checkNoOrphans(t)
}

// TestTuneNoneCorrect: with only a wrong plugin, tune exits 1, says so
// and writes no settings.json.
func TestTuneNoneCorrect(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	out := t.TempDir()
	stdout, stderr, err := runDelego(t, tuneArgs(t, gc, "fault-wrong", out)...)
	if err == nil || !strings.Contains(stdout, "chosen: none: none of the 1 candidates ran correctly") {
		t.Errorf("delego tune: %v\n%s%s", err, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "settings.json")); err == nil {
		t.Error("settings.json written with no correct candidate")
	}
}

// TestTuneIdlePlugin: delego-edgetpu declares only edgetpu-custom-op,
// which the uint8 MobileNet lacks, so as a candidate it delegates none of
// the 31 nodes and "runs correctly" (the CPU kernels ran them all). tune
// never chooses it, shows 0/31 and says why; alone, it is no choice at all
// (issue 33: it was "the fastest correct candidate", with settings that
// ran the model on the CPU without a word).
func TestTuneIdlePlugin(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	plugins := t.TempDir()
	if err := goBuild(plugins, nil, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu"); err != nil {
		t.Fatal(err)
	}
	env := []string{"DELEGO_PLUGIN_PATH=" + plugins}
	out := t.TempDir()
	stdout, stderr, err := runDelegoEnv(t, env, tuneArgs(t, gc, "edgetpu,cpu", out)...)
	if err != nil {
		t.Fatalf("delego tune: %v\n%s%s", err, stdout, stderr)
	}
	for _, w := range []string{"edgetpu    no   0/31", "cpu        yes  31/31",
		"edgetpu: rejected: its delegate ran none of the 31 nodes", "chosen: cpu: "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout does not say %q:\n%s", w, stdout)
		}
	}
	s, err := config.Load(filepath.Join(out, "settings.json"))
	if err != nil || s.TFLite.GetDelegate() != config.Delegate_NONE {
		t.Errorf("settings.json: %v, %v; want delegate NONE", s, err)
	}

	out = t.TempDir()
	stdout, stderr, err = runDelegoEnv(t, env, tuneArgs(t, gc, "edgetpu", out)...)
	if err == nil || !strings.Contains(stdout, "chosen: none: ") || !strings.Contains(stdout, "delegating no node") {
		t.Errorf("delego tune with edgetpu alone: %v\n%s%s", err, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "settings.json")); err == nil {
		t.Error("settings.json written for an idle candidate")
	}
	checkNoOrphans(t)
}
