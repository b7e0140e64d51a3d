package activation

import (
	"errors"
	"math"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/testsupport/kerneltest"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	flatbuffers "github.com/google/flatbuffers/go"
)

// Test helpers.

func TestActivationRegistrations(t *testing.T) {
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorRELU:         {Min: 1, Max: 3},
		schema.BuiltinOperatorRELU_N1_TO_1: {Min: 1, Max: 1},
		schema.BuiltinOperatorRELU6:        {Min: 1, Max: 3},
		schema.BuiltinOperatorLOGISTIC:     {Min: 1, Max: 3},
		schema.BuiltinOperatorTANH:         {Min: 1, Max: 3},
		schema.BuiltinOperatorSOFTMAX:      {Min: 1, Max: 3},
		schema.BuiltinOperatorLEAKY_RELU:   {Min: 1, Max: 2},
		schema.BuiltinOperatorHARD_SWISH:   {Min: 1, Max: 1},
		schema.BuiltinOperatorPRELU:        {Min: 1, Max: 1},
		schema.BuiltinOperatorELU:          {Min: 1, Max: 1},
		schema.BuiltinOperatorGELU:         {Min: 1, Max: 2},
		schema.BuiltinOperatorLOG_SOFTMAX:  {Min: 1, Max: 2},

		schema.BuiltinOperatorLOCAL_RESPONSE_NORMALIZATION: {Min: 1, Max: 1},
	}
	kerneltest.CheckRegistrations(t, activationOps(), want)
}

func TestActivationOptions(t *testing.T) {
	op := kerneltest.OperatorWith(schema.BuiltinOptionsSoftmaxOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		schema.SoftmaxOptionsStart(b)
		schema.SoftmaxOptionsAddBeta(b, 0.75)
		return schema.SoftmaxOptionsEnd(b)
	})
	k, err := newSoftmaxOp(kernel.OpInfo{Version: 1, Operator: op})
	if err != nil || k.(*softmaxOp).params.Beta != 0.75 {
		t.Errorf("SOFTMAX beta: %v, %v", k, err)
	}
	op = kerneltest.OperatorWith(schema.BuiltinOptionsLeakyReluOptions, func(b *flatbuffers.Builder) flatbuffers.UOffsetT {
		schema.LeakyReluOptionsStart(b)
		schema.LeakyReluOptionsAddAlpha(b, 0.125)
		return schema.LeakyReluOptionsEnd(b)
	})
	k, err = newLeakyReluOp(kernel.OpInfo{Version: 1, Operator: op})
	if err != nil || k.(*leakyReluOp).params.Alpha != 0.125 {
		t.Errorf("LEAKY_RELU alpha: %v, %v", k, err)
	}
	// Without an operator the schema defaults (zero) apply.
	k, _ = newSoftmaxOp(kernel.OpInfo{Version: 1})
	if k.(*softmaxOp).params.Beta != 0 {
		t.Errorf("default beta %v", k.(*softmaxOp).params.Beta)
	}
}

func TestReluFloat(t *testing.T) {
	in := []float32{-7, -1.5, -1, -0.25, 0, 0.5, 1, 2, 5.75, 6, 7.5}
	cases := []struct {
		code schema.BuiltinOperator
		want []float32
	}{
		{schema.BuiltinOperatorRELU, []float32{0, 0, 0, 0, 0, 0.5, 1, 2, 5.75, 6, 7.5}},
		{schema.BuiltinOperatorRELU6, []float32{0, 0, 0, 0, 0, 0.5, 1, 2, 5.75, 6, 6}},
		{schema.BuiltinOperatorRELU_N1_TO_1, []float32{-1, -1, -1, -0.25, 0, 0.5, 1, 1, 1, 1, 1}},
	}
	for _, c := range cases {
		out := kerneltest.QOut(tensor.Float32, 0, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), c.code), 1, out, kerneltest.ActSetFloat(kerneltest.QT(tensor.Float32, []int{1, len(in)}, 0, 0), in...))
		if len(out.Shape) != 2 || out.Shape[1] != len(in) {
			t.Errorf("%s: output shape %v", kernel.OpName(c.code), out.Shape)
		}
		for i, w := range c.want {
			if got := out.Float32s()[i]; got != w {
				t.Errorf("%s(%g) = %g, want %g", kernel.OpName(c.code), in[i], got, w)
			}
		}
	}
}

