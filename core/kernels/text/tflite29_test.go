package text

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/text/text_tflite29.json.gz holds one-operator
// LSH_PROJECTION and HASHTABLE_LOOKUP replay cases (see
// kerneltest/replay.go), made by testdata/gen/text/text_tflite29_gen.py.

func TestTextAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "text/text_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    180,
		ThreadCycle: 2,
	})
}
