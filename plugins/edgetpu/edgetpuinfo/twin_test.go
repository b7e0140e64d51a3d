package edgetpuinfo

import "testing"

func TestTwinPath(t *testing.T) {
	for in, want := range map[string]string{
		"models/foo_edgetpu.tflite": "models/foo.tflite",
		"foo_edgetpu.tflite":        "foo.tflite",
		"/a/b_c_edgetpu.tflite":     "/a/b_c.tflite",
		"foo.tflite":                "",
		"_edgetpu.tflite":           "",
		"dir/_edgetpu.tflite":       "",
		"foo_edgetpu.tflite.bak":    "",
		"":                          "",
	} {
		if got := TwinPath(in); got != want {
			t.Errorf("TwinPath(%q) = %q, want %q", in, got, want)
		}
	}
}