func TestReluQuantized(t *testing.T) {
	relus := []struct {
		code   schema.BuiltinOperator
		lo, hi float64
	}{
		{schema.BuiltinOperatorRELU, 0, math.Inf(1)},
		{schema.BuiltinOperatorRELU6, 0, 6},
		{schema.BuiltinOperatorRELU_N1_TO_1, -1, 1},
	}
	for _, r := range relus {
		f := func(x float64) float64 { return min(max(x, r.lo), r.hi) }
		name := kernel.OpName(r.code)
		// Output scale half the input's: the requantization is exact, so the
		// float reference must match every value.
		in, out := kerneltest.ActAll8(tensor.Uint8, 0.5, 10), kerneltest.QOut(tensor.Uint8, 0.25, 3)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), r.code), 1, out, in)
		kerneltest.ActCheckNear(t, name+" uint8 x2", in, out, f, 0, 256)
		in, out = kerneltest.ActAll8(tensor.Int8, 0.05, -20), kerneltest.QOut(tensor.Int8, 0.05, 7)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), r.code), 1, out, in)
		kerneltest.ActCheckNear(t, name+" int8 same scale", in, out, f, 0, 256)
		// Arbitrary scale ratios round twice (in the high multiply and the
		// shift), so allow one step.
		in, out = kerneltest.ActAll8(tensor.Int8, 0.037, 5), kerneltest.QOut(tensor.Int8, 0.021, -100)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), r.code), 1, out, in)
		kerneltest.ActCheckNear(t, name+" int8", in, out, f, 1, 240)
		in, out = kerneltest.ActAll8(tensor.Uint8, 0.011, 200), kerneltest.QOut(tensor.Uint8, 0.03, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), r.code), 1, out, in)
		kerneltest.ActCheckNear(t, name+" uint8", in, out, f, 1, 240)
	}
	// Clamping to the activation range: RELU6 with output scale 1/32 puts 6
	// at 192+zp.
	in, out := kerneltest.ActAll8(tensor.Uint8, 0.1, 0), kerneltest.QOut(tensor.Uint8, 1.0/32, 10)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU6), 1, out, in)
	if got := out.Data[255]; got != 202 {
		t.Errorf("RELU6 max = %d, want 202", got)
	}
	if got := out.Data[0]; got != 10 {
		t.Errorf("RELU6 min = %d, want 10", got)
	}
	// The range bounds are roundf(bound/scale): ties go away from zero, so
	// with output scale 2 RELU_N1_TO_1 spans zp-1..zp+1.
	in, out = kerneltest.ActAll8(tensor.Int8, 1, 0), kerneltest.QOut(tensor.Int8, 2, 100)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU_N1_TO_1), 1, out, in)
	if lo, hi := kerneltest.ActQ(out, 128), kerneltest.ActQ(out, 127); lo != 99 || hi != 101 {
		t.Errorf("RELU_N1_TO_1 with scale 2: range %d..%d, want 99..101", lo, hi)
	}
	// int16: zero points 0.
	in16 := kerneltest.ActSetInt16(kerneltest.QT(tensor.Int16, []int{6}, 0.001, 0), -32768, -5, 0, 7, 3000, 32767)
	out = kerneltest.QOut(tensor.Int16, 0.002, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU6), 1, out, in16)
	for i, w := range []int16{0, 0, 0, 4, 1500, 3000} { // 7/2 rounds up; 6/0.002 = 3000
		if got := out.Int16s()[i]; got != w {
			t.Errorf("RELU6 int16 [%d] = %d, want %d", i, got, w)
		}
	}
	out = kerneltest.QOut(tensor.Int16, 0.0005, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU), 1, out, in16)
	for i, w := range []int16{0, 0, 0, 14, 6000, 32767} {
		if got := out.Int16s()[i]; got != w {
			t.Errorf("RELU int16 [%d] = %d, want %d", i, got, w)
		}
	}
	// Errors.
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU_N1_TO_1), kerneltest.QOut(tensor.Int16, 0.1, 0), kerneltest.QT(tensor.Int16, []int{2}, 0.1, 0)); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("RELU_N1_TO_1 int16: %v, want unsupported", err)
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU), kerneltest.QOut(tensor.Int16, 0.1, 1), kerneltest.QT(tensor.Int16, []int{2}, 0.1, 0)); err == nil {
		t.Error("RELU int16 with output zero point 1 accepted")
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU), kerneltest.QOut(tensor.Int8, 0.1, 0), kerneltest.QT(tensor.Uint8, []int{2}, 0.1, 0)); err == nil {
		t.Error("RELU with mismatched types accepted")
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorRELU), kerneltest.QOut(tensor.Int32, 0, 0), kerneltest.QT(tensor.Int32, []int{2}, 0, 0)); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("RELU int32: %v, want unsupported", err)
	}
}

