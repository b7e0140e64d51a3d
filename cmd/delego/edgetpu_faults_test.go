package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/delegate/plugin"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/testsupport/shared"
)

// edgetpuExecFallback allows the CPU twin to take over from an Edge TPU that
// fails while running.
const edgetpuExecFallback = `{"delegate": "EDGETPU_CORAL", "fallback_settings": {"allow_automatic_fallback_on_execution_error": true}}`

// TestRunEdgeTPUUnplugged rehearses an unplug from the command line:
// DELEGO_EDGETPU_DEVICE=sim:unplug-after=0 unplugs the simulated Coral USB
// Accelerator in the delego-edgetpu plugin during the first invoke. With
// fallback on execution errors the run completes on the CPU twin (the golden
// bytes) and says why; without it, the run fails naming the unplug.
func TestRunEdgeTPUUnplugged(t *testing.T) {
	t.Setenv(edgetpu.EnvDevice, "sim:unplug-after=0")
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	inputs := []string{"--input", shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")}
	golden := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")

	got, stderr := runOutput(t, model, inputs, "--settings", settingsFile(t, edgetpuExecFallback))
	if !bytes.Equal(got, golden) {
		t.Errorf("output: %s", firstDiff(got, golden))
	}
	twin := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 ||
		!strings.HasPrefix(lines[0], "delego: partition 0 on edgetpu failed to run (") ||
		!strings.Contains(lines[0], "no usable device") || !strings.Contains(lines[0], "(planned fault unplug-after=0): usb device disconnected") ||
		!strings.HasSuffix(lines[0], "the result came from the CPU twin "+twin) {
		t.Errorf("stderr %q, want one line saying the unplugged Edge TPU's result came from the CPU twin", stderr)
	}

	code, _, stderr := cli(t, append([]string{"run", model, "--delegate", "edgetpu"}, inputs...)...)
	if code != exitError {
		t.Fatalf("without fallback: status %d, stderr %q", code, stderr)
	}
	checkContains(t, "stderr", stderr, "delegate edgetpu: partition 0: execute:", "no usable device", "usb device disconnected", "planned fault unplug-after=0")
}

// TestBenchEdgeTPUUnpluggedMidRun: unplugged after two invokes, the
// simulated device fails the third; bench, with fallback on execution
// errors, completes every run, the later ones on the CPU twin, and reports
// the fallback.
func TestBenchEdgeTPUUnpluggedMidRun(t *testing.T) {
	t.Setenv(edgetpu.EnvDevice, "sim:unplug-after=2")
	model := shared.Model(t, "split_concat_edgetpu.tflite")
	args := append([]string{"bench", model, "--runs", "4", "--warmup", "1", "--json", "--settings", settingsFile(t, edgetpuExecFallback)},
		inputArgs(t, shared.Model(t, "split_concat.tflite"))...)
	code, stdout, stderr := cli(t, args...)
	if code != exitOK {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	var r benchReport
	decodeJSON(t, []byte(stdout), &r)
	if r.Twin == nil || len(r.Fallbacks) != 1 || r.Fallbacks[0].Delegate != edgetpu.Name || !strings.Contains(r.Fallbacks[0].Error, "unplug-after=2") {
		t.Errorf("twin %+v, fallbacks %+v", r.Twin, r.Fallbacks)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 1 ||
		!strings.Contains(lines[0], "planned fault unplug-after=2") || !strings.Contains(lines[0], "the result came from the CPU twin") {
		t.Errorf("stderr %q, want one line saying the unplugged Edge TPU's runs came from the CPU twin", stderr)
	}
	// The profile names each node as its own model has it: the Edge TPU
	// node of the first timed run, and the twin's three after it.
	var got []string
	for _, n := range r.Nodes {
		got = append(got, fmt.Sprintf("%s %d %s", n.Model, n.Node, n.Op))
	}
	slices.Sort(got)
	if want := []string{" 0 DELEGATE:edgetpu", "twin 0 CONCATENATION", "twin 1 SPLIT", "twin 2 CONCATENATION"}; !slices.Equal(got, want) {
		t.Errorf("profile nodes %q, want %q", got, want)
	}
}

// TestBenchEdgeTPUPluginRestarts: an Edge TPU plugin that crashes in its
// second invoke (DELEGO_PLUGIN_FAULT) has the CPU twin stand in for that
// run, and is restarted for the next ones (where it crashes again on its
// second): every run completes, the story is told once, and the twin does
// not take over for good.
func TestBenchEdgeTPUPluginRestarts(t *testing.T) {
	t.Setenv(edgetpu.EnvDevice, "sim")
	t.Setenv(plugin.EnvFault, "edgetpu:crash-after=1")
	model := shared.Model(t, "split_concat_edgetpu.tflite")
	args := append([]string{"bench", model, "--runs", "2", "--warmup", "1", "--json", "--settings", settingsFile(t, edgetpuExecFallback)},
		inputArgs(t, shared.Model(t, "split_concat.tflite"))...)
	code, stdout, stderr := cli(t, args...)
	if code != exitOK {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	var r benchReport
	decodeJSON(t, []byte(stdout), &r)
	var outcomes []string
	for _, fb := range r.Fallbacks {
		outcomes = append(outcomes, fb.Outcome)
	}
	if r.Twin != nil || !slices.Equal(outcomes, []string{"twin-once", "restarted"}) {
		t.Errorf("twin %+v, outcomes %q", r.Twin, outcomes)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "delego: partition 0 on edgetpu failed to run (plugin process died") ||
		!strings.HasSuffix(last, "; the CPU twin stood in, its plugin was restarted once: the result came partly from the CPU twin") {
		t.Errorf("stderr %q", stderr)
	}
}
