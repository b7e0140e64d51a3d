package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/delegate/config"
	"github.com/delego/delego/plugins/cpu"
	"github.com/delego/delego/testsupport/shared"
	"github.com/delego/delego/testsupport/testdelegates"
	"github.com/delego/delego/tune"
)

// tuneEnv opens cpu as delego's kernels in process, "wrong" as them with
// every output byte overwritten, and nothing else.
func tuneEnv() env {
	return env{open: func(_ context.Context, name string) delegate.Delegate {
		switch name {
		case "cpu":
			return cpu.New()
		case "wrong":
			return testdelegates.NewFaulty(cpu.New(), testdelegates.CorruptSilently)
		}
		return delegate.Unavailable(name, errors.New("not in this test"))
	}}
}

func TestTuneUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"tune", "a.tflite", "--out", "d"}, "--delegate is required"},
		{[]string{"tune", "a.tflite", "--delegate", "cpu"}, "--out DIR is required"},
		{[]string{"tune", "--delegate", "cpu", "--out", "d"}, "need exactly one MODEL argument, got 0"},
		{[]string{"tune", "a.tflite", "--delegate", "cpu", "--out", "d", "--input", "x", "--image", "y"}, "cannot be used together"},
		{[]string{"tune", "a.tflite", "--delegate", "cpu", "--out", "d", "--runs", "0"}, "--runs must be at least 1"},
		{[]string{"tune", "a.tflite", "--delegate", "cpu", "--out", "d", "--max-steps", "-1"}, "must not be negative"},
		{[]string{"tune", "a.tflite", "--delegate", "cpu", "--out", "d", "--cpu-twin", "t.tflite"}, "cannot tune an Edge TPU model"},
		{[]string{"tune", "a.tflite", "--delegate", "none", "--out", "d"}, "at least one candidate"},
		{[]string{"tune", "a.tflite", "--delegate", "cpu,cpu", "--out", "d"}, `"cpu" is listed twice`},
	} {
		code, out, errOut := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) || out != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want status 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
}

// TestTuneWritesEventsAndSettings tunes the small MobileNet with cpu, a
// delegate that answers wrong numbers and one that cannot be had: the
// table, the reasons and the decision on stdout, an event pair per
// candidate, and settings that config.Load reads as NONE.
func TestTuneWritesEventsAndSettings(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.raw")
	if err := os.WriteFile(in, shared.ReadGolden(t, gc.InputFile), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	args := []string{shared.Model(t, gc.Model), "--delegate", "wrong,gone,cpu", "--input", in, "--out", out, "--runs", "2"}
	var stdout, stderr bytes.Buffer
	if err := tuneWith(t.Context(), args, &stdout, &stderr, tuneEnv()); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, w := range []string{"candidate  ok     delegated  accuracy", "wrong      no     31/31", "gone       error", "cpu        yes    31/31      0 steps",
		"wrong: rejected: output 0", "gone: delegate gone cannot be had: not in this test", "chosen: cpu: cpu is the fastest correct candidate",
		"settings: " + filepath.Join(out, "settings.json")} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("stdout does not say %q:\n%s", w, stdout.String())
		}
	}
	f, err := os.Open(filepath.Join(out, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := tune.ReadEvents(f)
	if err != nil || len(evs) != 6 {
		t.Fatalf("%d events, %v; want 6", len(evs), err)
	}
	s, err := config.Load(filepath.Join(out, "settings.json"))
	if err != nil || s.Compute == nil || s.TFLite.Delegate == nil || s.TFLite.GetDelegate() != config.Delegate_NONE {
		t.Errorf("settings.json: %v, %v", s, err)
	}
}

// TestTuneNothingCorrect fails, naming why, and writes no settings.
func TestTuneNothingCorrect(t *testing.T) {
	out := t.TempDir()
	args := []string{shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite"), "--delegate", "wrong", "--out", out, "--runs", "1"}
	var stdout, stderr bytes.Buffer
	err := tuneWith(t.Context(), args, &stdout, &stderr, tuneEnv())
	checkRunFails(t, err, "none of the 1 candidates ran correctly")
	if _, err := os.Stat(filepath.Join(out, "settings.json")); err == nil {
		t.Error("settings.json written")
	}
	if _, err := os.Stat(filepath.Join(out, "events.jsonl")); err != nil {
		t.Error(err)
	}
}

// TestTuneInputsFrom reads one input per file of --inputs-from, by name,
// and refuses a directory with the wrong number of files.
func TestTuneInputsFrom(t *testing.T) {
	gc := shared.GoldenCaseNamed(t, "mobilenet_v1_0.25_128_quant__cat_128")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0.raw"), shared.ReadGolden(t, gc.InputFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "not-an-input"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{shared.Model(t, gc.Model), "--delegate", "cpu", "--inputs-from", dir, "--out", t.TempDir(), "--runs", "1"}
	var stdout, stderr bytes.Buffer
	if err := tuneWith(t.Context(), args, &stdout, &stderr, tuneEnv()); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "1.raw"), []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	err := tuneWith(t.Context(), args, &stdout, &stderr, tuneEnv())
	checkRunFails(t, err, "the model needs 1 --input file", "got 2 files")
}
