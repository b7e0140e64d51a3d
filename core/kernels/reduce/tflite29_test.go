package reduce

import (
	"slices"
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/reduce/reduce_tflite29.json.gz holds one-operator
// REDUCE_ANY, REDUCE_ALL, SEGMENT_SUM, CUMSUM, TOPK_V2, UNIQUE, WHERE and
// BUCKETIZE cases run by the real TFLite 2.9 (see kerneltest/replay.go),
// with the shapes of the outputs sized during Eval. It is made by
// testdata/gen/reduce/reduce_tflite29_gen.py.

func TestSelectRegistrations(t *testing.T) {
	// The version ranges TFLite 2.9's BuiltinOpResolver registers; the
	// replay file holds each max+1, which the real library refuses.
	kerneltest.CheckRegistrations(t, selectOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorSEGMENT_SUM: {Min: 1, Max: 1},
		schema.BuiltinOperatorCUMSUM:      {Min: 1, Max: 1},
		schema.BuiltinOperatorTOPK_V2:     {Min: 1, Max: 2},
		schema.BuiltinOperatorUNIQUE:      {Min: 1, Max: 1},
		schema.BuiltinOperatorWHERE:       {Min: 1, Max: 2},
		schema.BuiltinOperatorBUCKETIZE:   {Min: 1, Max: 1},
	})
}

func TestReduceAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "reduce/reduce_tflite29.json.gz",
		Ops:         slices.Concat(reduceOps(), selectOps()),
		MinCases:    370,
		ThreadCycle: 2,
	})
}