func TestLeakyRelu(t *testing.T) {
	op := &leakyReluOp{params: LeakyReluParams{Alpha: 0.2}}
	out := kerneltest.QOut(tensor.Float32, 0, 0)
	kerneltest.MustRun(t, op, 1, out, kerneltest.ActSetFloat(kerneltest.QT(tensor.Float32, []int{5}, 0, 0), -10, -0.5, 0, 0.5, 3))
	for i, w := range []float32{-2, -0.1, 0, 0.5, 3} {
		if got := out.Float32s()[i]; got != w {
			t.Errorf("LEAKY_RELU float [%d] = %g, want %g", i, got, w)
		}
	}
	for _, alpha := range []float32{0.1, 0.5, -0.3, 1.7} {
		f := func(x float64) float64 {
			if x >= 0 {
				return x
			}
			return float64(alpha) * x
		}
		op := &leakyReluOp{params: LeakyReluParams{Alpha: alpha}}
		in, out := kerneltest.ActAll8(tensor.Int8, 0.03, -7), kerneltest.QOut(tensor.Int8, 0.04, 11)
		kerneltest.MustRun(t, op, 1, out, in)
		kerneltest.ActCheckNear(t, "LEAKY_RELU int8", in, out, f, 1, 230)
		// Equal scales: with alpha 1/2 every odd negative input is a tie,
		// which the fixed-point multiply rounds up where the reference
		// rounds away from zero.
		in, out = kerneltest.ActAll8(tensor.Uint8, 0.02, 128), kerneltest.QOut(tensor.Uint8, 0.02, 128)
		kerneltest.MustRun(t, op, 1, out, in)
		kerneltest.ActCheckNear(t, "LEAKY_RELU uint8", in, out, f, 1, 190)
	}
	// Exact case: same scales, alpha 1/2. Negative odd values are ties,
	// which the fixed-point multiply rounds up (-1.5 -> -1).
	op = &leakyReluOp{params: LeakyReluParams{Alpha: 0.5}}
	in := kerneltest.ActSetInt16(kerneltest.QT(tensor.Int16, []int{7}, 0.01, 0), -32768, -3, -2, -1, 0, 1, 32767)
	out = kerneltest.QOut(tensor.Int16, 0.01, 0)
	kerneltest.MustRun(t, op, 1, out, in)
	for i, w := range []int16{-16384, -1, -1, 0, 0, 1, 32767} {
		if got := out.Int16s()[i]; got != w {
			t.Errorf("LEAKY_RELU int16 [%d] = %d, want %d", i, got, w)
		}
	}
	if err := kerneltest.PrepareErr(op, kerneltest.QOut(tensor.Int16, 0.01, 2), kerneltest.QT(tensor.Int16, []int{2}, 0.01, 0)); err == nil {
		t.Error("LEAKY_RELU int16 with output zero point 2 accepted")
	}
}

func TestHardSwish(t *testing.T) {
	ref := func(x float64) float64 { return x * min(6, max(0, x+3)) / 6 }
	in := kerneltest.QT(tensor.Float32, []int{2, 4}, 0, 0)
	xs := []float32{-4, -3, -1.5, 0, 0.7, 2.9, 3, 10}
	kerneltest.ActSetFloat(in, xs...)
	out := kerneltest.QOut(tensor.Float32, 0, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorHARD_SWISH), 1, out, in)
	for i, x := range xs {
		if got := out.Float32s()[i]; math.Abs(float64(got)-ref(float64(x))) > 1e-6 {
			t.Errorf("HARD_SWISH(%g) = %g, want %g", x, got, ref(float64(x)))
		}
	}
	// Quantized: the int16 fixed-point scheme stays within half a step of
	// the float function before rounding, so results are at most one off.
	for _, c := range []struct {
		typ               tensor.DType
		inScale, outScale float32
		inZP, outZP       int64
	}{
		{tensor.Uint8, 0.05, 0.03, 100, 20}, {tensor.Uint8, 0.01, 0.02, 0, 128}, {tensor.Int8, 0.1, 0.05, -28, -100},
		{tensor.Int8, 0.003, 0.002, 0, 0}, {tensor.Int8, 0.2, 0.8, 10, -30},
	} {
		in, out := kerneltest.ActAll8(c.typ, c.inScale, c.inZP), kerneltest.QOut(c.typ, c.outScale, c.outZP)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorHARD_SWISH), 1, out, in)
		kerneltest.ActCheckNear(t, "HARD_SWISH", in, out, ref, 1, 200)
	}
	// Bytes of TensorFlow Lite 2.9 for int8, input scale 0.04 zp 10, output
	// scale 0.025 zp -20 (element i is int8(i)).
	in, out = kerneltest.ActAll8(tensor.Int8, 0.04, 10), kerneltest.QOut(tensor.Int8, 0.025, -20)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorHARD_SWISH), 1, out, in)
	kerneltest.ActHexCheck(t, "HARD_SWISH TFLite", out, "e5e6e6e7e8e8e9eaeaebecedeeeeeff0f1f2f3f4f5f6f7f8f9fafcfdfeff00020304050708090b0c0e0f1112141517181a1b1d1f2022242627292b2d2f31323436383a3c3e40424447494b4d4f515456585b5d5f62646667696a6c6e6f7172747677797a7c7e7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7fececececececececececececececececececececececececececececececececececececececececececececececececececececececececececececececececebeaeae9e8e8e7e6e6e5e4e4e3e3e2e2e1e1e1e0e0e0dfdfdfdedededededddddddddddddddddddddddddddddedededededfdfdfe0e0e0e1e1e1e2e2e3e3e4e4")
	// An output scale below input_scale/128 needs a left shift TFLite
	// rejects.
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorHARD_SWISH), kerneltest.QOut(tensor.Int8, 0.0001, 0), kerneltest.ActAll8(tensor.Int8, 0.1, 0)); err == nil {
		t.Error("HARD_SWISH with output multiplier > 1 accepted")
	}
}

