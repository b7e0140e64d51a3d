package text

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/text/text_tflite29.json.gz holds one-operator
// LSH_PROJECTION, SKIP_GRAM and HASHTABLE_LOOKUP replay cases, STRING
// tensors included (see kerneltest/replay.go), made by
// testdata/gen/text/text_tflite29_gen.py. The hash-table resource ops are
// replayed by core's TestControlFlowMatchesTFLite29.

func TestTextAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "text/text_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    270,
		ThreadCycle: 2,
	})
}
