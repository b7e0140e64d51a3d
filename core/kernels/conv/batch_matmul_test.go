package conv

import (
	"strings"
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/matmul/matmul_tflite29.json.gz holds one-operator
// BATCH_MATMUL replay cases made by testdata/gen/matmul/matmul_tflite29_gen.py.

func TestBatchMatMulAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "matmul/matmul_tflite29.json.gz",
		Ops:         batchMatMulOps(),
		MinCases:    100,
		ThreadCycle: 3,
	})
}

func TestBatchMatMulRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, batchMatMulOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorBATCH_MATMUL: {Min: 1, Max: 4},
	})
}

func newBMM(t *testing.T, p BatchMatMulParams) *BatchMatMul {
	t.Helper()
	return &BatchMatMul{Params: p}
}

// TestBatchMatMulBroadcastByHand multiplies one lhs matrix by a batch of
// two rhs matrices, the second given transposed (adj_y).
func TestBatchMatMulBroadcastByHand(t *testing.T) {
	lhs := kerneltest.F32T([]int{1, 2, 3}, 1, 2, 3, 4, 5, 6)
	// rhs^T: [[1,0,0],[0,1,1]] and [[1,1,1],[0,0,2]]; product rows
	// (1,2,3)->(1,5),(6,6) and (4,5,6)->(4,11),(15,12).
	rhs := kerneltest.F32T([]int{2, 2, 3}, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 0, 2)
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, newBMM(t, BatchMatMulParams{AdjY: true}), 2, out, lhs, rhs)
	kerneltest.CheckOutput(t, "broadcast", out, []int{2, 2, 2}, []float64{1, 5, 4, 11, 6, 6, 15, 12})
}

// TestBatchMatMulHybridMoreRowsThanDepth covers the shapes on which TFLite
// 2.9's hybrid kernel overruns its buffers (more lhs rows than columns):
// with one column, each row quantizes to ±127 exactly, so the products are
// exact.
func TestBatchMatMulHybridMoreRowsThanDepth(t *testing.T) {
	lhs := kerneltest.F32T([]int{3, 1}, 1, -2, 0.5)
	rhs := kerneltest.I8T([]int{1, 2}, 0.5, 0, 2, -4)
	for _, asym := range []bool{false, true} {
		out := kerneltest.OutT(tensor.Float32)
		kerneltest.MustRun(t, newBMM(t, BatchMatMulParams{AsymmetricQuantizeInputs: asym}), 1, out, lhs, rhs)
		kerneltest.CheckOutput(t, "hybrid", out, []int{3, 2}, []float64{1, -2, -2, 4, 0.5, -1})
	}
}

func TestBatchMatMulRefusals(t *testing.T) {
	f := func(shape ...int) *tensor.Tensor { return tensor.NewTensor(tensor.Float32, shape...) }
	for name, c := range map[string]struct {
		lhs, rhs, out *tensor.Tensor
		want          string
	}{
		"rank5":   {f(1, 1, 1, 2, 3), f(3, 2), kerneltest.OutT(tensor.Float32), "rank 2 to 4"},
		"depth":   {f(2, 3), f(2, 3), kerneltest.OutT(tensor.Float32), "summed dimension"},
		"batch":   {f(2, 2, 3), f(3, 3, 2), kerneltest.OutT(tensor.Float32), "do not broadcast"},
		"uint8":   {kerneltest.QT(tensor.Uint8, []int{2, 3}, 1, 0), kerneltest.QT(tensor.Uint8, []int{3, 2}, 1, 0), kerneltest.QOut(tensor.Uint8, 1, 0), "lhs UINT8 with rhs UINT8"},
		"outtype": {f(2, 3), f(3, 2), kerneltest.OutT(tensor.Int8), "output type INT8"},
		"i16zp":   {kerneltest.QT(tensor.Int16, []int{2, 3}, 1, 3), kerneltest.QT(tensor.Int16, []int{3, 2}, 1, 0), kerneltest.QOut(tensor.Int16, 1, 0), "zero point 3"},
		"noquant": {tensor.NewTensor(tensor.Int8, 2, 3), kerneltest.QT(tensor.Int8, []int{3, 2}, 1, 0), kerneltest.QOut(tensor.Int8, 1, 0), "not quantized"},
	} {
		err := kerneltest.PrepareErr(newBMM(t, BatchMatMulParams{}), c.out, c.lhs, c.rhs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, c.want)
		}
	}
}
