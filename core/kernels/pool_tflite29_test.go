package kernels

import "testing"

// testdata/gen/pool/pool_tflite29.json.gz holds one-operator replay cases
// of this family (see tflite29_replay_test.go). It is made by
// testdata/gen/pool/pool_tflite29_gen.py.

func TestPoolAgainstTFLite29(t *testing.T) {
	replayTFLite29(t, replaySpec{
		file:        "pool/pool_tflite29.json.gz",
		ops:         poolOps(),
		minCases:    900,
		threadCycle: 3,
	})
}