func TestLogisticTanh8(t *testing.T) {
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for _, c := range []struct {
		typ     tensor.DType
		inScale float32
		inZP    int64
	}{{tensor.Uint8, 0.05, 128}, {tensor.Uint8, 0.1, 0}, {tensor.Int8, 0.08, -10}, {tensor.Int8, 0.02, 0}} {
		outZP := int64(0)
		if c.typ == tensor.Int8 {
			outZP = -128
		}
		// The table rounds each value once: exact up to rounding ties of
		// the single-precision function values.
		in, out := kerneltest.ActAll8(c.typ, c.inScale, c.inZP), kerneltest.QOut(c.typ, 1.0/256, outZP)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOGISTIC), 1, out, in)
		kerneltest.ActCheckNear(t, "LOGISTIC "+c.typ.String(), in, out, sigmoid, 1, 254)
		in, out = kerneltest.ActAll8(c.typ, c.inScale, c.inZP), kerneltest.QOut(c.typ, 1.0/128, outZP+128)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorTANH), 1, out, in)
		kerneltest.ActCheckNear(t, "TANH "+c.typ.String(), in, out, math.Tanh, 1, 254)
	}
	// Table edges: the smallest and largest inputs saturate.
	in, out := kerneltest.ActAll8(tensor.Uint8, 0.1, 128), kerneltest.QOut(tensor.Uint8, 1.0/256, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOGISTIC), 1, out, in)
	if out.Data[0] != 0 || out.Data[255] != 255 || out.Data[128] != 128 {
		t.Errorf("LOGISTIC edges %d %d %d, want 0 128 255", out.Data[0], out.Data[128], out.Data[255])
	}
	// Bytes of TensorFlow Lite 2.9 (element i is the 8-bit value of byte i).
	in, out = kerneltest.ActAll8(tensor.Uint8, 0.05, 128), kerneltest.QOut(tensor.Uint8, 1.0/256, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOGISTIC), 1, out, in)
	kerneltest.ActHexCheck(t, "LOGISTIC uint8 TFLite", out, "0000000001010101010101010101010101010101010101010101020202020202020202020303030303030304040404040505050506060606070708080809090a0a0b0b0c0c0d0d0e0f0f101112131314151617181a1b1c1d1f202123242628292b2d2f31333537393b3e404245474a4d4f5255585b5e6164676a6d7073767a7d8083868a8d909396999c9fa2a5a8abaeb1b3b6b9bbbec0c2c5c7c9cbcdcfd1d3d5d7d8dadcdddfe0e1e3e4e5e6e8e9eaebecededeeeff0f1f1f2f3f3f4f4f5f5f6f6f7f7f8f8f8f9f9fafafafafbfbfbfbfcfcfcfcfcfdfdfdfdfdfdfdfefefefefefefefefefeffffffffffffffffffffffffffffffffffffffffffffffffff")
	in, out = kerneltest.ActAll8(tensor.Int8, 0.03, -5), kerneltest.QOut(tensor.Int8, 1.0/128, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorTANH), 1, out, in)
	kerneltest.ActHexCheck(t, "TANH int8 TFLite", out, "13171a1e2225292c303336393c3f4245474a4d4f515456585a5c5e5f6163646667686a6b6c6d6e6f707172727374757576767777787879797a7a7a7b7b7b7b7c7c7c7c7d7d7d7d7d7e7e7e7e7e7e7e7e7e7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f7f8080808080808080808080808080808080808080818181818181818181818181818181818181828282828282828282838383838384848484858585858686868787888889898a8a8b8b8c8d8e8e8f9091929394959698999a9c9d9fa1a2a4a6a8aaacafb1b3b6b9bbbec1c4c7cacdd0d4d7dbdee2e6e9edf1f5f8fc0004080b0f")
	// Inputs where glibc's tanhf and a correctly rounded tanh land on
	// different sides of a rounding boundary; TFLite 2.9 gives 32 and 41.
	for _, c := range []struct {
		scale uint32
		zp    int64
		at    int
		want  byte
	}{
		{0x3c47f1ab, 167, 88, 32},
		{0x3c102658, 176, 81, 41},
	} {
		in, out := kerneltest.ActAll8(tensor.Uint8, math.Float32frombits(c.scale), c.zp), kerneltest.QOut(tensor.Uint8, 1.0/128, 128)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorTANH), 1, out, in)
		if got := out.Data[c.at]; got != c.want {
			t.Errorf("TANH uint8 scale %g zp %d: [%d] = %d, want %d", in.Scale(), c.zp, c.at, got, c.want)
		}
	}
	// LOGISTIC needs an output scale of 1/256.
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOGISTIC), kerneltest.QOut(tensor.Uint8, 1.0/128, 0), kerneltest.ActAll8(tensor.Uint8, 0.1, 0)); err == nil {
		t.Error("LOGISTIC with output scale 1/128 accepted")
	}
	// Float.
	xs := []float32{-20, -3, -0.5, 0, 0.25, 4, 30}
	for _, code := range []schema.BuiltinOperator{schema.BuiltinOperatorLOGISTIC, schema.BuiltinOperatorTANH} {
		out := kerneltest.QOut(tensor.Float32, 0, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), code), 1, out, kerneltest.ActSetFloat(kerneltest.QT(tensor.Float32, []int{len(xs)}, 0, 0), xs...))
		for i, x := range xs {
			want := math.Tanh(float64(x))
			if code == schema.BuiltinOperatorLOGISTIC {
				want = sigmoid(float64(x))
			}
			if got := out.Float32s()[i]; math.Abs(float64(got)-want) > 1e-7 {
				t.Errorf("%s(%g) = %g, want %g", kernel.OpName(code), x, got, want)
			}
		}
	}
}

