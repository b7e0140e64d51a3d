package activation

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/activation/activation_tflite29.json.gz holds one-operator
// ELU, GELU, LOG_SOFTMAX and LOCAL_RESPONSE_NORMALIZATION replay cases (see
// kerneltest/replay.go), with the versions one past TFLite 2.9's last,
// which it refuses. It is made by
// testdata/gen/activation/activation_tflite29_gen.py.

func TestActivationAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "activation/activation_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    240,
		ThreadCycle: 2,
	})
}
