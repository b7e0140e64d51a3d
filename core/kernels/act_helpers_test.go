package kernels

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// actNew makes the kernel regs register for code, with default options.
func actNew(t *testing.T, regs []Registration, code schema.BuiltinOperator) Op {
	t.Helper()
	reg, ok := NewRegistry(regs...).Lookup(code, "")
	if !ok {
		t.Fatalf("%s not registered", OpName(code))
	}
	op, err := reg.New(OpInfo{Version: reg.Versions.Min})
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// actAll8 is a [256] tensor holding every value of an 8-bit type (byte i).
func actAll8(typ tensor.DType, scale float32, zp int64) *tensor.Tensor {
	t := qT(typ, []int{256}, scale, zp)
	for i := range t.Data {
		t.Data[i] = byte(i)
	}
	return t
}

// actQ returns element i of a quantized tensor as int32.
func actQ(t *tensor.Tensor, i int) int32 {
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

// actReal is the real value of element i.
func actReal(t *tensor.Tensor, i int) float64 {
	return float64(t.Scale()) * float64(actQ(t, i)-t.ZeroPoint())
}

// actQuantizeRef quantizes a real value onto t's quantization (round half
// away from zero, clamped to the type's range).
func actQuantizeRef(t *tensor.Tensor, v float64) int32 {
	lo, hi, _ := tensor.QuantizedRange(t.Type)
	q := math.Round(v/float64(t.Scale())) + float64(t.ZeroPoint())
	return int32(min(max(q, float64(lo)), float64(hi)))
}

// actCheckNear checks that every output element is within tol quantization
// steps of the reference f applied to the input's real values, and that at
// least minExact of them are exact.
func actCheckNear(t *testing.T, name string, in, out *tensor.Tensor, f func(float64) float64, tol int32, minExact int) {
	t.Helper()
	exact := 0
	for i := range in.NumElements() {
		want := actQuantizeRef(out, f(actReal(in, i)))
		got := actQ(out, i)
		d := got - want
		if d < 0 {
			d = -d
		}
		if d > tol {
			t.Errorf("%s: element %d (input %d): got %d, want %d", name, i, actQ(in, i), got, want)
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

// actHexCheck compares the output bytes with a hex string.
func actHexCheck(t *testing.T, name string, out *tensor.Tensor, wantHex string) {
	t.Helper()
	want, err := hex.DecodeString(wantHex)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Data) != string(want) {
		t.Errorf("%s:\n got  %x\n want %x", name, out.Data, want)
	}
}

func actSetInt16(t *tensor.Tensor, v ...int16) *tensor.Tensor {
	copy(t.Int16s(), v)
	return t
}

func actSetFloat(t *tensor.Tensor, v ...float32) *tensor.Tensor {
	copy(t.Float32s(), v)
	return t
}
