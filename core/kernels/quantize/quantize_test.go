package quantize

import (
	"errors"
	"math"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func TestQuantizeRegistrations(t *testing.T) {
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorQUANTIZE:   {Min: 1, Max: 3},
		schema.BuiltinOperatorDEQUANTIZE: {Min: 1, Max: 5},
		schema.BuiltinOperatorFAKE_QUANT: {Min: 1, Max: 2},
		schema.BuiltinOperatorCUSTOM:     {Min: 1, Max: 1}, // NumericVerify
	}
	kerneltest.CheckRegistrations(t, Ops(), want)
}

func TestQuantizeFloat(t *testing.T) {
	inf := float32(math.Inf(1))
	xs := []float32{0, 0.49, 0.5, -0.5, 1.5, -1.5, 2.5, 126.6, -300, 1e10, inf, float32(math.NaN())}
	in := kerneltest.ActSetFloat(kerneltest.QT(tensor.Float32, []int{len(xs)}, 0, 0), xs...)
	// round(x/scale) + zp, halves away from zero, clamped. Quotients out of
	// the int32 range (and NaN) become math.MinInt32 before the zero point
	// is added, as x86-64's conversion gives them to TFLite: +Inf and 1e10
	// saturate low, unless a negative zero point wraps the sum around.
	cases := []struct {
		typ   tensor.DType
		scale float32
		zp    int64
		want  []int32
	}{
		{tensor.Uint8, 1, 10, []int32{10, 10, 11, 9, 12, 8, 13, 137, 0, 0, 0, 0}},
		{tensor.Int8, 0.5, -1, []int32{-1, 0, 0, -2, 2, -4, 4, 127, -128, 127, 127, 127}},
		{tensor.Int16, 0.25, 0, []int32{0, 2, 2, -2, 6, -6, 10, 506, -1200, -32768, -32768, -32768}},
	}
	for _, c := range cases {
		out := kerneltest.QOut(c.typ, c.scale, c.zp)
		kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), 1, out, in)
		for i, w := range c.want {
			if got := kerneltest.ActQ(out, i); got != w {
				t.Errorf("QUANTIZE %s(%g) = %d, want %d", c.typ, xs[i], got, w)
			}
		}
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), kerneltest.QOut(tensor.Int16, 0.1, 3), in); err == nil {
		t.Error("QUANTIZE to int16 with zero point 3 accepted")
	}
	pc := kerneltest.QOut(tensor.Int8, 0.1, 0)
	pc.Quant = &tensor.Quantization{Scale: []float32{0.1, 0.2}, ZeroPoint: []int64{0, 0}}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), pc, in); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("QUANTIZE per-channel output: %v, want unsupported", err)
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), kerneltest.QOut(tensor.Float32, 0.1, 0), in); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("QUANTIZE to float: %v, want unsupported", err)
	}
}

func TestQuantizeRequantize(t *testing.T) {
	// The golden models' ends: uint8 -> int8 and int8 -> uint8 with the same
	// scale move every value by 128.
	in, out := kerneltest.ActAll8(tensor.Uint8, 0.00784313772, 127), kerneltest.QOut(tensor.Int8, 0.00784313772, -1)
	kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), 1, out, in)
	for i := range 256 {
		if got := kerneltest.ActQ(out, i); got != int32(i)-128 {
			t.Fatalf("uint8->int8 %d = %d, want %d", i, got, i-128)
		}
	}
	in, out = kerneltest.ActAll8(tensor.Int8, 1.0/256, -128), kerneltest.QOut(tensor.Uint8, 1.0/256, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), 1, out, in)
	for i := range 256 {
		if got := kerneltest.ActQ(out, i); got != kerneltest.ActQ(in, i)+128 {
			t.Fatalf("int8->uint8 %d = %d, want %d", kerneltest.ActQ(in, i), got, kerneltest.ActQ(in, i)+128)
		}
	}
	// Other scales: within one step of the float reference, exact when the
	// ratio is a power of two and no rounding happens. TFLite rounds twice
	// (in the high multiply and in the right shift), which puts some values
	// one step off (uint8->uint8: 0.02/0.07 has a right shift of one).
	id := func(x float64) float64 { return x }
	for _, c := range []struct {
		in, out       tensor.DType
		inS, outS     float32
		inZP, outZP   int64
		tol, minExact int32
	}{
		{tensor.Int8, tensor.Int8, 0.1, 0.05, 3, -4, 0, 256},
		{tensor.Uint8, tensor.Uint8, 0.02, 0.07, 128, 100, 1, 175},
		{tensor.Int8, tensor.Uint8, 0.3, 0.011, -7, 13, 1, 230},
		{tensor.Uint8, tensor.Int8, 0.004, 0.05, 255, 0, 1, 230},
	} {
		in, out := kerneltest.ActAll8(c.in, c.inS, c.inZP), kerneltest.QOut(c.out, c.outS, c.outZP)
		kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), 1, out, in)
		kerneltest.ActCheckNear(t, "QUANTIZE "+c.in.String()+"->"+c.out.String(), in, out, id, c.tol, int(c.minExact))
	}
	in16 := kerneltest.ActSetInt16(kerneltest.QT(tensor.Int16, []int{6}, 0.001, 0), -32768, -300, -1, 0, 299, 32767)
	out = kerneltest.QOut(tensor.Int8, 0.02, 5)
	kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), 1, out, in16)
	kerneltest.ActCheckNear(t, "QUANTIZE int16->int8", in16, out, id, 0, 6)
	out = kerneltest.QOut(tensor.Int16, 0.0005, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), 1, out, in16)
	kerneltest.ActCheckNear(t, "QUANTIZE int16->int16", in16, out, id, 0, 6)
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), kerneltest.QOut(tensor.Int8, 0.1, 0), kerneltest.QT(tensor.Int16, []int{2}, 0.1, 4)); err == nil {
		t.Error("QUANTIZE from int16 with zero point 4 accepted")
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), kerneltest.QOut(tensor.Int16, 0.1, 0), kerneltest.QT(tensor.Uint8, []int{2}, 0.1, 4)); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("QUANTIZE uint8->int16: %v, want unsupported", err)
	}
}

