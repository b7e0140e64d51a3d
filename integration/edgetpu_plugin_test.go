package integration

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/testsupport/shared"
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

// TestEdgeTPUPipeline runs "delego pipeline" on the two-segment SSD
// MobileNet V2 through the delego-edgetpu plugin over two simulated Edge
// TPUs: it succeeds, each segment on its own device; when a device is
// unplugged during the pipelined runs, the command fails with that
// segment's error. No plugin process outlives delego either way.
func TestEdgeTPUPipeline(t *testing.T) {
	if err := subreaper(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := goBuild(dir, nil, "github.com/delego/delego/plugins/edgetpu/cmd/delego-edgetpu"); err != nil {
		t.Fatal(err)
	}
	args := []string{"pipeline",
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"),
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"),
		"--image", shared.Model(t, "cat.bmp"), "--runs", "3", "--json"}
	stdout, stderr, err := runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + dir, "DELEGO_EDGETPU_DEVICE=sim:2"}, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var r struct {
		Segments []struct{ Device string }
		Runs     int
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Runs != 3 || len(r.Segments) != 2 ||
		r.Segments[0].Device != "usb:0" || r.Segments[1].Device != "usb:1" {
		t.Errorf("report %+v (%v): %s", r, err, stdout)
	}
	checkNoOrphans(t)

	// One warm-up and three sequential runs: each device's invoke 5 is
	// its first in the pipeline.
	_, stderr, err = runDelegoEnv(t, []string{"DELEGO_PLUGIN_PATH=" + dir, "DELEGO_EDGETPU_DEVICE=sim:2:unplug-after=4"}, args...)
	if err == nil || !strings.Contains(stderr, "pipeline segment ") || !strings.Contains(stderr, "planned fault unplug-after=4") {
		t.Errorf("an unplugged device: %v\n%s", err, stderr)
	}
	checkNoOrphans(t)
}
