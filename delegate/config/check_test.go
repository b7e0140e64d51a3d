package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// running is what the host honours while the built-in delegate d runs:
// stand-ins for what its plugin declares (Honours in plugins/*), which the
// config package cannot import.
func running(d Delegate) Capabilities {
	own := map[Delegate][]string{
		Delegate_GPU: {"gpu_settings.is_precision_loss_allowed", "gpu_settings.enable_quantized_inference", "gpu_settings.force_backend"},
		Delegate_NNAPI: {"nnapi_settings.accelerator_name", "nnapi_settings.cache_directory", "nnapi_settings.model_token",
			"nnapi_settings.execution_preference", "nnapi_settings.execution_priority", "nnapi_settings.allow_nnapi_cpu_on_android_10_plus",
			"nnapi_settings.allow_fp16_precision_for_fp32", "nnapi_settings.use_burst_computation"},
		Delegate_XNNPACK: {"xnnpack_settings.num_threads"},
		Delegate_EDGETPU_CORAL: {"coral_settings.device", "coral_settings.performance", "coral_settings.usb_always_dfu",
			"coral_settings.usb_max_bulk_in_queue_length", "coral_settings.firmware_path"},
	}
	return HostCapabilities().With(own[d]...)
}

func TestCapabilitiesValid(t *testing.T) {
	for _, d := range []Delegate{Delegate_NONE, Delegate_GPU, Delegate_NNAPI, Delegate_XNNPACK, Delegate_EDGETPU_CORAL} {
		if err := running(d).Validate(); err != nil {
			t.Errorf("%v: %v", d, err)
		}
	}
}

func TestCapabilitiesValidate(t *testing.T) {
	c := running(Delegate_EDGETPU_CORAL).With(
		"gpu_settings.is_precision_loss_allowed", // fine
		"cpu_settings.threads",                   // no such field
		"delegate.value",                         // beneath a scalar
		"tflite_settings.delegate",               // paths are relative to TFLiteSettings
	)
	err := c.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"cpu_settings.threads"`, `"delegate.value"`, `"tflite_settings.delegate"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "is_precision_loss_allowed") {
		t.Errorf("error %q names a valid path", err)
	}
}

func TestCapabilitiesWithDoesNotAlias(t *testing.T) {
	base := running(Delegate_EDGETPU_CORAL)
	a := base.With("gpu_settings")
	b := base.With("hexagon_settings")
	if a.Honoured[len(a.Honoured)-1] != "gpu_settings" || b.Honoured[len(b.Honoured)-1] != "hexagon_settings" {
		t.Errorf("With shares storage: %v, %v", a.Honoured, b.Honoured)
	}
	if len(base.Honoured) != len(running(Delegate_EDGETPU_CORAL).Honoured) {
		t.Error("With changed its receiver")
	}
}

func paths(issues []Issue) []string {
	var out []string
	for _, i := range issues {
		out = append(out, i.Path)
	}
	return out
}