func TestLogisticTanh16(t *testing.T) {
	sigmoid := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	full := func(scale float32) *tensor.Tensor {
		in := kerneltest.QT(tensor.Int16, []int{65536}, scale, 0)
		for i := range 65536 {
			in.Int16s()[i] = int16(i - 32768)
		}
		return in
	}
	// Tolerances in output steps (2^-15) cover the approximations: gemmlowp
	// fixed point for the power-of-two scales 2^-12 (also 2^-11 for TANH),
	// the interpolated sigmoid table otherwise.
	for _, c := range []struct {
		scale              float32
		logTol, tanTol     int32
		logExact, tanExact int
	}{
		{1.0 / 4096, 7, 12, 7000, 12000}, {1.0 / 2048, 2, 12, 40000, 20000}, {1.0 / 3000, 2, 3, 45000, 35000},
		{1e-4, 2, 3, 40000, 30000}, {5e-3, 2, 3, 28000, 28000},
	} {
		in, out := full(c.scale), kerneltest.QOut(tensor.Int16, 1.0/32768, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorLOGISTIC), 1, out, in)
		kerneltest.ActCheckNear(t, "LOGISTIC int16", in, out, sigmoid, c.logTol, c.logExact)
		out = kerneltest.QOut(tensor.Int16, 1.0/32768, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorTANH), 1, out, in)
		kerneltest.ActCheckNear(t, "TANH int16", in, out, math.Tanh, c.tanTol, c.tanExact)
	}
	// Bytes of TensorFlow Lite 2.9 for these inputs, one case per path.
	xs := []int16{-32768, -20000, -4096, -100, -1, 0, 1, 100, 4096, 8192, 20000, 32767}
	for _, c := range []struct {
		code  schema.BuiltinOperator
		scale float32
		want  string
	}{
		{schema.BuiltinOperatorLOGISTIC, 1.0 / 4096, "0b00f3006f22373fff3f00400040c840905dc2700c7ff47f"},
		{schema.BuiltinOperatorLOGISTIC, 3e-4, "02005100fb1c0a3ffd3f00400340f6400563e775af7ffe7f"},
		{schema.BuiltinOperatorTANH, 1.0 / 2048, "018001809484c4f9e8ff000018003c066c7be87fff7fff7f"},
		{schema.BuiltinOperatorTANH, 1e-3, "0180018012803ef3e0ff00002000c20cee7fff7fff7fff7f"},
	} {
		out := kerneltest.QOut(tensor.Int16, 1.0/32768, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), c.code), 1, out, kerneltest.ActSetInt16(kerneltest.QT(tensor.Int16, []int{len(xs)}, c.scale, 0), xs...))
		kerneltest.ActHexCheck(t, kernel.OpName(c.code)+" int16 TFLite", out, c.want)
	}
	// Quantization TFLite rejects.
	for _, c := range []struct {
		code             schema.BuiltinOperator
		inZP, outZP      int64
		outScale, inScal float32
	}{
		{schema.BuiltinOperatorLOGISTIC, 0, 0, 1.0 / 16384, 1.0 / 4096},
		{schema.BuiltinOperatorLOGISTIC, 0, 3, 1.0 / 32768, 1.0 / 4096},
		{schema.BuiltinOperatorTANH, 0, 0, 1.0 / 16384, 1.0 / 4096},
		{schema.BuiltinOperatorTANH, 0, 0, 1.0 / 30000, 1.0 / 4096},
		{schema.BuiltinOperatorTANH, 5, 0, 1.0 / 32768, 1.0 / 4096},
	} {
		if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), c.code), kerneltest.QOut(tensor.Int16, c.outScale, c.outZP), kerneltest.QT(tensor.Int16, []int{4}, c.inScal, c.inZP)); err == nil {
			t.Errorf("%s int16 accepted zero points %d/%d, output scale %g", kernel.OpName(c.code), c.inZP, c.outZP, c.outScale)
		}
	}
}

// actSoftmaxRef is the float softmax of a tensor's real values over the last
// axis.
func actSoftmaxRef(real []float64, depth int, beta float64) []float64 {
	out := make([]float64, len(real))
	for s := 0; s < len(real); s += depth {
		m := math.Inf(-1)
		for _, v := range real[s : s+depth] {
			m = max(m, v)
		}
		sum := 0.0
		for i, v := range real[s : s+depth] {
			out[s+i] = math.Exp(beta * (v - m))
			sum += out[s+i]
		}
		for i := range depth {
			out[s+i] /= sum
		}
	}
	return out
}

func TestSoftmaxFloat(t *testing.T) {
	shape := []int{2, 3, 4}
	in := kerneltest.QT(tensor.Float32, shape, 0, 0)
	real := make([]float64, 24)
	for i := range real {
		v := float32(math.Sin(float64(i)*1.7) * 5)
		in.Float32s()[i] = v
		real[i] = float64(v)
	}
	for _, beta := range []float32{1, 0.5, 3} {
		out := kerneltest.QOut(tensor.Float32, 0, 0)
		kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: beta}}, 1, out, in)
		want := actSoftmaxRef(real, 4, float64(beta))
		for i, w := range want {
			if got := out.Float32s()[i]; math.Abs(float64(got)-w) > 1e-6 {
				t.Errorf("beta %g: [%d] = %g, want %g", beta, i, got, w)
			}
		}
	}
}

