package kernels

import (
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/compare"
	"github.com/delego/delego/core/kernels/shape"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/strings/strings_tflite29.json.gz holds one-operator replay
// cases with STRING tensors: EQUAL and NOT_EQUAL, the ops that move strings,
// SHAPE and RANK, and the ops whose TFLite 2.9 kernels refuse STRING (see
// kerneltest.ReplayTFLite29). It is made by
// testdata/gen/strings/strings_tflite29_gen.py.

func TestStringsAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "strings/strings_tflite29.json.gz",
		Ops:         slices.Concat(compare.Ops(), shape.Ops()),
		MinCases:    100,
		ThreadCycle: 2,
	})
}