// TestCheckNested sets a GPU field and a Hexagon field beside honoured
// settings: both come back with their full paths, nothing else does.
func TestCheckNested(t *testing.T) {
	s := coralTFLite()
	s.GpuSettings = &GPUSettings{IsPrecisionLossAllowed: proto.Bool(true)}
	s.HexagonSettings = &HexagonSettings{PowersaveLevel: proto.Int32(2)}
	issues := Check(s, running(Delegate_EDGETPU_CORAL))
	want := []Issue{
		{Path: "tflite_settings.gpu_settings.is_precision_loss_allowed", Severity: Warning,
			Reason: "tflite_settings.gpu_settings is not the selected delegate's (EDGETPU_CORAL); TFLite ignores it too"},
		{Path: "tflite_settings.hexagon_settings.powersave_level", Severity: Warning,
			Reason: "tflite_settings.hexagon_settings is not the selected delegate's (EDGETPU_CORAL); TFLite ignores it too"},
	}
	if !reflect.DeepEqual(issues, want) {
		t.Errorf("Check = %v\nwant %v", issues, want)
	}
	if err := Err(issues); err != nil {
		t.Errorf("Err(warnings only) = %v", err)
	}
	if got := issues[0].String(); !strings.HasPrefix(got, "warning: delego ignores tflite_settings.gpu_settings.is_precision_loss_allowed (") {
		t.Errorf("String() = %q", got)
	}

	// Running, the gpu delegate honours its precision setting.
	s.Delegate, s.CoralSettings = Delegate_GPU.Enum(), nil
	if issues := Check(s, running(Delegate_GPU)); len(issues) != 1 || issues[0].Path != "tflite_settings.hexagon_settings.powersave_level" {
		t.Errorf("Check with delegate GPU = %v; want the Hexagon field only", issues)
	}

	// Selected and not honoured, the precision setting changes the numbers:
	// an error.
	noGPU := HostCapabilities()
	issues = Check(s, noGPU)
	if len(issues) != 2 || issues[0].Path != "tflite_settings.gpu_settings.is_precision_loss_allowed" || issues[0].Severity != Error {
		t.Fatalf("Check with delegate GPU = %v; want the GPU field first, as an error", issues)
	}
	if issues[1].Severity != Warning {
		t.Errorf("Hexagon field = %v; want a warning", issues[1])
	}
	err := Err(issues)
	if !errors.Is(err, ErrNotHonoured) || !strings.Contains(err.Error(), "tflite_settings.gpu_settings.is_precision_loss_allowed") ||
		strings.Contains(err.Error(), "hexagon") {
		t.Errorf("Err = %v; want ErrNotHonoured naming the GPU field only", err)
	}

	// Once a delegate honours them, they are no issue.
	if issues := Check(s, HostCapabilities().With("gpu_settings", "hexagon_settings.powersave_level")); len(issues) != 0 {
		t.Errorf("Check with GPU and Hexagon honoured = %v", issues)
	}
}