func TestSoftmaxQuantized(t *testing.T) {
	// Float reference over the last axis of a 3-D input, several betas and
	// output types. The single-precision table path is within one step.
	for _, c := range []struct {
		in, out          tensor.DType
		inScale          float32
		inZP             int64
		outScale         float32
		outZP            int64
		beta             float32
		minExactFraction float64
	}{
		{tensor.Uint8, tensor.Uint8, 0.13, 96, 1.0 / 256, 0, 1, 0.97},
		{tensor.Uint8, tensor.Uint8, 0.05, 0, 1.0 / 256, 0, 0.35, 0.97},
		{tensor.Int8, tensor.Int8, 0.0634, -53, 1.0 / 256, -128, 1, 0.97},
		{tensor.Int8, tensor.Int8, 0.1, 0, 1.0 / 256, -128, 2.5, 0.97},
		{tensor.Int8, tensor.Int16, 0.07, 3, 1.0 / 32768, 0, 1, 0.9},
		{tensor.Uint8, tensor.Int16, 0.02, 128, 1.0 / 65536, -32768, 0.8, 0.9},
	} {
		shape := []int{3, 5, 40}
		in := kerneltest.QT(c.in, shape, c.inScale, c.inZP)
		for i := range in.Data {
			in.Data[i] = byte(i * 37 % 251)
		}
		out := kerneltest.QOut(c.out, c.outScale, c.outZP)
		kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: c.beta}}, 1, out, in)
		real := make([]float64, in.NumElements())
		for i := range real {
			real[i] = kerneltest.ActReal(in, i)
		}
		want := actSoftmaxRef(real, 40, float64(c.beta))
		exact := 0
		for i, w := range want {
			q := kerneltest.ActQuantizeRef(out, w)
			got := kerneltest.ActQ(out, i)
			if d := got - q; d < -1 || d > 1 {
				t.Fatalf("%s->%s beta %g: [%d] = %d, want %d", c.in, c.out, c.beta, i, got, q)
			} else if d == 0 {
				exact++
			}
		}
		if float64(exact) < c.minExactFraction*float64(len(want)) {
			t.Errorf("%s->%s: only %d of %d exact", c.in, c.out, exact, len(want))
		}
	}

	// Exact cases. A uniform row of four gives 1/4 = 64/256; one dominant
	// value takes all the probability (256/256 saturates at 255).
	in := kerneltest.QT(tensor.Uint8, []int{2, 4}, 0.5, 0)
	copy(in.Data, []byte{7, 7, 7, 7, 250, 0, 0, 1})
	out := kerneltest.QOut(tensor.Uint8, 1.0/256, 0)
	kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: 1}}, 1, out, in)
	if got := string(out.Data); got != string([]byte{64, 64, 64, 64, 255, 0, 0, 0}) {
		t.Errorf("uint8 exact cases: %v", out.Data)
	}
	// TFLite's uint8 rounding ignores the output zero point.
	out = kerneltest.QOut(tensor.Uint8, 1.0/256, 10)
	kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: 1}}, 1, out, kerneltest.QT(tensor.Uint8, []int{4}, 0.5, 0))
	if got := string(out.Data); got != string([]byte{64, 64, 64, 64}) {
		t.Errorf("uint8 with output zero point 10: %v, want all 64", out.Data)
	}
	in = kerneltest.QT(tensor.Int8, []int{4}, 0.5, 0)
	out = kerneltest.QOut(tensor.Int8, 1.0/256, -128)
	kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: 1}}, 1, out, in)
	for _, v := range out.Int8s() {
		if v != -64 {
			t.Errorf("int8 uniform row: %v, want all -64", out.Int8s())
			break
		}
	}

	// Bytes of TensorFlow Lite 2.9.
	in = kerneltest.QT(tensor.Uint8, []int{2, 8}, 0.130833, 96)
	copy(in.Data, []byte{96, 100, 120, 130, 131, 160, 200, 255, 0, 10, 90, 91, 92, 93, 150, 151})
	out = kerneltest.QOut(tensor.Uint8, 1.0/256, 0)
	kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: 1}}, 1, out, in)
	kerneltest.ActHexCheck(t, "SOFTMAX uint8 TFLite", out, "00000000000000ff0000000000007888")
	in = kerneltest.QT(tensor.Int8, []int{3, 5}, 0.0634, -53)
	copy(in.Data, []byte{0x80, 0x7f, 0, 1, 2, 10, 20, 30, 40, 50, 0xf0, 0xf1, 0xf2, 0xf3, 0xf4})
	out = kerneltest.QOut(tensor.Int8, 1.0/256, -128)
	kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: 0.7}}, 1, out, in)
	kerneltest.ActHexCheck(t, "SOFTMAX int8 beta 0.7 TFLite", out, "807d818181919baac2e7afb1b3b5b8")

	// Output quantization TFLite requires.
	for _, c := range []struct {
		in, out tensor.DType
		scale   float32
		zp      int64
	}{{tensor.Int8, tensor.Int8, 1.0 / 256, 0}, {tensor.Int8, tensor.Int8, 1.0 / 128, -128}, {tensor.Int16, tensor.Int16, 1.0 / 16384, 0}, {tensor.Int16, tensor.Int16, 1.0 / 32768, 1}} {
		if err := kerneltest.PrepareErr(&softmaxOp{params: SoftmaxParams{Beta: 1}}, kerneltest.QOut(c.out, c.scale, c.zp), kerneltest.QT(c.in, []int{4}, 0.1, 0)); err == nil {
			t.Errorf("SOFTMAX %s->%s accepted scale %g zero point %d", c.in, c.out, c.scale, c.zp)
		}
	}
	if err := kerneltest.PrepareErr(&softmaxOp{}, kerneltest.QOut(tensor.Float32, 0, 0), kerneltest.QT(tensor.Float32, nil, 0, 0)); err == nil {
		t.Error("SOFTMAX accepted a scalar")
	}
	if err := kerneltest.PrepareErr(&softmaxOp{}, kerneltest.QOut(tensor.Int8, 1.0/256, -128), kerneltest.QT(tensor.Uint8, []int{4}, 0.1, 0)); err == nil {
		t.Error("SOFTMAX accepted uint8 -> int8")
	}
}

