package kernels

import (
	"slices"
	"testing"
)

// testdata/gen/pool/pool_tflite29.json.gz holds one-operator replay cases
// of the pooling ops and of the reductions, padding, resizing and arg-min/max
// ops, which its generator covers too (see tflite29_replay_test.go). It is
// made by testdata/gen/pool/pool_tflite29_gen.py.

func TestPoolAgainstTFLite29(t *testing.T) {
	replayTFLite29(t, replaySpec{
		file:        "pool/pool_tflite29.json.gz",
		ops:         slices.Concat(poolOps(), reduceOps(), padOps(), resizeOps(), argMinMaxOps()),
		minCases:    900,
		threadCycle: 3,
	})
}
