package quantize

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/internal/flexbuf"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// numericVerifyOptions is the FlexBuffers map {log_if_failed: logIfFailed,
// tolerance: tolerance}, every value and offset 8 bytes wide; nil gives an
// operator without custom options.
func numericVerifyOptions(tolerance float64, logIfFailed bool) []byte {
	var buf []byte
	put := func(v uint64) { buf = binary.LittleEndian.AppendUint64(buf, v) }
	buf = append(buf, "log_if_failed\x00tolerance\x00"...) // keys at 0 and 14
	buf = append(buf, make([]byte, 24-len(buf))...)
	put(2) // the keys vector: its length, then offsets back to the keys
	put(uint64(32 - 0))
	put(uint64(40 - 14))
	put(48 - 32) // the map: its keys vector, their width, its length
	put(8)
	put(2)
	b := uint64(0)
	if logIfFailed {
		b = 1
	}
	put(b) // the values, at 72
	put(math.Float64bits(tolerance))
	buf = append(buf, byte(flexbuf.Bool)<<2|3, byte(flexbuf.Float)<<2|3)
	put(uint64(len(buf) - 72))
	return append(buf, byte(flexbuf.Map)<<2|3, 8)
}

// newNumericVerify makes the kernel from an operator carrying opts as its
// custom options (nil: none).
func newNumericVerify(opts []byte) (kernel.Op, error) {
	b := flatbuffers.NewBuilder(64)
	var custom flatbuffers.UOffsetT
	if opts != nil {
		custom = b.CreateByteVector(opts)
	}
	schema.OperatorStart(b)
	if opts != nil {
		schema.OperatorAddCustomOptions(b, custom)
	}
	b.Finish(schema.OperatorEnd(b))
	return newNumericVerifyOp(kernel.OpInfo{Version: 1, Operator: schema.GetRootAsOperator(b.FinishedBytes(), 0)})
}

func runNumericVerify(t *testing.T, opts []byte, in, ref *tensor.Tensor) (*tensor.Tensor, error) {
	t.Helper()
	op, err := newNumericVerify(opts)
	if err != nil {
		t.Fatal(err)
	}
	out := kerneltest.OutT(tensor.Float32)
	return out, kerneltest.Run1(op, out, in, ref)
}

// TestNumericVerifyDifferences: INT8 with scale 0.5 and zero point 3
// dequantizes 3, 4, 5, -128 to 0, 0.5, 1, -65.5; the output is that minus
// the reference. A tolerance under 0.1, or log_if_failed off, never fails.
func TestNumericVerifyDifferences(t *testing.T) {
	in := kerneltest.I8T([]int{2, 2}, 0.5, 3, 3, 4, 5, -128)
	ref := kerneltest.F32T([]int{2, 2}, 0.25, 0.5, -1, -60)
	want := []float32{-0.25, 0, 2, -5.5}
	for _, opts := range [][]byte{numericVerifyOptions(0.0999, true), numericVerifyOptions(5, false)} {
		out, err := runNumericVerify(t, opts, in, ref)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Shape, []int{2, 2}) || !slices.Equal(out.Float32s(), want) {
			t.Errorf("shape %v, values %v; want [2 2] %v", out.Shape, out.Float32s(), want)
		}
	}
}

// TestNumericVerifyTolerance: with log_if_failed and tolerance 0.5 the
// largest difference allowed is 0.5*0.5 = 0.25 (a difference of exactly
// 0.25 passes); 0.1 (as float32, just above the double 0.1) checks too.
func TestNumericVerifyTolerance(t *testing.T) {
	in := kerneltest.I8T([]int{4}, 0.5, 3, 3, 4, 5, -128) // 0, 0.5, 1, -65.5
	if _, err := runNumericVerify(t, numericVerifyOptions(0.5, true), in, kerneltest.F32T([]int{4}, 0.25, 0.25, 1.25, -65.25)); err != nil {
		t.Errorf("differences of 0.25: %v", err)
	}
	_, err := runNumericVerify(t, numericVerifyOptions(0.5, true), in, kerneltest.F32T([]int{4}, 0, 0.5, 1.3125, -65.5))
	if err == nil || !strings.Contains(err.Error(), "NumericVerify: element 2, INT8 5 dequantized to 1, differs from the reference 1.3125 by more than 0.25") {
		t.Errorf("a difference of 0.3125: %v", err)
	}
	// Tolerance 0.1: 0.05 allowed, 0.0625 is not.
	if _, err := runNumericVerify(t, numericVerifyOptions(0.1, true), in, kerneltest.F32T([]int{4}, 0.0625, 0.5, 1, -65.5)); err == nil {
		t.Error("tolerance 0.1: a difference of 0.0625 passes")
	}
	// NaN compares false and passes; an infinity fails.
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	if _, err := runNumericVerify(t, numericVerifyOptions(1, true), in, kerneltest.F32T([]int{4}, nan, 0.5, 1, -65.5)); err != nil {
		t.Errorf("NaN reference: %v", err)
	}
	if _, err := runNumericVerify(t, numericVerifyOptions(1, true), in, kerneltest.F32T([]int{4}, 0, inf, 1, -65.5)); err == nil {
		t.Error("infinite reference passes")
	}
}

