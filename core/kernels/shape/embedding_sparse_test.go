package shape

import (
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/shape/embedding_sparse_tflite29.json.gz holds one-operator
// EMBEDDING_LOOKUP_SPARSE replay cases made by
// testdata/gen/shape/embedding_sparse_tflite29_gen.py.

func TestEmbeddingLookupSparseAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "shape/embedding_sparse_tflite29.json.gz",
		Ops:         embeddingOps(),
		MinCases:    130,
		ThreadCycle: 1,
	})
}

// TestEmbeddingLookupSparseByHand works TFLite's own example through each
// combiner: a [4][2] table, ids at [0,0] (id 1, weight 2), [0,1] (id 3,
// weight 0.5), [1,0] (id 0, weight 1) and [2,3] (id 1, weight 3) of a
// [3,4] sparse tensor give output rows 0, 1 and 2.
func TestEmbeddingLookupSparseByHand(t *testing.T) {
	table := kerneltest.F32T([]int{4, 2}, 1, 2, 10, 20, 100, 200, 1000, 2000)
	ins := func() []*tensor.Tensor {
		return []*tensor.Tensor{
			kerneltest.I32T([]int{4}, 1, 3, 0, 1),
			kerneltest.I32T([]int{4, 2}, 0, 0, 0, 1, 1, 0, 2, 3),
			kerneltest.I32T([]int{2}, 3, 4),
			kerneltest.F32T([]int{4}, 2, 0.5, 1, 3),
			table,
		}
	}
	// Row 0: 2*[10 20] + 0.5*[1000 2000] = [520 1040]; row 1: [1 2];
	// row 2: 3*[10 20].
	for _, c := range []struct {
		combiner schema.CombinerType
		want     []float64
	}{
		{schema.CombinerTypeSUM, []float64{520, 1040, 1, 2, 30, 60}},
		{schema.CombinerTypeMEAN, []float64{520 / 2.5, 1040 / 2.5, 1, 2, 10, 20}},
		{schema.CombinerTypeSQRTN, []float64{float64(float32(520) / float32(2.0615528)), float64(float32(1040) / float32(2.0615528)), 1, 2, 10, 20}},
	} {
		out := kerneltest.OutT(tensor.Float32)
		if err := kerneltest.RunNode(&embeddingLookupSparseOp{combiner: c.combiner}, 1, ins(), []*tensor.Tensor{out}); err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckOutput(t, schema.EnumNamesCombinerType[c.combiner], out, []int{3, 2}, c.want)
	}
}

// TestEmbeddingLookupSparseRevisit checks TFLite's order of combination:
// a row whose ids do not come one after the other is divided once per run
// of them.
func TestEmbeddingLookupSparseRevisit(t *testing.T) {
	out := kerneltest.OutT(tensor.Float32)
	err := kerneltest.RunNode(&embeddingLookupSparseOp{combiner: schema.CombinerTypeMEAN}, 1, []*tensor.Tensor{
		kerneltest.I32T([]int{3}, 0, 1, 0),
		kerneltest.I32T([]int{3, 2}, 0, 0, 1, 0, 0, 1),
		kerneltest.I32T([]int{2}, 2, 2),
		kerneltest.F32T([]int{3}, 2, 1, 4),
		kerneltest.F32T([]int{2, 1}, 8, 3),
	}, []*tensor.Tensor{out})
	if err != nil {
		t.Fatal(err)
	}
	// Row 0: 2*8/2 = 8, then (8 + 4*8)/4 = 10; row 1: 3.
	kerneltest.CheckOutput(t, "revisit", out, []int{2, 1}, []float64{10, 3})
}

// TestEmbeddingLookupSparseRefusals checks the errors of ids and indices
// outside their ranges (an index outside the dense shape TFLite 2.9 writes
// past its output for), and that Eval allocates nothing once the output
// has its size.
func TestEmbeddingLookupSparseRefusals(t *testing.T) {
	run := func(ids, indices []int32) (*embeddingLookupSparseOp, *kernel.Node, error) {
		o := &embeddingLookupSparseOp{combiner: schema.CombinerTypeSQRTN}
		n := &kernel.Node{Threads: 1, Outputs: []*tensor.Tensor{kerneltest.OutT(tensor.Float32)}, Inputs: []*tensor.Tensor{
			kerneltest.I32T([]int{2}, ids...),
			kerneltest.I32T([]int{2, 2}, indices...),
			kerneltest.I32T([]int{2}, 2, 3),
			kerneltest.F32T([]int{2}, 1, 2),
			kerneltest.F32T([]int{3, 2}, 1, 2, 3, 4, 5, 6),
		}}
		if err := o.Prepare(n); err != nil {
			return o, n, err
		}
		return o, n, o.Eval(n)
	}
	for _, c := range []struct {
		ids, indices []int32
		want         string
	}{
		{[]int32{0, 3}, []int32{0, 0, 1, 0}, "id 3 (position 1) is outside the value's 3 rows"},
		{[]int32{0, 1}, []int32{0, 0, 2, 0}, "index 2 of id 1 (position 1) is outside the dense shape [2 3]"},
		{[]int32{0, 1}, []int32{-1, 0, 1, 0}, "index -1 of id 0 (position 0)"},
	} {
		if _, _, err := run(c.ids, c.indices); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ids %v indices %v: %v, want %q", c.ids, c.indices, err, c.want)
		}
	}
	o, n, err := run([]int32{2, 1}, []int32{1, 0, 0, 2})
	if err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(20, func() { _ = o.Eval(n) }); a != 0 {
		t.Errorf("%v allocations per Eval", a)
	}
}
