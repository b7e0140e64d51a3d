package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/delego/delego/plugins/edgetpu/edgetpuinfo"
	"github.com/delego/delego/testsupport/shared"
)

// TestRunEdgeTPUSimulated: DELEGO_EDGETPU_DEVICE=sim runs the whole driver
// path on a simulated Coral USB Accelerator from the command line; delego
// says the outputs are the simulator's, and DELEGO_USB_TRACE records every
// USB operation.
func TestRunEdgeTPUSimulated(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "usb.trace")
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	t.Setenv(edgetpuinfo.EnvTrace, trace)
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
	t.Setenv(edgetpuinfo.EnvDevice, "sim-dfu")
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
	t.Setenv(edgetpuinfo.EnvFirmware, fw)
	if _, stderr := runOutput(t, model, inputs, "--delegate", "edgetpu"); !strings.Contains(stderr, "simulated") {
		t.Errorf("stderr %q", stderr)
	}
	t.Setenv(edgetpuinfo.EnvDevice, "tpu9")
	code, _, stderr = cli(t, append([]string{"run", model, "--output", out, "--delegate", "edgetpu"}, inputs...)...)
	if code != exitError || !strings.Contains(stderr, `DELEGO_EDGETPU_DEVICE="tpu9"`) {
		t.Errorf("a bad device: %d %q", code, stderr)
	}
}

// TestRunKerasLSTMSimulated: Coral's keras_lstm_mnist_ptq_edgetpu.tflite
// (google-coral/test_data, read from DELEGO_GITHUB_MODELS laid out as
// OWNER+NAME/PATH: it is not in ../shared), whose DMA hints are not fully
// deterministic, passes inspect's runtime check and runs on the simulated
// device from the command line, its LSTM state tensors included: the
// trace shows the driver asking for every DMA descriptor (descr_ep 0xff)
// and the events the device sends: the parameters' and inputs' DMAs the
// hints name, then the three output DMAs and the completion that only the
// device's descriptors tell of.
func TestRunKerasLSTMSimulated(t *testing.T) {
	dir := os.Getenv("DELEGO_GITHUB_MODELS")
	if dir == "" {
		t.Skip("set DELEGO_GITHUB_MODELS (a folder of OWNER+NAME/PATH files) holding google-coral+test_data/keras_lstm_mnist_ptq_edgetpu.tflite")
	}
	model := filepath.Join(dir, "google-coral+test_data", "keras_lstm_mnist_ptq_edgetpu.tflite")
	code, stdout, stderr := cli(t, "inspect", model)
	if code != exitOK || !strings.Contains(stdout, "runtime check: ok") ||
		!strings.Contains(stdout, "DMA hints: 5, not fully deterministic (the device sends DMA descriptors): 1 instruction, 4 in (1424 bytes), 0 out") {
		t.Errorf("inspect: %d %q\n%s", code, stderr, stdout)
	}
	trace := filepath.Join(t.TempDir(), "usb.trace")
	t.Setenv(edgetpuinfo.EnvDevice, "sim")
	t.Setenv(edgetpuinfo.EnvTrace, trace)
	input := filepath.Join(t.TempDir(), "x.raw")
	if err := os.WriteFile(input, make([]byte, 28*28), 0o644); err != nil {
		t.Fatal(err)
	}
	got, stderr := runOutput(t, model, []string{"--input", input}, "--delegate", "edgetpu")
	if len(got) != 10 || !strings.Contains(stderr, "simulated") {
		t.Errorf("%d output bytes, stderr %q", len(got), stderr)
	}
	b, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "CTRL OUT bmRequestType=0x40 bRequest=0x00 wValue=0xc148 wIndex=0x0004 wLength=8 result=8 data=ff00000000000000") {
		t.Error("the trace has no write of 0xff to descr_ep (0x4c148)")
	}
	var events []string
	for _, l := range strings.Split(string(b), "\n") {
		if _, ev, ok := strings.Cut(l, "BULK_IN_DONE ep=0x82 "); ok && strings.Contains(ev, "COMPLETED") {
			events = append(events, ev[strings.Index(ev, "data=")+5:])
		}
	}
	// Address (8 bytes), length (4), tag (1), 3 zero bytes: the caching
	// executable's parameters (43968 bytes at 0x7f1000000000, tag 2) and
	// its interrupt 0 (tag 4); the main executable's parameters (576 bytes
	// a page after), its inputs (784, 24, 40 bytes, tag 1, a page each
	// after the scratch page at 0x7f2000000000), its outputs (16, 24, 40
	// bytes, tag 3) and its interrupt 0.
	want := []string{
		"00000000107f0000c0ab000002000000", "00000000000000000000000004000000",
		"00b00000107f00004002000002000000",
		"00100000207f00001003000001000000", "00200000207f00001800000001000000", "00300000207f00002800000001000000",
		"00400000207f00001000000003000000", "00500000207f00001800000003000000", "00600000207f00002800000003000000",
		"00000000000000000000000004000000",
	}
	if strings.Join(events, " ") != strings.Join(want, " ") {
		t.Errorf("events:\n%q\nwant\n%q", events, want)
	}
}