// TestNumericVerifyInt16ZeroPoint: INT16 with scale 0.25 and zero point -7
// (which DEQUANTIZE refuses): -32768, 0, 32767 are -8190.25, 1.75, 8193.5.
func TestNumericVerifyInt16ZeroPoint(t *testing.T) {
	in := kerneltest.WithQ(kerneltest.TensorOf(tensor.Int16, []int{3}, int16(-32768), 0, 32767), 0.25, -7)
	out, err := runNumericVerify(t, numericVerifyOptions(0.5, false), in, kerneltest.F32T([]int{3}, 0, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{-8190.25, 1.75, 8193.5}; !slices.Equal(out.Float32s(), want) {
		t.Errorf("got %v, want %v", out.Float32s(), want)
	}
}

// TestNumericVerifyPerChannel: INT8 with scales 0.5 and 0.25 and zero
// points 0 and 1 along axis 0 dequantizes per channel, but TFLite's legacy
// scale of a per-channel tensor is 0, so any difference fails the check.
func TestNumericVerifyPerChannel(t *testing.T) {
	in := kerneltest.TensorOf(tensor.Int8, []int{2, 3}, int8(1), 2, 3, -4, -5, -6)
	in.Quant = &tensor.Quantization{Scale: []float32{0.5, 0.25}, ZeroPoint: []int64{0, 1}, Axis: 0}
	zeros := kerneltest.F32T([]int{2, 3}, 0, 0, 0, 0, 0, 0)
	out, err := runNumericVerify(t, numericVerifyOptions(0.5, false), in, zeros)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0.5, 1, 1.5, -1.25, -1.5, -1.75}
	if !slices.Equal(out.Float32s(), want) {
		t.Errorf("got %v, want %v", out.Float32s(), want)
	}
	if _, err := runNumericVerify(t, numericVerifyOptions(0.5, true), in, kerneltest.F32T([]int{2, 3}, want...)); err != nil {
		t.Errorf("exact reference: %v", err)
	}
	if _, err := runNumericVerify(t, numericVerifyOptions(0.5, true), in, zeros); err == nil {
		t.Error("per-channel input with tolerance in units of scale 0: passes")
	}
}

// TestNumericVerifyRefuses: what TFLite refuses, and what delego refuses
// where TFLite would read out of bounds.
func TestNumericVerifyRefuses(t *testing.T) {
	if _, err := newNumericVerify(nil); err == nil || !strings.HasPrefix(err.Error(), "NumericVerify: no custom options") {
		t.Errorf("no options: %v", err)
	}
	if _, err := newNumericVerify([]byte{0x07, 0x04, 0x01}); err == nil || !strings.HasPrefix(err.Error(), "NumericVerify options") {
		t.Errorf("options not a map: %v", err)
	}
	opts := numericVerifyOptions(0.5, true)
	in := kerneltest.I8T([]int{4}, 0.5, 3, 3, 4, 5, 6)
	ref := kerneltest.F32T([]int{4}, 0, 0, 0, 0)
	pc := kerneltest.TensorOf(tensor.Int16, []int{2}, int16(1), 2)
	pc.Quant = &tensor.Quantization{Scale: []float32{0.5, 0.25}, ZeroPoint: []int64{0, 0}}
	for name, c := range map[string]struct {
		in, ref *tensor.Tensor
		out     tensor.DType
		want    string
	}{
		"float input":       {kerneltest.F32T([]int{4}, 0, 0, 0, 0), ref, tensor.Float32, "NumericVerify: input type FLOAT32"},
		"int8 reference":    {in, in, tensor.Float32, "NumericVerify: reference (input 1) type INT8"},
		"int8 output":       {in, ref, tensor.Int8, "NumericVerify: output type must be FLOAT32, got INT8"},
		"short reference":   {in, kerneltest.F32T([]int{3}, 0, 0, 0), tensor.Float32, "NumericVerify: the reference has 3 elements, fewer than the input's 4"},
		"per-channel int16": {pc, kerneltest.F32T([]int{2}, 0, 0), tensor.Float32, "NumericVerify: per-channel input of type INT16"},
	} {
		op, err := newNumericVerify(opts)
		if err != nil {
			t.Fatal(err)
		}
		err = kerneltest.PrepareErr(op, kerneltest.OutT(c.out), c.in, c.ref)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
}