func TestSoftmaxInt16(t *testing.T) {
	// Rows whose spread stays inside the exp table's [-10, 0] range follow
	// the float softmax within a few steps of 2^-15.
	shape := []int{4, 3, 9}
	in := kerneltest.QT(tensor.Int16, shape, 2.5e-4, 0)
	for i := range in.Int16s() {
		in.Int16s()[i] = int16((i*7919)%39000 - 19500)
	}
	real := make([]float64, in.NumElements())
	for i := range real {
		real[i] = kerneltest.ActReal(in, i)
	}
	for _, beta := range []float32{1, 0.6} {
		out := kerneltest.QOut(tensor.Int16, 1.0/32768, 0)
		kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: beta}}, 1, out, in)
		want := actSoftmaxRef(real, 9, float64(beta))
		for i, w := range want {
			if d := math.Abs(float64(out.Int16s()[i]) - w*32768); d > 4 {
				t.Errorf("beta %g: [%d] = %d, want %.1f", beta, i, out.Int16s()[i], w*32768)
			}
		}
	}
	// Bytes of TensorFlow Lite 2.9, with differences beyond the table.
	in = kerneltest.ActSetInt16(kerneltest.QT(tensor.Int16, []int{2, 6}, 2e-4, 0), 0, 1000, 2000, 5000, -30000, 32767, -32768, -32000, -31000, -20000, 100, 0)
	out := kerneltest.QOut(tensor.Int16, 1.0/32768, 0)
	kerneltest.MustRun(t, &softmaxOp{params: SoftmaxParams{Beta: 1}}, 1, out, in)
	kerneltest.ActHexCheck(t, "SOFTMAX int16 TFLite", out, "2e00380044007e000200d67e16001a0020002601e63fa23e")
	if err := kerneltest.PrepareErr(&softmaxOp{params: SoftmaxParams{Beta: 1}}, kerneltest.QOut(tensor.Int16, 1.0/32768, 0), kerneltest.QT(tensor.Int16, []int{1, 1, 1, 1, 2}, 0.1, 0)); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("SOFTMAX int16 rank 5: %v, want unsupported", err)
	}
}

func TestPrelu(t *testing.T) {
	// Float, alpha broadcast over the channels of an NHWC input.
	in := kerneltest.QT(tensor.Float32, []int{1, 2, 2, 3}, 0, 0)
	for i := range 12 {
		in.Float32s()[i] = float32(i) - 6
	}
	alpha := kerneltest.ActSetFloat(kerneltest.QT(tensor.Float32, []int{1, 1, 3}, 0, 0), 0.5, -1, 2)
	out := kerneltest.QOut(tensor.Float32, 0, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorPRELU), 1, out, in, alpha)
	for i := range 12 {
		x := float32(i) - 6
		want := x
		if x < 0 {
			want = x * alpha.Float32s()[i%3]
		}
		if got := out.Float32s()[i]; got != want {
			t.Errorf("PRELU float [%d] = %g, want %g", i, got, want)
		}
	}
	// Quantized, broadcast and element-wise alphas, against the float
	// reference within one step.
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
		for _, ashape := range [][]int{{4}, {3, 1}, {2, 3, 4}} {
			in := kerneltest.QT(typ, []int{2, 3, 4}, 0.05, 7)
			for i := range in.Data {
				in.Data[i] = byte(i * 89 % 256)
			}
			alpha := kerneltest.QT(typ, ashape, 0.01, -3)
			for i := range alpha.Data {
				alpha.Data[i] = byte(i*53 + 11)
			}
			out := kerneltest.QOut(typ, 0.06, 2)
			kerneltest.MustRun(t, kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorPRELU), 1, out, in, alpha)
			for i := range 24 {
				x := kerneltest.ActReal(in, i)
				ai := (i % 4) % tensor.NumElements(ashape)
				if len(ashape) == 2 {
					ai = i / 4 % 3
				} else if len(ashape) == 3 {
					ai = i
				}
				if x < 0 {
					x *= kerneltest.ActReal(alpha, ai)
				}
				want := kerneltest.ActQuantizeRef(out, x)
				if d := kerneltest.ActQ(out, i) - want; d < -1 || d > 1 {
					t.Errorf("PRELU %s alpha %v [%d] = %d, want %d", typ, ashape, i, kerneltest.ActQ(out, i), want)
				}
			}
		}
	}
	// Alpha that does not broadcast to the input's shape.
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorPRELU), kerneltest.QOut(tensor.Float32, 0, 0), kerneltest.QT(tensor.Float32, []int{2, 3}, 0, 0), kerneltest.QT(tensor.Float32, []int{2}, 0, 0)); err == nil {
		t.Error("PRELU accepted alpha [2] for input [2 3]")
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorPRELU), kerneltest.QOut(tensor.Float32, 0, 0), kerneltest.QT(tensor.Float32, []int{3}, 0, 0), kerneltest.QT(tensor.Float32, []int{2, 3}, 0, 0)); err == nil {
		t.Error("PRELU accepted alpha of higher rank")
	}
}

