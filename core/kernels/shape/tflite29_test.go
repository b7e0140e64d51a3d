package shape

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/shape/shape_tflite29.json.gz holds one-operator replay cases
// of RANK, RANGE, ONE_HOT, REVERSE_V2, REVERSE_SEQUENCE, BROADCAST_TO,
// BROADCAST_ARGS, MATRIX_DIAG, MATRIX_SET_DIAG, SCATTER_ND, SPARSE_TO_DENSE
// and DYNAMIC_UPDATE_SLICE over every element type, and their version
// probes (see kerneltest/replay.go). It is made by
// testdata/gen/shape/shape_tflite29_gen.py.

func TestGenerateAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "shape/shape_tflite29.json.gz",
		Ops:         generateOps(),
		MinCases:    400,
		ThreadCycle: 2,
	})
}
