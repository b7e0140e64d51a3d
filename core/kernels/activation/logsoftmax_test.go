package activation

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// Unit tests of LOG_SOFTMAX against values computed independently (float64
// math); the bit-exact comparison with TFLite 2.9 is
// TestActivationAgainstTFLite29.

// TestLogQ12ToQ5 checks the fixed-point log against float64 over its range:
// sums of 1 to 4096 terms in Q12.19.
func TestLogQ12ToQ5(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 20000 {
		x := int32(1<<19 + r.Int64N(math.MaxInt32-1<<19))
		if i < 2 {
			x = []int32{1 << 19, math.MaxInt32}[i]
		}
		got := float64(actLogQ12ToQ5(x)) / (1 << 26)
		want := math.Log(float64(x) / (1 << 19))
		if math.Abs(got-want) > 2e-6 {
			t.Fatalf("log(%d/2^19) = %g, want %g", x, got, want)
		}
	}
}

func TestLogSoftmaxQuantized(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
		ozp := int64(255)
		if typ == tensor.Int8 {
			ozp = 127
		}
		for _, scale := range []float32{0.01, 0.1, 0.7, 3} {
			const rows, depth = 4, 37
			in := kerneltest.QT(typ, []int{rows, depth}, scale, 3)
			for i := range in.Data {
				in.Data[i] = byte(r.Uint32())
			}
			out := kerneltest.QOut(typ, 16.0/256, ozp)
			kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOG_SOFTMAX), 1, out, in)
			for row := range rows {
				m, sum := math.Inf(-1), 0.0
				for c := range depth {
					m = math.Max(m, kerneltest.ActReal(in, row*depth+c))
				}
				for c := range depth {
					sum += math.Exp(kerneltest.ActReal(in, row*depth+c) - m)
				}
				for c := range depth {
					i := row*depth + c
					want := kerneltest.ActQuantizeRef(out, kerneltest.ActReal(in, i)-m-math.Log(sum))
					if d := kerneltest.ActQ(out, i) - want; d < -1 || d > 1 {
						t.Fatalf("%s scale %g: element %d: got %d, want %d", typ, scale, i, kerneltest.ActQ(out, i), want)
					}
				}
			}
		}
	}
}

func TestLogSoftmaxFloat(t *testing.T) {
	in := []float32{1, 2, 3, -1000, 0, 1000}
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOG_SOFTMAX), 1, out, kerneltest.F32T([]int{2, 3}, in...))
	l := math.Log(math.Exp(-2) + math.Exp(-1) + 1)
	want := []float64{-2 - l, -1 - l, -l, -2000, -1000, 0}
	kerneltest.CheckOutput(t, "LOG_SOFTMAX", out, []int{2, 3}, want)
}

func TestLogSoftmaxOutputQuantization(t *testing.T) {
	for _, c := range []struct {
		typ   tensor.DType
		scale float32
		zp    int64
	}{
		{tensor.Uint8, 16.0 / 256, 254}, {tensor.Uint8, 1.0 / 256, 255},
		{tensor.Int8, 16.0 / 256, -128}, {tensor.Int8, 0.0626, 127},
	} {
		op := kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOG_SOFTMAX)
		err := kerneltest.PrepareErr(op, kerneltest.QOut(c.typ, c.scale, c.zp), kerneltest.QT(c.typ, []int{2}, 0.1, 0))
		if err == nil {
			t.Errorf("%s output scale %g zero point %d: accepted", c.typ, c.scale, c.zp)
		}
	}
	op := kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOG_SOFTMAX)
	err := kerneltest.PrepareErr(op, kerneltest.QOut(tensor.Int8, 16.0/256, 127), kerneltest.QT(tensor.Int8, []int{2}, 1e-9, 0))
	if err == nil {
		t.Error("INT8 input scale 1e-9 (TFLite aborts): accepted")
	}
}
