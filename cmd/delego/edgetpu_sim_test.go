package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/testsupport/shared"
)

// TestRunEdgeTPUSimulated: DELEGO_EDGETPU_DEVICE=sim runs the whole driver
// path on a simulated Coral USB Accelerator from the command line; delego
// says the outputs are the simulator's, and DELEGO_USB_TRACE records every
// USB operation.
func TestRunEdgeTPUSimulated(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "usb.trace")
	t.Setenv(edgetpu.EnvDevice, "sim")
	t.Setenv(edgetpu.EnvTrace, trace)
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	input := shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	in, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	got, stderr := runOutput(t, model, []string{"--input", input}, "--delegate", "edgetpu")
	if !strings.Contains(stderr, "the Edge TPU is simulated (DELEGO_EDGETPU_DEVICE=sim)") || !strings.Contains(stderr, "not the model's results") {
		t.Errorf("stderr %q does not say the outputs are simulated", stderr)
	}
	// The simulator's output: a counter from the sum of the input bytes.
	var seed byte
	for _, b := range in {
		seed += b
	}
	if len(got) != 1001 {
		t.Fatalf("%d output bytes", len(got))
	}
	for i, v := range got {
		if v != seed+byte(i) {
			t.Fatalf("output byte %d is %d, want %d", i, v, seed+byte(i))
		}
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{
		"000001 API open bus=1 ports=1 address=2 id=18d1:9302 speed=super result=ok",
		"CTRL IN  bmRequestType=0xc0 bRequest=0x01 wValue=0xa30c wIndex=0x0001 wLength=4 result=4 data=41090000",
		"BULK_OUT ep=0x01 id=", "BULK_IN_DONE ep=0x81", "BULK_IN_DONE ep=0x82", "API close result=ok",
	} {
		if !strings.Contains(string(b), w) {
			t.Errorf("the trace has no %q", w)
		}
	}

	code, stdout, _ := cli(t, "devices")
	if code != exitOK || !strings.Contains(stdout, "usb:0  18d1:9302  ready") {
		t.Errorf("devices: %d %q", code, stdout)
	}
}

// TestRunEdgeTPUSimulatedFirmware: DELEGO_EDGETPU_DEVICE=sim-dfu is a
// device waiting for its firmware: without DELEGO_EDGETPU_FIRMWARE the run
// fails and says what to set; with it, it runs.
func TestRunEdgeTPUSimulatedFirmware(t *testing.T) {
	t.Setenv(edgetpu.EnvDevice, "sim-dfu")
	model := shared.Model(t, "split_concat_edgetpu.tflite")
	inputs := inputArgs(t, shared.Model(t, "split_concat.tflite"))
	out := filepath.Join(t.TempDir(), "out.raw")
	code, _, stderr := cli(t, append([]string{"run", model, "--output", out, "--delegate", "edgetpu"}, inputs...)...)
	if code != exitError || !strings.Contains(stderr, "waits for its firmware") || !strings.Contains(stderr, "DELEGO_EDGETPU_FIRMWARE") {
		t.Fatalf("status %d, stderr %q", code, stderr)
	}
	fw := filepath.Join(t.TempDir(), "fw.bin")
	if err := os.WriteFile(fw, []byte{2, 4, 6, 8}, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(edgetpu.EnvFirmware, fw)
	if _, stderr := runOutput(t, model, inputs, "--delegate", "edgetpu"); !strings.Contains(stderr, "simulated") {
		t.Errorf("stderr %q", stderr)
	}
	t.Setenv(edgetpu.EnvDevice, "tpu9")
	code, _, stderr = cli(t, append([]string{"run", model, "--output", out, "--delegate", "edgetpu"}, inputs...)...)
	if code != exitError || !strings.Contains(stderr, `DELEGO_EDGETPU_DEVICE="tpu9"`) {
		t.Errorf("a bad device: %d %q", code, stderr)
	}
}
