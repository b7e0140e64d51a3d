package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/testsupport/shared"
)

// TestPipelineSimulated: "delego pipeline" runs the two-segment SSD
// MobileNet V2 over sim:2 (a segment on each simulated Edge TPU, through
// one delego-edgetpu plugin) and over sim:1 (both on usb:0), each pipelined
// output equal to the sequential run's, and reports throughput and
// per-segment latency; "delego devices" lists both simulated devices.
func TestPipelineSimulated(t *testing.T) {
	segs := []string{
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_0_of_2_edgetpu.tflite"),
		shared.Model(t, "ssd_mobilenet_v2_coco_quant_postprocess_segment_1_of_2_edgetpu.tflite"),
	}
	image := shared.Model(t, "cat.bmp")
	for _, c := range []struct {
		sim     string
		devices []string
	}{{"sim:2", []string{"usb:0", "usb:1"}}, {"sim:1", []string{"usb:0", "usb:0"}}} {
		t.Run(c.sim, func(t *testing.T) {
			t.Setenv(edgetpu.EnvDevice, c.sim)
			code, stdout, stderr := cli(t, append(append([]string{"pipeline"}, segs...), "--image", image, "--runs", "3", "--json")...)
			if code != exitOK {
				t.Fatalf("status %d, stderr %q", code, stderr)
			}
			var r pipelineReport
			if err := json.Unmarshal([]byte(stdout), &r); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if r.Runs != 3 || r.MaxInFlight != 4 || r.Simulated != c.sim || len(r.Outputs) != 4 || r.Outputs[0].Name != "TFLite_Detection_PostProcess" {
				t.Errorf("report %+v", r)
			}
			if r.Sequential.PerSecond <= 0 || r.Pipelined.PerSecond <= 0 || r.Speedup <= 0 {
				t.Errorf("throughput %+v %+v", r.Sequential, r.Pipelined)
			}
			for k, s := range r.Segments {
				if s.Device != c.devices[k] || s.Runs != 3 || s.MeanMs <= 0 || s.Model != segs[k] {
					t.Errorf("segment %d: %+v", k, s)
				}
			}
			if !strings.Contains(stderr, "the Edge TPUs are simulated") {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
	t.Setenv(edgetpu.EnvDevice, "sim:2")
	code, stdout, stderr := cli(t, append(append([]string{"pipeline"}, segs...), "--image", image, "--runs", "2")...)
	if code != exitOK || !strings.Contains(stdout, "pipelined:  2 runs") || !strings.Contains(stdout, "every pipelined output equals the sequential run's") {
		t.Errorf("text: status %d, %s%s", code, stdout, stderr)
	}
	raw := filepath.Join(t.TempDir(), "in.raw")
	if err := os.WriteFile(raw, make([]byte, 300*300*3), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = cli(t, append(append([]string{"pipeline"}, segs...), "--input", raw, "--runs", "2", "--devices", "usb:1,usb:0", "--json")...)
	if code != exitOK || !strings.Contains(stdout, `"device": "usb:1"`) {
		t.Errorf("--input and --devices: status %d, %s%s", code, stdout, stderr)
	}
	code, _, stderr = cli(t, append(append([]string{"pipeline"}, segs...), "--input", raw, "--devices", "usb:0")...)
	if code != exitUsage || !strings.Contains(stderr, "--devices names 1 devices for 2 segments") {
		t.Errorf("--devices for one segment: status %d, %s", code, stderr)
	}
	code, _, stderr = cli(t, append(append([]string{"pipeline"}, segs...), "--input", image)...)
	if code != exitError || !strings.Contains(stderr, "normalized_input_image_tensor") {
		t.Errorf("an input of the wrong size: status %d, %s", code, stderr)
	}
	if code, stdout, _ := cli(t, "devices"); code != exitOK || !strings.Contains(stdout, "usb:0  18d1:9302  ready") || !strings.Contains(stdout, "usb:1  18d1:9302  ready") {
		t.Errorf("devices: %d %q", code, stdout)
	}
}

// TestPipelineUsage: the command's mistakes are usage errors that say
// what is wrong.
func TestPipelineUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--image", "x.bmp"}, "need the segments"},
		{[]string{"a.tflite"}, "need --input FILE... or --image PICTURE"},
		{[]string{"a.tflite", "--image", "x", "--input", "y"}, "cannot be used together"},
		{[]string{"a.tflite", "--image", "x", "--runs", "0"}, "--runs must be at least 1"},
	} {
		code, _, stderr := cli(t, append([]string{"pipeline"}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: status %d, stderr %q", c.args, code, stderr)
		}
	}
}
