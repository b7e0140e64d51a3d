package tflite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"unsafe"

	"github.com/delego/delego/core"
	"github.com/delego/delego/tensor"
)

// The errors of the typed setters.
var (
	// ErrTypeMismatch: the tensor's elements are of another type.
	ErrTypeMismatch = errors.New("type mismatch")
	// ErrBadTensor: the tensor has no memory (before AllocateTensors).
	ErrBadTensor = errors.New("bad tensor")
)

// TensorType is a tensor's element type, with TfLiteType's values.
type TensorType int

// The element types go-tflite names. Other types keep TfLiteType's number
// (Float16 is 10, Float64 11, ...) and print as TensorType(n).
const (
	NoType    TensorType = 0
	Float32   TensorType = 1
	Int32     TensorType = 2
	UInt8     TensorType = 3
	Int64     TensorType = 4
	String    TensorType = 5
	Bool      TensorType = 6
	Int16     TensorType = 7
	Complex64 TensorType = 8
	Int8      TensorType = 9
)

var typeNames = [...]string{"NoType", "Float32", "Int32", "UInt8", "Int64", "String", "Bool", "Int16", "Complex64", "Int8"}

// String names the type as go-tflite does.
func (t TensorType) String() string {
	if t >= 0 && int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("TensorType(%d)", int(t))
}

// tfliteTypes maps the schema's types (delego's DType) to TfLiteType.
var tfliteTypes = map[tensor.DType]TensorType{
	tensor.Float32: Float32, tensor.Float16: 10, tensor.Int32: Int32, tensor.Uint8: UInt8,
	tensor.Int64: Int64, tensor.String: String, tensor.Bool: Bool, tensor.Int16: Int16,
	tensor.Complex64: Complex64, tensor.Int8: Int8, tensor.Float64: 11, tensor.Complex128: 12,
	tensor.Uint64: 13, tensor.Uint32: 16,
}

// QuantizationParams are a tensor's per-tensor affine quantization:
// real = Scale * (q - ZeroPoint). Both are 0 for a tensor that is not
// quantized, or quantized per channel, as in TensorFlow Lite.
type QuantizationParams struct {
	Scale     float64
	ZeroPoint int
}

// Tensor is one of an interpreter's input or output tensors.
type Tensor struct {
	t      *core.Tensor
	report func(string) // the interpreter's error reporter
}

// wrap is t of an interpreter whose error reporter is report; nil for a
// nil t.
func wrap(t *core.Tensor, report func(string)) *Tensor {
	if t == nil {
		return nil
	}
	return &Tensor{t: t, report: report}
}

// Type is the element type.
func (t *Tensor) Type() TensorType { return tfliteTypes[t.t.Type()] }

// NumDims is the number of dimensions.
func (t *Tensor) NumDims() int { return len(t.t.Shape()) }

// Dim is the size of dimension index; it panics when there is no such
// dimension.
func (t *Tensor) Dim(index int) int { return t.t.Shape()[index] }

// Shape is the tensor's shape (a copy).
func (t *Tensor) Shape() []int { return t.t.Shape() }

// ByteSize is the size of the tensor's data in bytes.
func (t *Tensor) ByteSize() uint { return uint(t.t.ByteSize()) }

// Data points at the tensor's first byte, nil before AllocateTensors.
// Typed accessors (Float32s, UInt8s, ...) and CopyFromBuffer are the safe
// way in.
func (t *Tensor) Data() unsafe.Pointer { return unsafe.Pointer(unsafe.SliceData(t.t.Data())) }

// Name is the tensor's name in the model.
func (t *Tensor) Name() string { return t.t.Name() }

// String is the tensor's name.
func (t *Tensor) String() string { return t.Name() }

// QuantizationParams returns the tensor's per-tensor quantization.
func (t *Tensor) QuantizationParams() QuantizationParams {
	q := t.t.Quantization()
	if q == nil || len(q.Scale) != 1 {
		return QuantizationParams{}
	}
	var zp int
	if len(q.ZeroPoint) > 0 {
		zp = int(q.ZeroPoint[0])
	}
	return QuantizationParams{Scale: float64(q.Scale[0]), ZeroPoint: zp}
}

// CopyFromBuffer copies the tensor's ByteSize bytes from b, as go-tflite
// does: b is a slice of numbers (or of arrays of them), which must hold at
// least that many bytes, or a pointer, to such a number or array (as
// &buf[0]) or an unsafe.Pointer, from whose address the ByteSize bytes are
// read. A pointer is go-tflite's contract: the caller guarantees that
// ByteSize bytes lie there, and nothing can check it. Anything else, and a
// short slice, is Error, and the error reporter says why.
func (t *Tensor) CopyFromBuffer(b interface{}) Status {
	return t.copyBuffer("CopyFromBuffer", b, func(data, buf []byte) { copy(data, buf) })
}

// CopyToBuffer copies the tensor's ByteSize bytes into b, which it takes
// as CopyFromBuffer does: a slice that holds them, or a pointer to memory
// the caller guarantees holds them.
func (t *Tensor) CopyToBuffer(b interface{}) Status {
	return t.copyBuffer("CopyToBuffer", b, func(data, buf []byte) { copy(buf, data) })
}

// copyBuffer does the copy of the method called what between the
// tensor's data and b's memory.
func (t *Tensor) copyBuffer(what string, b interface{}, do func(data, buf []byte)) Status {
	data := t.t.Data()
	buf, err := bufferOf(b, len(data))
	if err != nil {
		return status(fmt.Errorf("%s: tensor %q: %w", what, t.Name(), err), t.report)
	}
	do(data, buf)
	return OK
}

// bufferOf is the n bytes of memory b gives: a slice of plain numbers that
// holds them, or the n bytes at the address a pointer to plain numbers (or
// an unsafe.Pointer) holds.
func bufferOf(b interface{}, n int) ([]byte, error) {
	v := reflect.ValueOf(b)
	switch {
	case v.Kind() == reflect.Slice && plain(v.Type().Elem()):
		if size := v.Len() * int(v.Type().Elem().Size()); size < n {
			return nil, fmt.Errorf("it holds %d bytes, the %s only %d (%d elements)", n, v.Type(), size, v.Len())
		}
		return unsafe.Slice((*byte)(v.UnsafePointer()), n), nil
	case v.Kind() == reflect.Pointer && plain(v.Type().Elem()), v.Kind() == reflect.UnsafePointer:
		if v.IsNil() {
			return nil, fmt.Errorf("the %s is nil", v.Type())
		}
		return unsafe.Slice((*byte)(v.UnsafePointer()), n), nil
	}
	return nil, fmt.Errorf("a %T is not a buffer: want a slice of numbers, or a pointer to the first of %d bytes", b, n)
}

// plain says whether t's memory is numbers only (no pointers, no padding
// TensorFlow Lite would not have).
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	case reflect.Array:
		return plain(t.Elem())
	}
	return false
}

// GetString returns string index of a string tensor (TensorFlow Lite's
// layout: a count, offsets, then the bytes); "" when there is none.
func (t *Tensor) GetString(index int) string {
	data := t.t.Data()
	if t.Type() != String || len(data) < 4 || index < 0 {
		return ""
	}
	count := int(binary.LittleEndian.Uint32(data))
	if index >= count || len(data) < 4*(index+3) {
		return ""
	}
	from := binary.LittleEndian.Uint32(data[4*(index+1):])
	to := binary.LittleEndian.Uint32(data[4*(index+2):])
	if from > to || int(to) > len(data) {
		return ""
	}
	return string(data[from:to])
}
