package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/internal/shared"
)

// TestEdgeTPUPlugin runs the Edge TPU model through the delego-edgetpu
// plugin binary (found on $DELEGO_PLUGIN_PATH): on the simulated device the
// whole driver path runs out of process and delego says the outputs are the
// simulator's; with no device and compile fallback allowed, the CPU twin
// gives the golden bytes.
func TestEdgeTPUPlugin(t *testing.T) {
	dir := t.TempDir()
	if err := goBuild(dir, nil, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu"); err != nil {
		t.Fatal(err)
	}
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	input := filepath.Join(dir, "in.raw")
	if err := os.WriteFile(input, shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.input.raw"), 0o644); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(dir, "fallback.json")
	writeFile(t, settings, `{"delegate": "EDGETPU_CORAL", "fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`)
	run := func(env []string, args ...string) (string, error) {
		t.Helper()
		_, stderr, err := runDelegoEnv(t, append(env, "DELEGO_PLUGIN_PATH="+dir), args...)
		return stderr, err
	}

	out := filepath.Join(dir, "sim.raw")
	stderr, err := run([]string{"DELEGO_EDGETPU_DEVICE=sim"}, "run", model, "--delegate", "edgetpu", "--input", input, "--output", out, "-v")
	if err != nil {
		t.Fatalf("simulated run: %v\n%s", err, stderr)
	}
	for _, want := range []string{"plugin " + filepath.Join(dir, "delego-edgetpu"), "simulated"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr should contain %q:\n%s", want, stderr)
		}
	}
	if st, err := os.Stat(out); err != nil || st.Size() != 1001 {
		t.Errorf("simulated output: %v, %v", st, err)
	}

	out = filepath.Join(dir, "twin.raw")
	stderr, err = run([]string{"DELEGO_EDGETPU_DEVICE="}, "run", model, "--settings", settings, "--input", input, "--output", out)
	if err != nil {
		t.Fatalf("fallback run: %v\n%s", err, stderr)
	}
	got := readFile(t, out)
	if !bytes.Equal(got, shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")) {
		t.Error("the twin's output through the plugin differs from the golden")
	}
	if !strings.Contains(stderr, "CPU twin") {
		t.Errorf("stderr should name the CPU twin:\n%s", stderr)
	}
}
