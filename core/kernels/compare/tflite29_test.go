package compare

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/compare/compare_tflite29.json.gz holds one-operator replay
// cases of every op of the family (see kerneltest/replay.go), made by
// testdata/gen/compare/compare_tflite29_gen.py.

func TestCompareAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "compare/compare_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    1500,
		ThreadCycle: 2,
	})
}
