package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/plugins/edgetpu"
	"github.com/delego/delego/plugins/edgetpu/usb"
	"github.com/delego/delego/testsupport/shared"
)

// Settings for the Edge TPU: the delegate from the settings, with and
// without fallback.
const (
	edgetpuFallback   = `{"delegate": "EDGETPU_CORAL", "fallback_settings": {"allow_automatic_fallback_on_compilation_error": true}}`
	edgetpuNoFallback = `{"delegate": "EDGETPU_CORAL"}`
)

// noEdgeTPUHere reports whether libusb sees no Coral device on this
// machine (the usual case), where the messages can be checked in full.
func noEdgeTPUHere(t *testing.T) bool {
	t.Helper()
	devs, err := edgetpu.Devices(context.Background(), edgetpu.LibUSB())
	return err == nil && len(devs) == 0
}

// TestRunEdgeTPUTwin is the Edge TPU path end to end, through the real
// delegate and libusb: without a usable Edge TPU, fallback allowed, the
// result is the CPU model's golden output and delego names the twin.
func TestRunEdgeTPUTwin(t *testing.T) {
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	twin := shared.Model(t, "mobilenet_v1_0.25_128_quant.tflite")
	inputs := []string{"--input", shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")}
	golden := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")
	fallback := settingsFile(t, edgetpuFallback)
	renamed := writeFile(t, t.TempDir(), "compiled.tflite", mustRead(t, model))

	for _, c := range []struct {
		name  string
		model string
		args  []string
	}{
		{"delegate from the settings", model, []string{"--settings", fallback}},
		{"edgetpu then cpu", model, []string{"--delegate", "edgetpu,cpu", "--settings", fallback}},
		{"--cpu-twin", renamed, []string{"--settings", fallback, "--cpu-twin", twin}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, stderr := runOutput(t, c.model, inputs, c.args...)
			if !bytes.Equal(got, golden) {
				t.Errorf("output: %s", firstDiff(got, golden))
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "delego: partition 0 on edgetpu failed to compile (no usable device: ") ||
				!strings.HasSuffix(lines[0], "the result came from the CPU twin "+twin) {
				t.Errorf("stderr %q, want one line naming the twin", stderr)
			}
			if noEdgeTPUHere(t) && !strings.Contains(stderr, "1a6e:089a") {
				t.Errorf("stderr %q does not say what was looked for", stderr)
			}
		})
	}

	t.Run("-v", func(t *testing.T) {
		_, stderr := runOutput(t, model, inputs, "--settings", fallback, "-v")
		checkContains(t, "stderr", stderr, "plan: delegates edgetpu: 31 nodes: 0 on delegates in 0 partitions, 31 on the CPU",
			"the result came from the CPU twin "+twin)
	})
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRunEdgeTPUErrors: without fallback, or without a twin, the missing
// device reaches the caller and delego exits with status 1.
func TestRunEdgeTPUErrors(t *testing.T) {
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	input := shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")
	alone := writeFile(t, t.TempDir(), "lonely_edgetpu.tflite", mustRead(t, model))
	fallback := settingsFile(t, edgetpuFallback)
	for _, c := range []struct {
		name  string
		model string
		args  []string
		want  []string
	}{
		{"no fallback", model, []string{"--settings", settingsFile(t, edgetpuNoFallback)},
			[]string{"delegate edgetpu: partition 0: compile: no usable device"}},
		{"--delegate edgetpu without settings", model, []string{"--delegate", "edgetpu"},
			[]string{"delegate edgetpu: partition 0: compile: no usable device"}},
		{"no twin beside", alone, []string{"--settings", fallback},
			[]string{"no usable device", "its CPU twin " + strings.TrimSuffix(alone, "_edgetpu.tflite") + ".tflite could not run instead", "no such file"}},
		{"--cpu-twin missing", model, []string{"--settings", fallback, "--cpu-twin", filepath.Join(t.TempDir(), "nope.tflite")},
			[]string{"no usable device", "nope.tflite could not run instead"}},
		{"--cpu-twin not the twin", model, []string{"--settings", fallback, "--cpu-twin", shared.Model(t, "mobilenet_v1_0.25_128_float.tflite")},
			[]string{"no usable device", `input 0 "input" is UINT8 [1 128 128 3]`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.raw")
			code, stdout, stderr := cli(t, append([]string{"run", c.model, "--input", input, "--output", out}, c.args...)...)
			if code != exitError || stdout != "" {
				t.Fatalf("status %d, stdout %q, stderr %q; want 1", code, stdout, stderr)
			}
			checkContains(t, "stderr", stderr, c.want...)
			if noEdgeTPUHere(t) {
				checkContains(t, "stderr", stderr, "found no Coral USB Accelerators", "1a6e:089a", "18d1:9302")
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Error("a failed run wrote its output")
			}
		})
	}
}

// TestPlanAndBenchEdgeTPUTwin: the plan is the model's whatever the device
// state (exit status 0): its Edge TPU partition says why it cannot compile
// here and what the settings make of that, the CPU twin or the error.
func TestPlanAndBenchEdgeTPUTwin(t *testing.T) {
	model := shared.Model(t, "split_concat_edgetpu.tflite")
	twin := shared.Model(t, "split_concat.tflite")
	fallback := settingsFile(t, edgetpuFallback)
	r, err := planJSON(t, env{}, model, "--settings", fallback)
	if err != nil {
		t.Fatal(err)
	}
	if r.Twin == nil || r.Twin.Path != twin || len(r.Twin.Fallbacks) != 1 || r.Twin.Fallbacks[0].Delegate != "edgetpu" ||
		!strings.Contains(r.Twin.Fallbacks[0].Error, "no usable device") || r.Summary.Nodes != 1 || len(r.Partitions) != 1 ||
		r.Partitions[0].Delegate != "edgetpu" || r.Partitions[0].Fallback != "cpu-twin" ||
		!strings.Contains(r.Partitions[0].CannotCompile, "no usable device") || r.Error != "" {
		t.Errorf("plan %+v twin %+v", r, r.Twin)
	}
	text, _, err := plan(t, env{}, model, "--settings", fallback)
	if err != nil {
		t.Fatal(err)
	}
	checkContains(t, "plan", text, "CPU twin: "+twin+" runs instead: partition 0 on edgetpu failed to compile (no usable device",
		"partition 0 on edgetpu: 1 node, cannot compile here", "then: the CPU twin "+twin+" runs instead", "0 edgetpu-custom-op v1")
	for _, args := range [][]string{{"--settings", settingsFile(t, edgetpuNoFallback)}, nil} {
		r, err := planJSON(t, env{}, append([]string{model}, args...)...)
		if err != nil {
			t.Fatalf("plan %v without fallback: %v", args, err)
		}
		if r.Twin != nil || len(r.Partitions) != 1 || r.Partitions[0].Fallback != "error" || !strings.Contains(r.Error, "a run here would fail") ||
			!strings.Contains(r.Partitions[0].CannotCompile, "no usable device") || strings.Contains(r.Partitions[0].CannotCompile, "compile:") {
			t.Errorf("plan %v without fallback: %+v", args, r)
		}
	}

	code, stdout, stderr := cli(t, "bench", model, "--settings", fallback, "--runs", "2", "--json")
	if code != exitOK {
		t.Fatalf("bench: status %d, %s", code, stderr)
	}
	var b benchReport
	decodeJSON(t, []byte(stdout), &b)
	if b.Twin == nil || b.Twin.Path != twin || len(b.Nodes) != 3 {
		t.Errorf("bench %+v", b)
	}
	checkContains(t, "bench stderr", stderr, "the result came from the CPU twin "+twin)
}

func TestDevicesCommand(t *testing.T) {
	sim := usb.NewSimBus(
		usb.NewSimDevice(usb.Info{ID: usb.ID{Vendor: edgetpu.DFUVendor, Product: edgetpu.DFUProduct}, Bus: 3, Address: 2, Ports: []int{2}, Speed: usb.SpeedHigh}),
		usb.NewSimDevice(usb.Info{ID: usb.ID{Vendor: edgetpu.AppVendor, Product: edgetpu.AppProduct}, Bus: 1, Address: 5, Ports: []int{1, 3}, Speed: usb.SpeedSuper}),
	)
	devices := func(e env, args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if err := devicesWith(context.Background(), args, &out, &bytes.Buffer{}, e); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	text := devices(env{devices: onBus(edgetpu.Sim(sim))})
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "path") ||
		strings.Join(strings.Fields(lines[1]), " ") != "usb:0 18d1:9302 ready super (5 Gbit/s) 1-1.3" ||
		strings.Join(strings.Fields(lines[2]), " ") != "usb:1 1a6e:089a needs-firmware high (480 Mbit/s) 3-2" {
		t.Errorf("text:\n%s", text)
	}
	var r devicesReport
	decodeJSON(t, []byte(devices(env{devices: onBus(edgetpu.Sim(sim))}, "--json")), &r)
	want := deviceReport{Path: "usb:1", VendorProduct: "1a6e:089a", State: "needs-firmware", Speed: "high", Bus: 3, Address: 2, Ports: []int{2}, Location: "3-2"}
	if !slices.Equal(r.LookedFor, []string{"1a6e:089a", "18d1:9302"}) || len(r.Devices) != 2 || r.Devices[0].Path != "usb:0" ||
		!slices.Equal(r.Devices[1].Ports, want.Ports) || r.Devices[1].Location != want.Location || r.Devices[1].State != want.State {
		t.Errorf("json %+v", r)
	}
	if got := devices(env{devices: onBus(edgetpu.Sim(usb.NewSimBus()))}); !strings.Contains(got, "no Edge TPU found") || !strings.Contains(got, "18d1:9302") {
		t.Errorf("no devices: %q", got)
	}
	sim.FailEnumeration(errors.New("LIBUSB_ERROR_ACCESS"))
	if err := devicesWith(context.Background(), nil, &bytes.Buffer{}, &bytes.Buffer{}, env{devices: onBus(edgetpu.Sim(sim))}); err == nil || !strings.Contains(err.Error(), "LIBUSB_ERROR_ACCESS") {
		t.Errorf("libusb failing: %v", err)
	}

	// Through libusb on this machine: no error, and JSON that lists what it found.
	code, stdout, stderr := cli(t, "devices", "--json")
	if code != exitOK {
		t.Fatalf("status %d, %s", code, stderr)
	}
	decodeJSON(t, []byte(stdout), &r)
	if noEdgeTPUHere(t) && len(r.Devices) != 0 {
		t.Errorf("devices %+v", r.Devices)
	}
	if code, _, _ := cli(t, "devices", "extra"); code != exitUsage {
		t.Errorf("an argument: status %d", code)
	}
}

func TestInspectEdgeTPUExecutables(t *testing.T) {
	r, raw := inspectJSON(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	if len(r.EdgeTPU) != 1 {
		t.Fatalf("%d edgetpu reports", len(r.EdgeTPU))
	}
	e := r.EdgeTPU[0]
	if e.Error != "" || e.Check != "ok" || len(e.Packages) != 1 || e.CustomOptionsBytes != 778324 {
		t.Fatalf("report %+v", e)
	}
	p := e.Packages[0]
	if p.ChipCode == nil || *p.ChipCode != 18 || p.CompilerVersion != "cl/" || p.MinRuntimeVersion != 12 || len(p.Executables) != 2 {
		t.Errorf("package %+v", p)
	}
	main, caching := p.Executables[0], p.Executables[1]
	if !main.Main || main.Type != "EXECUTION_ONLY" || main.CachingToken != "0x6d146c3f97d6648c" || caching.CachingToken != main.CachingToken ||
		len(main.Bitstreams) != 1 || main.Bitstreams[0].Bytes != 170032 || main.Bitstreams[0].FieldOffsets != 8 ||
		main.DMAHints.Count != 4 || main.DMAHints.InBytes != 49152 || main.DMAHints.OutBytes != 1008 || caching.ParametersBytes != 566912 {
		t.Errorf("executables %+v %+v", main, caching)
	}
	if in := main.Inputs[0]; in.Name != "input" || !slices.Equal(in.Dims, []int{128, 128, 3}) || in.DataType != "FIXED_POINT8" || in.ZeroPoint != 128 {
		t.Errorf("input %+v", in)
	}
	if out := main.Outputs[0]; out.SizeBytes != 1008 || out.ActualBytes != 1001 || !out.TiledLayout || len(out.Shape) != 2 {
		t.Errorf("output %+v", out)
	}
	if _, ok := raw["edgetpu"]; !ok {
		t.Error("no edgetpu field in the JSON")
	}
	if _, raw := inspectJSON(t, "mobilenet_v1_0.25_128_quant.tflite"); raw["edgetpu"] != nil {
		t.Error("a CPU model has an edgetpu field")
	}

	text := inspectText(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	checkContains(t, "inspect", text,
		"Edge TPU (edgetpu-custom-op):",
		`package 0: 778240 bytes ("DWN1"), chip code 18, compiler version "cl/", min runtime version 12`,
		`executable 0 EXECUTION_ONLY "model" (runs the inference): chip "beagle"`,
		"caching token 0x6d146c3f97d6648c",
		"instruction bitstream 0: 170032 bytes, 8 field offsets (parameters 2, scratch 2, input 2, output 2)",
		"DMA hints: 4, fully deterministic: 1 instruction, 1 in (49152 bytes), 1 out (1008 bytes), 1 interrupt, 0 fence",
		`input 0 "input": FIXED_POINT8 128x128x3, 49152 bytes, zero point 128, scale 0.0078125`,
		`output 0 "MobilenetV1/Predictions/Reshape_1": FIXED_POINT8 1x1x1001, 1008 bytes (1001 without padding)`,
		`executable 1 PARAMETER_CACHING "Unknown" (caches the parameters)`, "parameters 566912 bytes")
}

// TestInspectBrokenEdgeTPUOptions: inspect still describes a model whose
// Edge TPU options cannot be read, and says why.
func TestInspectBrokenEdgeTPUOptions(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", 3, []int{1, 4})
	out := b.Tensor("out", 3, []int{1, 4})
	b.CustomOp("edgetpu-custom-op", 1, []int{in}, []int{out}, []byte("garbage options"))
	b.Inputs(in)
	b.Outputs(out)
	p := writeFile(t, t.TempDir(), "broken_edgetpu.tflite", b.Bytes())
	code, stdout, stderr := cli(t, "inspect", p)
	if code != exitOK {
		t.Fatalf("status %d, %s", code, stderr)
	}
	checkContains(t, "inspect", stdout, "subgraph 0 op 0: custom options 15 bytes, unreadable: edgetpu-custom-op options:")
	code, stdout, _ = cli(t, "inspect", p, "--json")
	var r map[string]any
	if err := json.Unmarshal([]byte(stdout), &r); code != exitOK || err != nil {
		t.Fatalf("status %d, %v", code, err)
	}
	e := r["edgetpu"].([]any)[0].(map[string]any)
	if !strings.Contains(e["error"].(string), "edgetpu-custom-op options") || e["packages"] != nil {
		t.Errorf("edgetpu %v", e)
	}
}

// TestRunEdgeTPUWithoutPlugin is a fresh clone: no delego-edgetpu binary
// anywhere. The edgetpu delegate is unavailable, which with compile
// fallback hands the model to its CPU twin (the golden bytes), and without
// it is the error, naming the missing plugin.
func TestRunEdgeTPUWithoutPlugin(t *testing.T) {
	t.Setenv("DELEGO_PLUGIN_PATH", t.TempDir())
	model := shared.Model(t, "mobilenet_v1_0.25_128_quant_edgetpu.tflite")
	inputs := []string{"--input", shared.Path(t, "golden", "mobilenet_v1_0.25_128_quant__cat_128.input.raw")}
	golden := shared.ReadGolden(t, "mobilenet_v1_0.25_128_quant__cat_128.output.raw")

	got, stderr := runOutput(t, model, inputs, "--settings", settingsFile(t, edgetpuFallback))
	if !bytes.Equal(got, golden) {
		t.Errorf("output: %s", firstDiff(got, golden))
	}
	checkContains(t, "stderr", stderr, "no plugin binary delego-edgetpu", "the result came from the CPU twin")

	code, _, stderr := cli(t, append([]string{"run", model, "--delegate", "edgetpu"}, inputs...)...)
	if code != exitError {
		t.Fatalf("without fallback: status %d, stderr %q", code, stderr)
	}
	checkContains(t, "stderr", stderr, "delegate edgetpu: compile:", "no plugin binary delego-edgetpu", "go build -o bin/ ./...")

	// Without its plugin, delego does not know what the Edge TPU declares:
	// the plan has no partition for it, and says on the compiled op why
	// (the missing plugin and how to install it) and that it runs nowhere.
	r, err := planJSON(t, env{}, model, "--delegate", "edgetpu")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Partitions) != 0 || len(r.CPUNodes) != 1 || len(r.CPUNodes[0].Reasons) != 1 || !r.CPUNodes[0].NoCPUKernel ||
		!strings.Contains(r.CPUNodes[0].Reasons[0], "edgetpu: unavailable: ") || !strings.Contains(r.CPUNodes[0].Reasons[0], "install it") {
		t.Errorf("plan partitions %+v, CPU nodes %+v; want none, and edgetpu-custom-op on the CPU naming the missing plugin", r.Partitions, r.CPUNodes)
	}
}

// TestPlanEveryEdgeTPUModel: whatever the devices here, the plan of every
// Edge TPU model of the shared data comes back (exit status 0) with its
// Edge TPU partition, why that cannot compile here, and what a run does
// then; every node left to the CPU has a kernel there (PoseNet's decoder op
// included).
func TestPlanEveryEdgeTPUModel(t *testing.T) {
	models, err := filepath.Glob(shared.Model(t, "*_edgetpu.tflite"))
	if err != nil || len(models) < 2 {
		t.Fatalf("Edge TPU models: %v, %v", models, err)
	}
	for _, m := range models {
		t.Run(filepath.Base(m), func(t *testing.T) {
			r, err := planJSON(t, env{}, m)
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			if len(r.Partitions) == 0 || r.Partitions[0].Delegate != "edgetpu" || r.Partitions[0].CannotCompile == "" ||
				r.Partitions[0].Fallback != "error" || !strings.Contains(r.Error, "a run here would fail") {
				t.Errorf("plan %+v", r)
			}
			if !noEdgeTPUHere(t) {
				return
			}
			for _, p := range r.Partitions {
				if !strings.Contains(p.CannotCompile, "no usable device") {
					t.Errorf("partition %d cannot compile: %q", p.Index, p.CannotCompile)
				}
			}
			for _, n := range r.CPUNodes {
				if n.NoCPUKernel {
					t.Errorf("cpu node %+v has no CPU kernel", n)
				}
			}
		})
	}
}
