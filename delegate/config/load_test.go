package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// coralTFLite is a TFLiteSettings with something set at every level the
// tests care about: an enum, nested messages, a string, booleans.
func coralTFLite() *TFLiteSettings {
	return &TFLiteSettings{
		Delegate:               Delegate_EDGETPU_CORAL.Enum(),
		MaxDelegatedPartitions: proto.Int32(2),
		CpuSettings:            &CPUSettings{NumThreads: proto.Int32(3)},
		CoralSettings: &CoralSettings{
			Device:       proto.String("usb:0"),
			Performance:  CoralSettings_HIGH.Enum(),
			FirmwarePath: proto.String("/lib/firmware/apex_latest_single_ep.bin"),
		},
		FallbackSettings: &FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(true)},
	}
}

func coralCompute() *ComputeSettings {
	return &ComputeSettings{
		Preference:                  ExecutionPreference_LOW_LATENCY.Enum(),
		TfliteSettings:              coralTFLite(),
		ModelNamespaceForStatistics: proto.String("delego-test"),
	}
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustMarshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustJSON(t testing.TB, m proto.Message, protoNames bool) []byte {
	t.Helper()
	b, err := protojson.MarshalOptions{UseProtoNames: protoNames, Multiline: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadFormats writes the same settings in every encoding and under every
// kind of name, and checks that Load reads back what was written and knows
// which message it was.
func TestLoadFormats(t *testing.T) {
	ts, cs := coralTFLite(), coralCompute()
	cases := []struct {
		name    string
		file    string
		data    []byte
		compute bool
		format  Format
	}{
		{"TFLite JSON proto names", "s.json", mustJSON(t, ts, true), false, FormatJSON},
		{"TFLite JSON JSON names", "s.json", mustJSON(t, ts, false), false, FormatJSON},
		{"TFLite binary .pb", "s.pb", mustMarshal(t, ts), false, FormatBinary},
		{"TFLite binary .binpb", "s.binpb", mustMarshal(t, ts), false, FormatBinary},
		{"TFLite JSON, no extension", "settings", mustJSON(t, ts, true), false, FormatJSON},
		{"TFLite binary, no extension", "settings", mustMarshal(t, ts), false, FormatBinary},
		{"TFLite JSON, upper-case extension", "S.JSON", mustJSON(t, ts, false), false, FormatJSON},
		{"Compute JSON proto names", "c.json", mustJSON(t, cs, true), true, FormatJSON},
		{"Compute JSON JSON names", "c.json", mustJSON(t, cs, false), true, FormatJSON},
		{"Compute binary .pb", "c.pb", mustMarshal(t, cs), true, FormatBinary},
		{"Compute binary .binpb", "c.binpb", mustMarshal(t, cs), true, FormatBinary},
		{"Compute JSON, other extension", "c.conf", mustJSON(t, cs, false), true, FormatJSON},
		{"Compute binary, other extension", "c.bin", mustMarshal(t, cs), true, FormatBinary},
		{"Compute JSON with BOM", "c.json", append([]byte(utf8BOM), mustJSON(t, cs, true)...), true, FormatJSON},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Load(writeFile(t, tc.file, tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if s.Format != tc.format {
				t.Errorf("Format = %v, want %v", s.Format, tc.format)
			}
			if !proto.Equal(s.TFLite, ts) {
				t.Errorf("TFLite = %v, want %v", s.TFLite, ts)
			}
			if tc.compute {
				if !proto.Equal(s.Compute, cs) {
					t.Errorf("Compute = %v, want %v", s.Compute, cs)
				}
				if s.TFLite != s.Compute.TfliteSettings {
					t.Error("TFLite is not Compute.TfliteSettings")
				}
			} else if s.Compute != nil {
				t.Errorf("Compute = %v, want nil for a TFLiteSettings file", s.Compute)
			}
		})
	}
}

// TestParseDetectsMessage covers the cases where the two messages could be
// confused.
func TestParseDetectsMessage(t *testing.T) {
	cases := []struct {
		name    string
		m       proto.Message
		compute bool
	}{
		// Binary: field 1 is an enum in both; field 2 a message in both.
		{"TFLite delegate=GPU only (reads as preference=LOW_POWER too)",
			&TFLiteSettings{Delegate: Delegate_GPU.Enum()}, false},
		{"TFLite delegate=XNNPACK (4 is no ExecutionPreference)",
			&TFLiteSettings{Delegate: Delegate_XNNPACK.Enum(), XnnpackSettings: &XNNPackSettings{NumThreads: proto.Int32(2)}}, false},
		{"Compute with tflite_settings only",
			&ComputeSettings{TfliteSettings: &TFLiteSettings{Delegate: Delegate_XNNPACK.Enum()}}, true},
		{"Compute with an empty tflite_settings",
			&ComputeSettings{TfliteSettings: &TFLiteSettings{}}, true},
		{"Compute with names for telemetry",
			&ComputeSettings{ModelIdentifierForStatistics: proto.String("mobilenet"), TfliteSettings: &TFLiteSettings{}}, true},
		{"TFLite with GPU and Hexagon settings",
			&TFLiteSettings{GpuSettings: &GPUSettings{ForceBackend: GPUBackend_OPENCL.Enum()}, HexagonSettings: &HexagonSettings{DebugLevel: proto.Int32(1)}}, false},
	}
	for _, tc := range cases {
		for _, f := range []Format{FormatJSON, FormatBinary, FormatAuto} {
			t.Run(tc.name+"/"+f.String(), func(t *testing.T) {
				var data []byte
				if f == FormatBinary {
					data = mustMarshal(t, tc.m)
				} else {
					data = mustJSON(t, tc.m, false)
				}
				s, err := Parse(data, f)
				if err != nil {
					t.Fatal(err)
				}
				if got := s.Compute != nil; got != tc.compute {
					t.Fatalf("read as ComputeSettings = %v, want %v (%v)", got, tc.compute, s.TFLite)
				}
				if tc.compute {
					if !proto.Equal(s.Compute, tc.m) {
						t.Errorf("Compute = %v, want %v", s.Compute, tc.m)
					}
				} else if !proto.Equal(s.TFLite, tc.m) {
					t.Errorf("TFLite = %v, want %v", s.TFLite, tc.m)
				}
			})
		}
	}
}

func TestComputeWithoutTFLiteSettings(t *testing.T) {
	s, err := Parse([]byte(`{"preference": "LOW_POWER"}`), FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	if s.Compute == nil || s.TFLite == nil {
		t.Fatalf("Compute = %v, TFLite = %v; want both", s.Compute, s.TFLite)
	}
	if s.Compute.TfliteSettings != nil {
		t.Error("Parse gave the ComputeSettings a tflite_settings it did not have")
	}
	if s.TFLite.GetDelegate() != Delegate_NONE {
		t.Errorf("delegate = %v, want NONE", s.TFLite.GetDelegate())
	}
}

// TestFieldNamesDisjoint guards what JSON detection rests on: no top-level
// key can name a field of both messages.
func TestFieldNamesDisjoint(t *testing.T) {
	cf := (&ComputeSettings{}).ProtoReflect().Descriptor().Fields()
	tf := (&TFLiteSettings{}).ProtoReflect().Descriptor().Fields()
	for i := 0; i < tf.Len(); i++ {
		fd := tf.Get(i)
		for _, name := range []string{string(fd.Name()), fd.JSONName()} {
			if cf.ByName(fd.Name()) != nil || cf.ByJSONName(name) != nil || cf.ByJSONName(string(fd.Name())) != nil {
				t.Errorf("TFLiteSettings.%s has a namesake in ComputeSettings", name)
			}
		}
	}
}

// parseErr fails unless err is a *ParseError for format whose text holds
// every one of want.
func parseErr(t *testing.T, err error, format Format, want ...string) *ParseError {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("error %q (%T) is not a *ParseError", err, err)
	}
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("error %q does not match ErrMalformed", err)
	}
	if pe.Format != format {
		t.Errorf("Format = %v, want %v", pe.Format, format)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
	return pe
}

func TestLoadMalformedJSON(t *testing.T) {
	cases := []struct {
		name, data string
		want       []string
	}{
		{"syntax", `{"delegate": "XNNPACK",}`, []string{"TFLiteSettings", "syntax error", "line 1"}},
		{"truncated", `{"delegate": "XNNPACK"`, []string{"TFLiteSettings", "EOF"}},
		{"unknown field", `{"delegate": "XNNPACK", "xnnpack_setings": {}}`, []string{"TFLiteSettings", `unknown field "xnnpack_setings"`}},
		{"unknown nested field", `{"cpu_settings": {"threads": 2}}`, []string{`unknown field "threads"`}},
		{"unknown delegate name", `{"delegate": "TPU"}`, []string{"delegate", `"TPU"`}},
		{"undefined delegate number", `{"delegate": 42}`, []string{"tflite_settings.delegate: 42 is not a value of tflite.proto.Delegate"}},
		{"wrong type", `{"max_delegated_partitions": "two"}`, []string{"maxDelegatedPartitions", `"two"`}},
		{"duplicate", `{"delegate": "GPU", "delegate": "NONE"}`, []string{`duplicate field "delegate"`}},
		// A mistake late in a ComputeSettings is reported against ComputeSettings.
		{"compute, syntax late", `{"tfliteSettings": {"delegate": "GPU"}, "preference": }`, []string{"ComputeSettings", "syntax error"}},
		{"compute, unknown nested field", `{"tflite_settings": {"delegat": "GPU"}}`, []string{"ComputeSettings", `unknown field "delegat"`}},
		{"compute, unknown performance", `{"tflite_settings": {"coral_settings": {"performance": "TURBO"}}}`, []string{"ComputeSettings", "performance", `"TURBO"`}},
		{"both messages mixed", `{"delegate": "GPU", "tflite_settings": {}}`, []string{"ComputeSettings", `unknown field "delegate"`}},
		{"not an object", `[{"delegate": "GPU"}]`, []string{"TFLiteSettings"}},
		{"white space only", " \n", []string{"empty"}},
		{"binary protobuf in a .json file", string(mustMarshal(t, coralTFLite())), []string{"does not look like JSON"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "bad.json", []byte(tc.data))
			_, err := Load(path)
			pe := parseErr(t, err, FormatJSON, append(tc.want, path, "JSON")...)
			if pe.Path != path {
				t.Errorf("Path = %q, want %q", pe.Path, path)
			}
		})
	}
}

func TestLoadMalformedBinary(t *testing.T) {
	good := mustMarshal(t, coralCompute())
	var unknownField []byte // coral_settings with a field 15 that configuration.proto lacks
	unknownField = protowire.AppendTag(unknownField, 10, protowire.BytesType)
	unknownField = protowire.AppendVarint(unknownField, 2)
	unknownField = protowire.AppendTag(unknownField, 15, protowire.VarintType)
	unknownField = protowire.AppendVarint(unknownField, 1)
	var badEnum []byte // delegate = 42, and nothing a ComputeSettings could hold
	badEnum = protowire.AppendTag(badEnum, 1, protowire.VarintType)
	badEnum = protowire.AppendVarint(badEnum, 42)
	badEnum = protowire.AppendTag(badEnum, 7, protowire.VarintType)
	badEnum = protowire.AppendVarint(badEnum, 1)
	cases := []struct {
		name string
		data []byte
		want []string
	}{
		{"truncated", good[:len(good)-3], []string{"binary protobuf", "cannot parse invalid wire-format data"}},
		{"bad wire type", []byte{0x0f, 0x01}, []string{"binary protobuf", "cannot parse"}},
		{"unknown field", unknownField, []string{"field number 15 (varint) at tflite_settings.coral_settings is not in configuration.proto"}},
		{"undefined enum value", badEnum, []string{"tflite_settings.delegate: 42 is not a value of tflite.proto.Delegate"}},
		{"JSON in a .pb file", mustJSON(t, coralTFLite(), true), []string{"looks like JSON"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "bad.pb", tc.data)
			_, err := Load(path)
			parseErr(t, err, FormatBinary, append(tc.want, path)...)
		})
	}
}

func TestParseEmpty(t *testing.T) {
	_, err := Parse(nil, FormatAuto)
	parseErr(t, err, FormatAuto, "empty")
	_, err = Parse(nil, FormatJSON)
	parseErr(t, err, FormatJSON, "empty")
	// An empty binary message is every field at its default.
	s, err := Parse(nil, FormatBinary)
	if err != nil {
		t.Fatal(err)
	}
	if s.Compute != nil || !proto.Equal(s.TFLite, &TFLiteSettings{}) {
		t.Errorf("got %v, %v; want an empty TFLiteSettings", s.TFLite, s.Compute)
	}
}

func TestLoadFileErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	_, err := Load(missing)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load(missing) = %v; want a not-exist error naming the file", err)
	}
	big := writeFile(t, "big.json", make([]byte, MaxFileSize+1))
	_, err = Load(big)
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), big) {
		t.Errorf("Load(big) = %v; want ErrMalformed naming the file", err)
	}
}

