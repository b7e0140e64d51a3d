package kerneltest

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// ActNew makes the kernel regs register for code, with default options.
func ActNew(t *testing.T, regs []kernel.Registration, code schema.BuiltinOperator) kernel.Op {
	t.Helper()
	reg, ok := kernel.NewRegistry(regs...).Lookup(code, "")
	if !ok {
		t.Fatalf("%s not registered", kernel.OpName(code))
	}
	op, err := reg.New(kernel.OpInfo{Version: reg.Versions.Min})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// ActAll8 is a [256] tensor holding every value of an 8-bit type (byte i).
func ActAll8(typ tensor.DType, scale float32, zp int64) *tensor.Tensor {
	t := QT(typ, []int{256}, scale, zp)
	for i := range t.Data {
		t.Data[i] = byte(i)
	}
	return t
}

// ActQ returns element i of a quantized tensor as int32.
func ActQ(t *tensor.Tensor, i int) int32 {
	switch t.Type {
	case tensor.Uint8:
		return int32(t.Data[i])
	case tensor.Int8:
		return int32(int8(t.Data[i]))
	case tensor.Int16:
		return int32(t.Int16s()[i])
	}
	panic("not quantized")
}

// ActReal is the real value of element i.
func ActReal(t *tensor.Tensor, i int) float64 {
	return float64(t.Scale()) * float64(ActQ(t, i)-t.ZeroPoint())
}

// ActQuantizeRef quantizes a real value onto t's quantization (round half
// away from zero, clamped to the type's range).
func ActQuantizeRef(t *tensor.Tensor, v float64) int32 {
	lo, hi, _ := tensor.QuantizedRange(t.Type)
	q := math.Round(v/float64(t.Scale())) + float64(t.ZeroPoint())
	return int32(min(max(q, float64(lo)), float64(hi)))
}

// ActCheckNear checks that every output element is within tol quantization
// steps of the reference f applied to the input's real values, and that at
// least minExact of them are exact.
func ActCheckNear(t *testing.T, name string, in, out *tensor.Tensor, f func(float64) float64, tol int32, minExact int) {
	t.Helper()
	exact := 0
	for i := range in.NumElements() {
		want := ActQuantizeRef(out, f(ActReal(in, i)))
		got := ActQ(out, i)
		d := got - want
		if d < 0 {
			d = -d
		}
		if d > tol {
			t.Errorf("%s: element %d (input %d): got %d, want %d", name, i, ActQ(in, i), got, want)
			return
		}
		if d == 0 {
			exact++
		}
	}
	if exact < minExact {
		t.Errorf("%s: only %d of %d results exact, want at least %d", name, exact, in.NumElements(), minExact)
	}
	t.Logf("%s: %d of %d exact", name, exact, in.NumElements())
}

// ActHexCheck compares the output bytes with a hex string.
func ActHexCheck(t *testing.T, name string, out *tensor.Tensor, wantHex string) {
	t.Helper()
	want, err := hex.DecodeString(wantHex)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Data) != string(want) {
		t.Errorf("%s:\n got  %x\n want %x", name, out.Data, want)
	}
}

func ActSetInt16(t *tensor.Tensor, v ...int16) *tensor.Tensor {
	copy(t.Int16s(), v)
	return t
}

func ActSetFloat(t *tensor.Tensor, v ...float32) *tensor.Tensor {
	copy(t.Float32s(), v)
	return t
}
