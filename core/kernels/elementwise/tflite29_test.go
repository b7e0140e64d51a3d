package elementwise

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/elementwise/elementwise_tflite29.json.gz holds one-operator
// LOG, SIN, COS, CEIL, ROUND, SQUARE, ZEROS_LIKE, POW, FLOOR_MOD and ADD_N
// replay cases over every tensor type, with edge values, broadcasting and
// version probes (see kerneltest.ReplayTFLite29). It is made by
// testdata/gen/elementwise/elementwise_tflite29_gen.py.

func TestElementwiseAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "elementwise/elementwise_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    250,
		ThreadCycle: 2,
	})
}
