package kernels

import (
	"fmt"
	"unsafe"
)

// DType is a tensor element type. Its values equal the schema's TensorType.
type DType int8

// The tensor element types of the TFLite schema.
const (
	Float32    DType = 0
	Float16    DType = 1
	Int32      DType = 2
	Uint8      DType = 3
	Int64      DType = 4
	String     DType = 5
	Bool       DType = 6
	Int16      DType = 7
	Complex64  DType = 8
	Int8       DType = 9
	Float64    DType = 10
	Complex128 DType = 11
	Uint64     DType = 12
	Resource   DType = 13
	Variant    DType = 14
	Uint32     DType = 15
	Uint16     DType = 16
)

var dtypeNames = [...]string{"FLOAT32", "FLOAT16", "INT32", "UINT8", "INT64", "STRING", "BOOL",
	"INT16", "COMPLEX64", "INT8", "FLOAT64", "COMPLEX128", "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16"}

var dtypeSizes = [...]int{4, 2, 4, 1, 8, 0, 1, 2, 8, 1, 8, 16, 8, 0, 0, 4, 2}

// String returns the schema's name of the type, e.g. "UINT8".
func (d DType) String() string {
	if d >= 0 && int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("TensorType(%d)", int8(d))
}

// Size is the size of one element in bytes; 0 for types without a fixed
// size (STRING, RESOURCE, VARIANT) and for unknown types.
func (d DType) Size() int {
	if d >= 0 && int(d) < len(dtypeSizes) {
		return dtypeSizes[d]
	}
	return 0
}

// Quantization holds a tensor's affine quantization: real = Scale * (q - ZeroPoint).
// Per-tensor quantization has one scale and zero point; per-channel has one per
// index of dimension Axis.
type Quantization struct {
	Scale     []float32
	ZeroPoint []int64
	Axis      int
}

// PerChannel reports whether the quantization has more than one scale.
func (q *Quantization) PerChannel() bool { return q != nil && len(q.Scale) > 1 }

// Tensor is a kernel's view of a tensor: its type, shape, bytes and quantization.
// Data is little-endian, row-major, exactly NumElements()*Type.Size() bytes.
type Tensor struct {
	Name  string
	Type  DType
	Shape []int
	Data  []byte
	Quant *Quantization // nil when the tensor is not quantized

	// Const marks read-only data that came from the model file.
	Const bool
	// Variable marks state that persists across invocations (e.g. LSTM state).
	Variable bool
	// Dynamic marks a tensor whose shape is only known during Eval; its memory
	// is allocated by SetShape instead of the interpreter's memory plan.
	Dynamic bool
}

// NumElements is the product of the dimensions (1 for a scalar).
func (t *Tensor) NumElements() int { return NumElements(t.Shape) }

// NumElements is the product of the dimensions of shape (1 for a scalar).
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// Bytes is the size of the tensor's data in bytes.
func (t *Tensor) Bytes() int { return t.NumElements() * t.Type.Size() }

// Dim returns dimension i, counting from the end when i is negative.
func (t *Tensor) Dim(i int) int {
	if i < 0 {
		i += len(t.Shape)
	}
	return t.Shape[i]
}

// SetShape sets the shape of a Dynamic tensor during Eval and makes its Data
// the matching size, reusing the old memory when it is large enough.
func (t *Tensor) SetShape(shape []int) {
	t.Shape = append(t.Shape[:0:0], shape...)
	need := t.Bytes()
	if cap(t.Data) < need {
		t.Data = make([]byte, need, need+need/4)
	}
	t.Data = t.Data[:need]
}

// isQuantized reports whether t carries per-tensor affine quantization
// (TFLite's kTfLiteAffineQuantization with at least one scale).
func isQuantized(t *Tensor) bool { return t.Quant != nil && len(t.Quant.Scale) > 0 }

// Scale returns the per-tensor scale (the first one), or 0 when unquantized.
func (t *Tensor) Scale() float32 {
	if !isQuantized(t) {
		return 0
	}
	return t.Quant.Scale[0]
}

// ZeroPoint returns the per-tensor zero point (the first one), or 0.
func (t *Tensor) ZeroPoint() int32 {
	if t.Quant == nil || len(t.Quant.ZeroPoint) == 0 {
		return 0
	}
	return int32(t.Quant.ZeroPoint[0])
}

func view[T any](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Float32s views the data as float32 values (no copy).
func (t *Tensor) Float32s() []float32 { return view[float32](t.Data) }

// Float64s views the data as float64 values (no copy).
func (t *Tensor) Float64s() []float64 { return view[float64](t.Data) }

// Int8s views the data as int8 values (no copy).
func (t *Tensor) Int8s() []int8 { return view[int8](t.Data) }

// Uint8s returns the data as uint8 values (no copy).
func (t *Tensor) Uint8s() []uint8 { return t.Data }

// Int16s views the data as int16 values (no copy).
func (t *Tensor) Int16s() []int16 { return view[int16](t.Data) }

// Int32s views the data as int32 values (no copy).
func (t *Tensor) Int32s() []int32 { return view[int32](t.Data) }

// Uint32s views the data as uint32 values (no copy).
func (t *Tensor) Uint32s() []uint32 { return view[uint32](t.Data) }

// Int64s views the data as int64 values (no copy).
func (t *Tensor) Int64s() []int64 { return view[int64](t.Data) }

// Uint64s views the data as uint64 values (no copy).
func (t *Tensor) Uint64s() []uint64 { return view[uint64](t.Data) }

// Bools views the data as bool values (one byte each, no copy).
func (t *Tensor) Bools() []bool { return view[bool](t.Data) }

// NewTensor allocates a tensor of the given type and shape with zeroed,
// 8-byte aligned data. It is meant for tests and for kernels' scratch tensors.
func NewTensor(typ DType, shape ...int) *Tensor {
	t := &Tensor{Type: typ, Shape: append([]int(nil), shape...)}
	n := t.Bytes()
	words := make([]uint64, (n+7)/8)
	if n > 0 {
		t.Data = unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
	} else {
		t.Data = []byte{}
	}
	return t
}

// sized returns s with length n, reusing its memory when it is large
// enough (scratch buffers kept across Evals).
func sized[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
