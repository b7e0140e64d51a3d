package edgetpu

import (
	"path/filepath"
	"strings"
)

// compiledSuffix ends the name Coral's compiler gives its output.
const compiledSuffix = "_edgetpu.tflite"

// TwinPath returns the conventional CPU twin of an Edge TPU model file:
// foo.tflite beside foo_edgetpu.tflite, the name Coral's compiler gives its
// output. It returns "" for other names. The CPU cannot run
// edgetpu-custom-op, so the twin is what runs when the Edge TPU cannot (see
// core.Twin).
func TwinPath(path string) string {
	base := filepath.Base(path)
	if !strings.HasSuffix(base, compiledSuffix) || base == compiledSuffix {
		return ""
	}
	return strings.TrimSuffix(path, compiledSuffix) + ".tflite"
}