func TestCheckSeverities(t *testing.T) {
	cases := []struct {
		name string
		s    *TFLiteSettings
		c    Capabilities
		want []Issue
	}{
		{"nothing set", &TFLiteSettings{}, running(Delegate_EDGETPU_CORAL), nil},
		{"all honoured", coralTFLite(), running(Delegate_EDGETPU_CORAL), nil},
		{"empty honoured messages", &TFLiteSettings{CpuSettings: &CPUSettings{}, FallbackSettings: &FallbackSettings{}, CoralSettings: &CoralSettings{}},
			running(Delegate_EDGETPU_CORAL), nil},
		{"empty unhonoured message", &TFLiteSettings{Delegate: Delegate_GPU.Enum(), GpuSettings: &GPUSettings{}}, HostCapabilities(),
			[]Issue{{Path: "tflite_settings.gpu_settings", Severity: Warning}}},
		{"empty message, something beneath honoured", &TFLiteSettings{Delegate: Delegate_GPU.Enum(), GpuSettings: &GPUSettings{}}, running(Delegate_GPU), nil},
		{"GPU quantized inference and backend, selected and honoured",
			&TFLiteSettings{Delegate: Delegate_GPU.Enum(), GpuSettings: &GPUSettings{EnableQuantizedInference: proto.Bool(false), ForceBackend: GPUBackend_OPENGL.Enum()}},
			running(Delegate_GPU), nil},
		{"GPU quantized inference and backend, selected, not honoured",
			&TFLiteSettings{Delegate: Delegate_GPU.Enum(), GpuSettings: &GPUSettings{EnableQuantizedInference: proto.Bool(false), ForceBackend: GPUBackend_OPENGL.Enum()}},
			HostCapabilities(),
			[]Issue{
				{Path: "tflite_settings.gpu_settings.enable_quantized_inference", Severity: Error, Reason: "it sets the delegate's arithmetic; ignoring it would silently change the numbers"},
				{Path: "tflite_settings.gpu_settings.force_backend", Severity: Warning},
			}},
		{"NNAPI fp16 and deprecated fallback, selected",
			&TFLiteSettings{Delegate: Delegate_NNAPI.Enum(), NnapiSettings: &NNAPISettings{
				AcceleratorName:           proto.String("google-edgetpu"),
				FallbackSettings:          &FallbackSettings{AllowAutomaticFallbackOnExecutionError: proto.Bool(false)},
				AllowFp16PrecisionForFp32: proto.Bool(true),
			}},
			running(Delegate_NNAPI),
			[]Issue{
				{Path: "tflite_settings.nnapi_settings.fallback_settings.allow_automatic_fallback_on_execution_error", Severity: Error,
					Reason: "it decides which nodes run on the delegate and which on the CPU; ignoring it would silently change results"},
			}},
		{"NNAPI fp16 and accelerator, not selected",
			&TFLiteSettings{NnapiSettings: &NNAPISettings{AcceleratorName: proto.String("x"), AllowFp16PrecisionForFp32: proto.Bool(true)}},
			running(Delegate_NONE),
			[]Issue{
				{Path: "tflite_settings.nnapi_settings.accelerator_name", Severity: Warning,
					Reason: "tflite_settings.nnapi_settings is not the selected delegate's (NONE); TFLite ignores it too"},
				{Path: "tflite_settings.nnapi_settings.allow_fp16_precision_for_fp32", Severity: Warning,
					Reason: "tflite_settings.nnapi_settings is not the selected delegate's (NONE); TFLite ignores it too"},
			}},
		{"NNAPI settings delego reports, selected",
			&TFLiteSettings{Delegate: Delegate_NNAPI.Enum(), NnapiSettings: &NNAPISettings{
				CacheDirectory: proto.String("/c"), ModelToken: proto.String("t"), NoOfNnapiInstancesToCache: proto.Int32(2),
				AllowDynamicDimensions: proto.Bool(true), UseBurstComputation: proto.Bool(true),
			}},
			running(Delegate_NNAPI),
			[]Issue{
				{Path: "tflite_settings.nnapi_settings.no_of_nnapi_instances_to_cache", Severity: Warning,
					Reason: "each compiled partition is one NNAPI compilation for its shapes; after a resize delego compiles again rather than keep other instances"},
				{Path: "tflite_settings.nnapi_settings.allow_dynamic_dimensions", Severity: Warning,
					Reason: "delego hands NNAPI partitions of fixed shapes and compiles again after a resize"},
			}},
		{"Edge TPU (Pixel) lists, selected",
			&TFLiteSettings{Delegate: Delegate_EDGETPU.Enum(), EdgetpuSettings: &EdgeTpuSettings{
				InactivePowerConfigs: []*EdgeTpuInactivePowerConfig{
					{InactivePowerState: EdgeTpuPowerState_READY.Enum()},
					{},
					{InactiveTimeoutUs: proto.Int64(1000)},
				},
				EdgetpuDeviceSpec: &EdgeTpuDeviceSpec{DevicePaths: []string{"/dev/apex_0"}},
			}},
			running(Delegate_EDGETPU),
			[]Issue{
				{Path: "tflite_settings.edgetpu_settings.inactive_power_configs[0].inactive_power_state", Severity: Warning},
				{Path: "tflite_settings.edgetpu_settings.inactive_power_configs[1]", Severity: Warning},
				{Path: "tflite_settings.edgetpu_settings.inactive_power_configs[2].inactive_timeout_us", Severity: Warning},
				{Path: "tflite_settings.edgetpu_settings.edgetpu_device_spec.device_paths", Severity: Warning},
			}},
		{"list element field honoured",
			&TFLiteSettings{EdgetpuSettings: &EdgeTpuSettings{InactivePowerConfigs: []*EdgeTpuInactivePowerConfig{
				{InactivePowerState: EdgeTpuPowerState_READY.Enum(), InactiveTimeoutUs: proto.Int64(5)},
			}}},
			running(Delegate_NONE).With("edgetpu_settings.inactive_power_configs.inactive_power_state"),
			[]Issue{{Path: "tflite_settings.edgetpu_settings.inactive_power_configs[0].inactive_timeout_us", Severity: Warning,
				Reason: "tflite_settings.edgetpu_settings is not the selected delegate's (NONE); TFLite ignores it too"}}},
		{"placement settings not honoured",
			&TFLiteSettings{Delegate: Delegate_XNNPACK.Enum(), MaxDelegatedPartitions: proto.Int32(1),
				FallbackSettings: &FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(true)},
				CpuSettings:      &CPUSettings{NumThreads: proto.Int32(4)}},
			Capabilities{},
			[]Issue{
				{Path: "tflite_settings.delegate", Severity: Error, Reason: "it decides which nodes run on the delegate and which on the CPU; ignoring it would silently change results"},
				{Path: "tflite_settings.cpu_settings.num_threads", Severity: Warning},
				{Path: "tflite_settings.max_delegated_partitions", Severity: Error, Reason: "it decides which nodes run on the delegate and which on the CPU; ignoring it would silently change results"},
				{Path: "tflite_settings.fallback_settings.allow_automatic_fallback_on_compilation_error", Severity: Error, Reason: "it decides which nodes run on the delegate and which on the CPU; ignoring it would silently change results"},
			}},
		{"undefined enum value in an honoured field",
			&TFLiteSettings{Delegate: Delegate(42).Enum(), CoralSettings: &CoralSettings{Performance: CoralSettings_Performance(9).Enum()}},
			running(Delegate_EDGETPU_CORAL),
			[]Issue{
				{Path: "tflite_settings.delegate", Severity: Error, Reason: "tflite_settings.delegate: 42 is not a value of tflite.proto.Delegate"},
				{Path: "tflite_settings.coral_settings.performance", Severity: Error, Reason: "tflite_settings.coral_settings.performance: 9 is not a value of tflite.proto.CoralSettings.Performance"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Check(tc.s, tc.c)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Check = %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestCheckUnknownFields(t *testing.T) {
	s := &TFLiteSettings{CoralSettings: &CoralSettings{Device: proto.String("usb")}}
	var raw []byte
	raw = protowire.AppendTag(raw, 99, protowire.VarintType)
	raw = protowire.AppendVarint(raw, 1)
	s.CoralSettings.ProtoReflect().SetUnknown(raw)
	got := Check(s, running(Delegate_EDGETPU_CORAL))
	want := []Issue{{Path: "tflite_settings.coral_settings.#99", Severity: Error,
		Reason: "field number 99 (varint) at tflite_settings.coral_settings is not in configuration.proto"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check = %v\nwant %v", got, want)
	}
}

func TestCheckCompute(t *testing.T) {
	cs := coralCompute()
	cs.TfliteSettings.GpuSettings = &GPUSettings{IsPrecisionLossAllowed: proto.Bool(false)}
	got := paths(CheckCompute(cs, running(Delegate_EDGETPU_CORAL)))
	want := []string{
		"preference",
		"tflite_settings.gpu_settings.is_precision_loss_allowed",
		"model_namespace_for_statistics",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CheckCompute paths = %q\nwant %q", got, want)
	}
	if err := Err(CheckCompute(cs, running(Delegate_EDGETPU_CORAL))); err != nil {
		t.Errorf("Err = %v; LOW_LATENCY and an unselected GPU's settings are warnings", err)
	}

	// FORCE_CPU ignored would run nodes on the delegate.
	cs.Preference = ExecutionPreference_FORCE_CPU.Enum()
	issues := CheckCompute(cs, running(Delegate_EDGETPU_CORAL))
	if issues[0].Path != "preference" || issues[0].Severity != Error {
		t.Errorf("FORCE_CPU: %v; want an error", issues[0])
	}

	// Settings from a file check the same whichever message held them.
	s := &Settings{TFLite: cs.TfliteSettings, Compute: cs}
	if !reflect.DeepEqual(s.Check(running(Delegate_EDGETPU_CORAL)), issues) {
		t.Error("Settings.Check differs from CheckCompute")
	}
	s = &Settings{TFLite: cs.TfliteSettings}
	if !reflect.DeepEqual(s.Check(running(Delegate_EDGETPU_CORAL)), Check(cs.TfliteSettings, running(Delegate_EDGETPU_CORAL))) {
		t.Error("Settings.Check differs from Check")
	}
	if Check(nil, running(Delegate_EDGETPU_CORAL)) != nil || CheckCompute(nil, running(Delegate_EDGETPU_CORAL)) != nil {
		t.Error("nil settings have issues")
	}
}

// TestCheckLoaded runs Check on settings as Load returns them.
func TestCheckLoaded(t *testing.T) {
	data := []byte(`{
		"delegate": "EDGETPU_CORAL",
		"coral_settings": {"device": "usb", "firmwarePath": "/tmp/fw.bin"},
		"gpu_settings": {"is_precision_loss_allowed": true},
		"hexagon_settings": {"print_graph_profile": true}
	}`)
	s, err := Load(writeFile(t, "s.json", data))
	if err != nil {
		t.Fatal(err)
	}
	got := paths(s.Check(running(Delegate_EDGETPU_CORAL)))
	want := []string{"tflite_settings.gpu_settings.is_precision_loss_allowed", "tflite_settings.hexagon_settings.print_graph_profile"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if s.TFLite.GetCoralSettings().GetFirmwarePath() != "/tmp/fw.bin" {
		t.Errorf("firmware_path = %q", s.TFLite.GetCoralSettings().GetFirmwarePath())
	}
}

func TestStripIndexes(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"a.b":              "a.b",
		"a[0].b[12].c":     "a.b.c",
		"a.[x.y].b":        "a.[x.y].b",
		"a[]":              "a[]",
		"a[3":              "a[3",
		"a.list[7]":        "a.list",
		"[pkg.ext][2].val": "[pkg.ext].val",
	} {
		if got := stripIndexes(in); got != want {
			t.Errorf("stripIndexes(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSupportLibraryHandleRefused: NNAPISettings' field 12 of newer
// configuration.protos, support_library_handle, is named and refused
// with its reason.
func TestSupportLibraryHandleRefused(t *testing.T) {
	n := &NNAPISettings{}
	n.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 12, protowire.VarintType), 0x7f00dead))
	s := &TFLiteSettings{Delegate: Delegate_NNAPI.Enum(), NnapiSettings: n}
	issues := Check(s, running(Delegate_EDGETPU_CORAL))
	if len(issues) != 1 || issues[0].Path != "tflite_settings.nnapi_settings.support_library_handle" || issues[0].Severity != Error ||
		!strings.Contains(issues[0].Reason, "plugin process of its own") {
		t.Fatalf("issues: %v", issues)
	}
}

// TestCheckUndeclared: while a delegate that declares nothing runs, a
// setting nothing honours is a warning that says so, even one whose
// ignoring would change results; what has no meaning stays an error.
func TestCheckUndeclared(t *testing.T) {
	s := &TFLiteSettings{Delegate: Delegate_GPU.Enum(), GpuSettings: &GPUSettings{IsPrecisionLossAllowed: proto.Bool(true)},
		CoralSettings: &CoralSettings{Performance: CoralSettings_Performance(9).Enum()}}
	if issues := Check(s, HostCapabilities()); Err(issues) == nil {
		t.Fatalf("nothing declared, nothing undeclared: %v, want an error for the precision", issues)
	}
	issues := Check(s, HostCapabilities().WithUndeclared("gpu"))
	want := []Issue{
		{Path: "tflite_settings.gpu_settings.is_precision_loss_allowed", Severity: Warning,
			Reason: "the delegate gpu does not declare the settings it honours, so delego cannot tell whether it reads this one"},
		{Path: "tflite_settings.coral_settings.performance", Severity: Error,
			Reason: "tflite_settings.coral_settings.performance: 9 is not a value of tflite.proto.CoralSettings.Performance"},
	}
	if !reflect.DeepEqual(issues, want) {
		t.Errorf("Check = %v\nwant %v", issues, want)
	}
	two := Check(s, HostCapabilities().WithUndeclared("gpu").WithUndeclared("mytpu"))
	if !strings.Contains(two[0].Reason, "the delegates gpu, mytpu do not declare the settings they honour") {
		t.Errorf("two undeclared: %v", two[0])
	}
}

// TestCheckUnavailable: while a delegate that was to run cannot be had, a
// setting nothing honours is a warning that says so: it runs nothing, so
// what it would read does not matter.
func TestCheckUnavailable(t *testing.T) {
	s := &TFLiteSettings{Delegate: Delegate_GPU.Enum(), GpuSettings: &GPUSettings{IsPrecisionLossAllowed: proto.Bool(true)}}
	issues := Check(s, HostCapabilities().WithUnavailable("gpu"))
	want := []Issue{{Path: "tflite_settings.gpu_settings.is_precision_loss_allowed", Severity: Warning,
		Reason: "no delegate that runs reads it: gpu cannot be had"}}
	if !reflect.DeepEqual(issues, want) {
		t.Errorf("Check = %v\nwant %v", issues, want)
	}
}