func TestDequantize(t *testing.T) {
	for _, c := range []struct {
		typ   tensor.DType
		scale float32
		zp    int64
	}{{tensor.Uint8, 0.5, 3}, {tensor.Int8, 0.1, -7}, {tensor.Int16, 0.00031, 0}} {
		in := kerneltest.QT(c.typ, []int{2, 3}, c.scale, c.zp)
		for i := range in.Data {
			in.Data[i] = byte(i*71 + 5)
		}
		out := kerneltest.QOut(tensor.Float32, 0, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), 1, out, in)
		for i := range in.NumElements() {
			// scale*(q-zp) in double precision, rounded once.
			want := float32(float64(c.scale) * float64(kerneltest.ActQ(in, i)-int32(c.zp)))
			if got := out.Float32s()[i]; got != want {
				t.Errorf("DEQUANTIZE %s [%d] = %g, want %g", c.typ, i, got, want)
			}
		}
	}
	// Per-channel along each axis of a [2,3,4] tensor.
	shape := []int{2, 3, 4}
	for axis := range 3 {
		in := kerneltest.QT(tensor.Int8, shape, 0, 0)
		q := &tensor.Quantization{Axis: axis}
		for c := range shape[axis] {
			q.Scale = append(q.Scale, 0.25*float32(c+1))
			q.ZeroPoint = append(q.ZeroPoint, int64(c-1))
		}
		in.Quant = q
		for i := range in.Data {
			in.Data[i] = byte(int8(i*13 - 100))
		}
		out := kerneltest.QOut(tensor.Float32, 0, 0)
		kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), 1, out, in)
		for i := range 24 {
			idx := []int{i / 12, i / 4 % 3, i % 4}
			c := idx[axis]
			want := 0.25 * float64(c+1) * float64(kerneltest.ActQ(in, i)-int32(c-1))
			if got := out.Float32s()[i]; float64(got) != want {
				t.Errorf("per-channel axis %d [%d] = %g, want %g", axis, i, got, want)
			}
		}
	}
	// Float16.
	halves := []uint16{0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x8000, 0x7c00, 0xfc00, 0x3555}
	want := []float32{1, -2, 65504, 1.0 / (1 << 24), 1023.0 / (1 << 24), float32(math.Copysign(0, -1)),
		float32(math.Inf(1)), float32(math.Inf(-1)), 0.333251953125}
	in := kerneltest.QT(tensor.Float16, []int{len(halves)}, 0, 0)
	copy(tensor.View[uint16](in.Data), halves)
	out := kerneltest.QOut(tensor.Float32, 0, 0)
	kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), 1, out, in)
	for i, w := range want {
		if got := out.Float32s()[i]; math.Float32bits(got) != math.Float32bits(w) {
			t.Errorf("DEQUANTIZE float16 %#04x = %g, want %g", halves[i], got, w)
		}
	}
	nan := kerneltest.QT(tensor.Float16, []int{1}, 0, 0)
	copy(tensor.View[uint16](nan.Data), []uint16{0x7e00})
	kerneltest.MustRun(t, kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), 1, out, nan)
	if !math.IsNaN(float64(out.Float32s()[0])) {
		t.Errorf("float16 NaN gave %g", out.Float32s()[0])
	}
	// Errors.
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), kerneltest.QOut(tensor.Float32, 0, 0), kerneltest.QT(tensor.Int16, []int{2}, 0.1, 1)); err == nil {
		t.Error("DEQUANTIZE int16 with zero point 1 accepted")
	}
	bad := kerneltest.QT(tensor.Int8, []int{2, 3}, 0, 0)
	bad.Quant = &tensor.Quantization{Scale: []float32{1, 2}, ZeroPoint: []int64{0, 0}, Axis: 1}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), kerneltest.QOut(tensor.Float32, 0, 0), bad); err == nil {
		t.Error("DEQUANTIZE with 2 scales for a dimension of 3 accepted")
	}
	if err := kerneltest.PrepareErr(kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), kerneltest.QOut(tensor.Float32, 0, 0), kerneltest.QT(tensor.Float32, []int{2}, 0, 0)); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("DEQUANTIZE float32: %v, want unsupported", err)
	}
}

func TestQuantizeEvalAllocs(t *testing.T) {
	for _, c := range []struct {
		name    string
		op      kernel.Op
		in, out *tensor.Tensor
	}{
		{"QUANTIZE float", kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorQUANTIZE), kerneltest.QT(tensor.Float32, []int{64}, 0, 0), kerneltest.QOut(tensor.Int8, 0.1, 0)},
		{"DEQUANTIZE int8", kerneltest.ActNew(t, Ops(), schema.BuiltinOperatorDEQUANTIZE), kerneltest.ActAll8(tensor.Int8, 0.1, 3), kerneltest.QOut(tensor.Float32, 0, 0)},
	} {
		kerneltest.MustRun(t, c.op, 1, c.out, c.in)
		n := &kernel.Node{Inputs: []*tensor.Tensor{c.in}, Outputs: []*tensor.Tensor{c.out}, Threads: 1}
		if a := testing.AllocsPerRun(10, func() { c.op.Eval(n) }); a != 0 {
			t.Errorf("%s: Eval allocates %v times", c.name, a)
		}
	}
}
