package quantize

import (
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// testdata/gen/matmul/fake_quant_tflite29.json.gz holds one-operator
// FAKE_QUANT replay cases made by testdata/gen/matmul/matmul_tflite29_gen.py.

func TestFakeQuantAgainstTFLite29(t *testing.T) {
	kerneltest.ReplayTFLite29(t, kerneltest.ReplaySpec{
		File:        "matmul/fake_quant_tflite29.json.gz",
		Ops:         Ops(),
		MinCases:    40,
		ThreadCycle: 1,
	})
}

func fakeQuant(t *testing.T, p FakeQuantParams) (kernel.Op, error) {
	t.Helper()
	op := kerneltest.OperatorWith(schema.BuiltinOptionsFakeQuantOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		schema.FakeQuantOptionsStart(b)
		schema.FakeQuantOptionsAddMin(b, p.Min)
		schema.FakeQuantOptionsAddMax(b, p.Max)
		schema.FakeQuantOptionsAddNumBits(b, int32(p.NumBits))
		schema.FakeQuantOptionsAddNarrowRange(b, p.NarrowRange)
		return schema.FakeQuantOptionsEnd(b)
	})
	return newFakeQuantOp(kernel.OpInfo{Version: 1, Operator: op})
}

// TestFakeQuantNudgedByHand: min -0.1, max 0.9 over 2 bits gives step 1/3
// and zero point round(0.3) = 0, so the nudged range is [0, 1]: values
// clamp to it and round to thirds (0.5 is exactly between 1/3 and 2/3 only
// in real numbers; in float32 it rounds up).
func TestFakeQuantNudgedByHand(t *testing.T) {
	op, err := fakeQuant(t, FakeQuantParams{Min: -0.1, Max: 0.9, NumBits: 2})
	if err != nil {
		t.Fatal(err)
	}
	in := kerneltest.F32T([]int{5}, -1, 0.2, 0.5, 0.95, 3)
	out := kerneltest.OutT(tensor.Float32)
	kerneltest.MustRun(t, op, 1, out, in)
	kerneltest.CheckOutput(t, "fake quant", out, []int{5}, []float64{0, 1.0 / 3, 2.0 / 3, 1, 1})
}

func TestFakeQuantRefusals(t *testing.T) {
	for name, c := range map[string]struct {
		p    FakeQuantParams
		want string
	}{
		"narrow":  {FakeQuantParams{Min: -1, Max: 1, NumBits: 8, NarrowRange: true}, "narrow_range"},
		"empty":   {FakeQuantParams{Min: 1, Max: 1, NumBits: 8}, "must be below"},
		"bits0":   {FakeQuantParams{Min: -1, Max: 1}, "num_bits 0"},
		"bits17":  {FakeQuantParams{Min: -1, Max: 1, NumBits: 17}, "num_bits 17"},
		"nooptns": {FakeQuantParams{}, "must be below"},
	} {
		op, err := fakeQuant(t, c.p)
		if name == "nooptns" {
			op, err = newFakeQuantOp(kernel.OpInfo{Version: 1})
		}
		if err != nil {
			t.Fatal(err)
		}
		err = kerneltest.PrepareErr(op, kerneltest.OutT(tensor.Float32), kerneltest.F32T([]int{1}, 0))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", name, err, c.want)
		}
	}
	op, err := fakeQuant(t, FakeQuantParams{Min: -1, Max: 1, NumBits: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := kerneltest.PrepareErr(op, kerneltest.QOut(tensor.Int8, 1, 0), kerneltest.QT(tensor.Int8, []int{2}, 1, 0)); err == nil {
		t.Error("INT8 input accepted")
	}
}
