package shape

import (
	"strings"
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/matmul/embedding_lookup_tflite29.json.gz holds one-operator
// EMBEDDING_LOOKUP replay cases made by
// testdata/gen/matmul/matmul_tflite29_gen.py.

func TestEmbeddingLookupAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "matmul/embedding_lookup_tflite29.json.gz",
		Ops:         embeddingOps(),
		MinCases:    60,
		ThreadCycle: 1,
	})
}

func TestEmbeddingLookupRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, embeddingOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorEMBEDDING_LOOKUP:        {Min: 1, Max: 3},
		schema.BuiltinOperatorEMBEDDING_LOOKUP_SPARSE: {Min: 1, Max: 1},
	})
}

// TestEmbeddingLookupByHand picks rows 2, 0, 2 of a [3][2][1] table, and
// dequantizes an INT8 table's row (scale 0.5, the zero point ignored as in
// TFLite 2.9).
func TestEmbeddingLookupByHand(t *testing.T) {
	ids := kerneltest.I32T([]int{3}, 2, 0, 2)
	table := kerneltest.F32T([]int{3, 2, 1}, 1, 2, 3, 4, 5, 6)
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, &embeddingLookupOp{}, 1, out, ids, table)
	kerneltest.CheckOutput(t, "float", out, []int{3, 2, 1}, []float64{5, 6, 1, 2, 5, 6})

	q := kerneltest.I8T([]int{2, 2}, 0.5, 3, 1, -2, 127, -128)
	out = kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, &embeddingLookupOp{}, 1, out, kerneltest.I32T([]int{1}, 1), q)
	kerneltest.CheckOutput(t, "hybrid", out, []int{1, 2}, []float64{63.5, -64})
}

func TestEmbeddingLookupOutOfRange(t *testing.T) {
	table := kerneltest.F32T([]int{3, 2}, 1, 2, 3, 4, 5, 6)
	for _, id := range []int32{3, -1} {
		err := kerneltest.Run1(&embeddingLookupOp{}, kerneltest.OutT(tensor.Float32), kerneltest.I32T([]int{2}, 0, id), table)
		if err == nil || !strings.Contains(err.Error(), "outside the table's 3 rows") {
			t.Errorf("id %d: got %v", id, err)
		}
	}
	// An empty table has no row to pick (TFLite 2.9 leaves the output
	// unwritten).
	empty := tensor.NewTensor(tensor.Float32, 0, 2)
	if err := kerneltest.Run1(&embeddingLookupOp{}, kerneltest.OutT(tensor.Float32), kerneltest.I32T([]int{1}, 0), empty); err == nil {
		t.Error("lookup in an empty table succeeded")
	}
	if err := kerneltest.PrepareErr(&embeddingLookupOp{}, kerneltest.OutT(tensor.Int8), kerneltest.I32T([]int{1}, 0), table); err == nil {
		t.Error("FLOAT32 table with INT8 output accepted")
	}
}
