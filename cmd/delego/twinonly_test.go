package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestCPUTwinOnly: --cpu-twin-only runs an Edge TPU model's CPU twin
// (Coral's name, or --cpu-twin) instead of the model, for run, bench and
// plan, and says so; a model not named as Coral names its output, and no
// --cpu-twin, is a usage error that says what to give.
func TestCPUTwinOnly(t *testing.T) {
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	twin := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	input := shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	want := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")
	for _, extra := range [][]string{{"--cpu-twin-only"}, {"--cpu-twin-only", "--cpu-twin", twin}} {
		got, stderr := runOutput(t, model, []string{"--input", input}, extra...)
		if !bytes.Equal(got, want) {
			t.Errorf("%q: the output is not the twin's golden", extra)
		}
		if !strings.Contains(stderr, "--cpu-twin-only: the CPU twin "+twin+" runs instead of "+model) {
			t.Errorf("%q: stderr %q does not say the twin runs", extra, stderr)
		}
	}
	code, stdout, stderr := cli(t, "bench", model, "--cpu-twin-only", "--runs", "1", "--json")
	if code != exitOK || !strings.Contains(stdout, `"model": "`+twin+`"`) || strings.Contains(stdout, "edgetpu-custom-op") {
		t.Errorf("bench: status %d, stdout %.300q, stderr %q", code, stdout, stderr)
	}
	code, stdout, stderr = cli(t, "plan", model, "--cpu-twin-only")
	if code != exitOK || !strings.Contains(stdout, "model: "+twin) {
		t.Errorf("plan: status %d, stdout %q, stderr %q", code, stdout, stderr)
	}

	renamed := filepath.Join(t.TempDir(), "mobilenet.tflite")
	code, _, stderr = cli(t, "run", renamed, "--cpu-twin-only", "--input", input)
	if code != exitUsage || !strings.Contains(stderr, "is not named as Coral's compiler names an Edge TPU model") || !strings.Contains(stderr, "--cpu-twin") {
		t.Errorf("a model without Coral's name: status %d, stderr %q", code, stderr)
	}
}