// TestProto2Defaults pins the defaults delego relies on: presence is
// tracked, and an absent field reads as configuration.proto's default.
func TestProto2Defaults(t *testing.T) {
	var fb *FallbackSettings // absent altogether
	if fb.GetAllowAutomaticFallbackOnCompilationError() || fb.GetAllowAutomaticFallbackOnExecutionError() {
		t.Error("absent FallbackSettings allows fallback")
	}
	fb = &FallbackSettings{}
	if fb.GetAllowAutomaticFallbackOnCompilationError() || fb.GetAllowAutomaticFallbackOnExecutionError() {
		t.Error("empty FallbackSettings allows fallback; proto2 default is false")
	}
	if fb.AllowAutomaticFallbackOnCompilationError != nil {
		t.Error("an unset proto2 field has a value")
	}
	s, err := Load(filepath.Join("testdata", "cpu_only.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.TFLite.FallbackSettings != nil || s.TFLite.GetFallbackSettings().GetAllowAutomaticFallbackOnExecutionError() {
		t.Error("cpu_only.json: fallback is set or allowed")
	}
	if got := (&CPUSettings{}).GetNumThreads(); got != -1 {
		t.Errorf("CPUSettings.num_threads default = %d, want -1", got)
	}
	if got := (&CoralSettings{}).GetPerformance(); got != CoralSettings_MAXIMUM {
		t.Errorf("CoralSettings.performance default = %v, want MAXIMUM", got)
	}
	if !(&GPUSettings{}).GetEnableQuantizedInference() {
		t.Error("GPUSettings.enable_quantized_inference default is false, want true")
	}
	if got := (&EdgeTpuSettings{}).GetInferencePriority(); got != -1 {
		t.Errorf("EdgeTpuSettings.inference_priority default = %d, want -1", got)
	}
	if got := (*TFLiteSettings)(nil).GetDelegate(); got != Delegate_NONE {
		t.Errorf("default delegate = %v, want NONE", got)
	}
}

// TestTestdata loads the example files and checks what they say.
func TestTestdata(t *testing.T) {
	cases := []struct {
		file    string
		compute bool
		want    *TFLiteSettings
	}{
		{"cpu_only.json", false, &TFLiteSettings{
			Delegate:    Delegate_NONE.Enum(),
			CpuSettings: &CPUSettings{NumThreads: proto.Int32(2)},
		}},
		{"fallback_allowed.json", true, &TFLiteSettings{
			Delegate:        Delegate_XNNPACK.Enum(),
			XnnpackSettings: &XNNPackSettings{NumThreads: proto.Int32(4)},
			FallbackSettings: &FallbackSettings{
				AllowAutomaticFallbackOnCompilationError: proto.Bool(true),
				AllowAutomaticFallbackOnExecutionError:   proto.Bool(true),
			},
		}},
		{"edgetpu_fallback.json", false, &TFLiteSettings{
			Delegate: Delegate_EDGETPU_CORAL.Enum(),
			CoralSettings: &CoralSettings{
				Device:                  proto.String("usb"),
				Performance:             CoralSettings_MAXIMUM.Enum(),
				UsbMaxBulkInQueueLength: proto.Int32(32),
			},
			FallbackSettings: &FallbackSettings{AllowAutomaticFallbackOnCompilationError: proto.Bool(true)},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			s, err := Load(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Compute != nil; got != tc.compute {
				t.Errorf("read as ComputeSettings = %v, want %v", got, tc.compute)
			}
			if !proto.Equal(s.TFLite, tc.want) {
				t.Errorf("TFLite = %v\nwant %v", s.TFLite, tc.want)
			}
			if issues := s.Check(running(s.TFLite.GetDelegate())); len(issues) != 0 {
				t.Errorf("issues with its delegate running: %v", issues)
			}
		})
	}
	s, err := Load(filepath.Join("testdata", "edgetpu_fallback.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.TFLite.GetFallbackSettings().GetAllowAutomaticFallbackOnExecutionError() {
		t.Error("edgetpu_fallback.json allows fallback on execution errors; it sets only compilation")
	}
}
