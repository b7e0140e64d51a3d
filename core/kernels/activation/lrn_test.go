package activation

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
	flatbuffers "github.com/google/flatbuffers/go"
)

// Unit tests of LOCAL_RESPONSE_NORMALIZATION against values computed independently (float64
// math); the bit-exact comparison with TFLite 2.9 is
// TestActivationAgainstTFLite29.

func newLRN(t *testing.T, p LRNParams) (kernel.Op, error) {
	t.Helper()
	op := kerneltest.OperatorWith(schema.BuiltinOptionsLocalResponseNormalizationOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		schema.LocalResponseNormalizationOptionsStart(b)
		schema.LocalResponseNormalizationOptionsAddRadius(b, p.Radius)
		schema.LocalResponseNormalizationOptionsAddBias(b, p.Bias)
		schema.LocalResponseNormalizationOptionsAddAlpha(b, p.Alpha)
		schema.LocalResponseNormalizationOptionsAddBeta(b, p.Beta)
		return schema.LocalResponseNormalizationOptionsEnd(b)
	})
	return newLRNOp(kernel.OpInfo{Version: 1, Operator: op})
}

func TestLRN(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, p := range []LRNParams{
		{Radius: 1, Bias: 1, Alpha: 1, Beta: 1},
		{Radius: 2, Bias: 2, Alpha: 1e-2, Beta: 0.75},
		{Radius: 0, Bias: 0.5, Alpha: 0.3, Beta: 0.5},
		{Radius: 9, Bias: 1, Alpha: 0.1, Beta: 2}, // wider than the depth
	} {
		op, err := newLRN(t, p)
		if err != nil {
			t.Fatal(err)
		}
		shape := []int{2, 1, 3, 5}
		in := kerneltest.F32T(shape)
		for i := range in.Float32s() {
			in.Float32s()[i] = float32(r.Float64()*4 - 2)
		}
		out := kerneltest.OutT(tensor.Float32)
		kerneltest.MustRun(t, op, 1, out, in)
		depth := shape[3]
		want := make([]float64, in.NumElements())
		x := in.Float32s()
		for i := range want {
			row, c := i/depth*depth, i%depth
			var sq float64
			for k := max(0, c-int(p.Radius)); k <= min(depth-1, c+int(p.Radius)); k++ {
				sq += float64(x[row+k]) * float64(x[row+k])
			}
			want[i] = float64(x[i]) * math.Pow(float64(p.Bias)+float64(p.Alpha)*sq, -float64(p.Beta))
		}
		kerneltest.CheckOutput(t, "LOCAL_RESPONSE_NORMALIZATION", out, shape, want)
	}
	if _, err := newLRN(t, LRNParams{Radius: -1, Bias: 1, Alpha: 1, Beta: 1}); err == nil {
		t.Error("negative radius accepted")
	}
	op, _ := newLRN(t, LRNParams{Radius: 1, Bias: 1, Alpha: 1, Beta: 1})
	if err := kerneltest.PrepareErr(op, kerneltest.OutT(tensor.Float32), kerneltest.F32T([]int{2, 3}, 1, 2, 3, 4, 5, 6)); err == nil {
		t.Error("rank 2 input accepted")
	}
	if err := kerneltest.PrepareErr(op, kerneltest.QOut(tensor.Int8, 0.1, 0), kerneltest.QT(tensor.Int8, []int{1, 1, 1, 2}, 0.1, 0)); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("int8 input: %v, want unsupported", err)
	}
}
