package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
)

// TestEdgeTPUThroughCLI is the Edge TPU acceptance run through the delego
// binary and its delego-edgetpu plugin on a machine without a usable Edge
// TPU: with compile fallback allowed the CPU twin gives the CPU model's
// golden output, and delego says so; without, delego exits non-zero with the
// no-device message.
func TestEdgeTPUThroughCLI(t *testing.T) {
	dir := t.TempDir()
	if err := goBuild(dir, nil, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu"); err != nil {
		t.Fatal(err)
	}
	runDelego := func(t *testing.T, args ...string) (string, string, error) {
		t.Helper()
		return runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + dir, "DELEGO_EDGETPU_DEVICE="}, args...)
	}
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	input := shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	settings := func(name, json string) string {
		p := filepath.Join(dir, name)
		writeFile(t, p, json)
		return p
	}
	fallback := settings("fallback.json", `{"tflite_settings": {"delegate": "EDGETPU_CORAL",
		"fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}}`)
	strict := settings("strict.json", `{"delegate": "EDGETPU_CORAL"}`)
	out := filepath.Join(dir, "out.raw")

	_, stderr, err := runDelego(t, "run", model, "--delegate", "edgetpu,cpu", "--settings", fallback, "--input", input, "--output", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	got := readFile(t, out)
	if !bytes.Equal(got, shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")) {
		t.Error("output differs from the golden cat_128 output of the CPU model")
	}
	if !strings.Contains(stderr, "no usable device") || !strings.Contains(stderr, "the result came from the CPU twin") {
		t.Errorf("stderr does not name the fallback:\n%s", stderr)
	}

	os.Remove(out)
	_, stderr, err = runDelego(t, "run", model, "--settings", strict, "--input", input, "--output", out)
	if err == nil || !strings.Contains(stderr, "delegate edgetpu: partition 0: compile: no usable device") {
		t.Errorf("without fallback: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failed run left an output file")
	}
}
