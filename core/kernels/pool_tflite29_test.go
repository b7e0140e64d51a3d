package kernels

import (
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/pool"
	"github.com/delego/delego/core/kernels/reduce"
	"github.com/delego/delego/core/kernels/resize"
	"github.com/delego/delego/core/kernels/shape"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/pool/pool_tflite29.json.gz holds one-operator replay cases
// of the pooling ops and of the reductions, padding, resizing and arg-min/max
// ops, which its generator covers too (see kerneltest.ReplayTFLite29). It is
// made by testdata/gen/pool/pool_tflite29_gen.py.

func TestPoolAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "pool/pool_tflite29.json.gz",
		Ops:         slices.Concat(pool.Ops(), reduce.Ops(), shape.Ops(), resize.Ops()),
		MinCases:    900,
		ThreadCycle: 3,
	})
}
