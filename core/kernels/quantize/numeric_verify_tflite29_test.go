package quantize

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/quantize/numeric_verify_tflite29.json.gz holds one-operator
// NumericVerify replay cases (see kerneltest/replay.go) recorded with the
// real TensorFlow Lite 2.9 by
// testdata/gen/quantize/numeric_verify_tflite29_gen.py: the differences it
// outputs, the Invokes it fails beyond the tolerance, the types it refuses
// and version 2, which it does not register.
func TestNumericVerifyAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "quantize/numeric_verify_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    100,
		ThreadCycle: 2,
	})
}