func TestActivationExpfTanhf(t *testing.T) {
	// Bits of glibc 2.36's expf and tanhf (x86-64), including inputs where
	// they differ from the correctly rounded functions.
	for _, c := range []struct{ x, want uint32 }{
		{0x00000000, 0x3f800000}, {0xbf800000, 0x3ebc5ab2}, {0x3f800000, 0x402df854},
		{0xc2cfcccd, 0x00000001}, // -103.9: subnormal
		{0xc2d00000, 0x00000000}, // -104: underflow
		{0x42b16666, 0x7f7a37fc}, // 88.7
		{0x42b20000, 0x7f800000}, // 89: overflow
		{0xbfa76613, 0x3e8a73a8}, {0xbf66ebda, 0x3ecfbd7f}, {0xc18c411a, 0x32d0f1d1}, {0xbe9d7c98, 0x3f3c371b},
	} {
		x := math.Float32frombits(c.x)
		if got := math.Float32bits(actExpf(x)); got != c.want {
			t.Errorf("actExpf(%g) = %#08x, want %#08x", x, got, c.want)
		}
	}
	for _, c := range []struct{ x, want uint32 }{
		{0x3f6e7794, 0x3f3b3659}, {0x3f0f1254, 0x3f01d400}, {0x3b987f99, 0x3b987f50}, {0x3f06c892, 0x3ef72467},
		{0xbf06c892, 0xbef72467}, {0x41c00000, 0x3f800000}, {0x00000000, 0x00000000},
	} {
		x := math.Float32frombits(c.x)
		if got := math.Float32bits(actTanhf(x)); got != c.want {
			t.Errorf("actTanhf(%g) = %#08x, want %#08x", x, got, c.want)
		}
	}
	// Whatever the rounding details, both follow the true functions closely.
	for i := -2000; i <= 2000; i++ {
		x := float32(i) / 97
		if e, w := float64(actExpf(x)), math.Exp(float64(x)); math.Abs(e-w) > 1.5e-7*w {
			t.Fatalf("actExpf(%g) = %g, want %g", x, e, w)
		}
		if e, w := float64(actTanhf(x)), math.Tanh(float64(x)); math.Abs(e-w) > 1.5e-7 {
			t.Fatalf("actTanhf(%g) = %g, want %g", x, e, w)
		}
	}
}

func TestActivationEvalAllocs(t *testing.T) {
	type cfg struct {
		name string
		op   kernel.Op
		in   *tensor.Tensor
		out  *tensor.Tensor
	}
	in16 := kerneltest.QT(tensor.Int16, []int{64}, 1.0/4096, 0)
	alpha := kerneltest.QT(tensor.Float32, []int{1, 1, 3}, 0, 0)
	for _, c := range []cfg{
		{"SOFTMAX uint8", &softmaxOp{params: SoftmaxParams{Beta: 1}}, kerneltest.ActAll8(tensor.Uint8, 0.1, 0), kerneltest.QOut(tensor.Uint8, 1.0/256, 0)},
		{"SOFTMAX float", &softmaxOp{params: SoftmaxParams{Beta: 1}}, kerneltest.QT(tensor.Float32, []int{4, 16}, 0, 0), kerneltest.QOut(tensor.Float32, 0, 0)},
		{"SOFTMAX int16", &softmaxOp{params: SoftmaxParams{Beta: 1}}, in16, kerneltest.QOut(tensor.Int16, 1.0/32768, 0)},
		{"TANH int16", kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorTANH), in16, kerneltest.QOut(tensor.Int16, 1.0/32768, 0)},
		{"LEAKY_RELU int16", &leakyReluOp{params: LeakyReluParams{Alpha: 0.1}}, in16, kerneltest.QOut(tensor.Int16, 1.0/4096, 0)},
		{"PRELU float", kerneltest.ActNew(t, activationOps(), schema.BuiltinOperatorPRELU), kerneltest.QT(tensor.Float32, []int{2, 2, 2, 3}, 0, 0), kerneltest.QOut(tensor.Float32, 0, 0)},
	} {
		ins := []*tensor.Tensor{c.in}
		if c.name == "PRELU float" {
			ins = append(ins, alpha)
		}
		kerneltest.MustRun(t, c.op, 1, c.out, ins...)
		n := &kernel.Node{Inputs: ins, Outputs: []*tensor.Tensor{c.out}, Threads: 1}
		if a := testing.AllocsPerRun(10, func() { c.op.Eval(n) }); a != 0 {
			t.Errorf("%s: Eval allocates %v times", c.name, a)
		}
	}
}
