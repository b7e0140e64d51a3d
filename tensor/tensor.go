// Package tensor is delego's tensor vocabulary, shared by the interpreter,
// its kernels, the delegate contract and every plugin: element types, the
// tensor (shape, type, affine quantization per tensor or per channel, raw
// little-endian bytes and typed views of them), op version ranges and the
// shape rules (element counts, broadcasting). It imports nothing of delego's.
package tensor

import (
	"fmt"
	"slices"
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

// TypeNamed returns the type whose schema name is name (e.g. "UINT8").
func TypeNamed(name string) (DType, bool) {
	i := slices.Index(dtypeNames[:], name)
	return DType(i), i >= 0
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

// Equal reports whether q and o quantize alike: both nil, or the same
// scales, zero points and axis.
func (q *Quantization) Equal(o *Quantization) bool {
	if q == nil || o == nil {
		return q == o
	}
	return slices.Equal(q.Scale, o.Scale) && slices.Equal(q.ZeroPoint, o.ZeroPoint) && q.Axis == o.Axis
}

// String says the quantization in words: "scale [0.5] zero point [3]", or
// "no quantization" for nil.
func (q *Quantization) String() string {
	if q == nil {
		return "no quantization"
	}
	return fmt.Sprintf("scale %v zero point %v", q.Scale, q.ZeroPoint)
}

// Tensor is a kernel's view of a tensor: its type, shape, bytes and quantization.
// Data is little-endian, row-major, exactly NumElements()*Type.Size() bytes;
// a STRING tensor's Data is TFLite's string buffer instead (see Strings).
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
	// Sparse marks constant data the model stored sparse: Data holds it
	// expanded to the dense layout.
	Sparse bool
	// Dynamic marks a tensor whose shape is only known during Eval; its memory
	// is allocated by SetShape instead of the interpreter's memory plan.
	Dynamic bool
}

// NumElements is the product of the dimensions (1 for a scalar).
func (t *Tensor) NumElements() int { return NumElements(t.Shape) }

// Bytes is the size of the tensor's data in bytes; 0 for a STRING tensor,
// whose size follows from its strings (len(Data)).
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

// Quantized reports whether t carries affine quantization (TFLite's
// kTfLiteAffineQuantization with at least one scale).
func (t *Tensor) Quantized() bool { return t.Quant != nil && len(t.Quant.Scale) > 0 }

// Scale returns the per-tensor scale (the first one), or 0 when unquantized.
func (t *Tensor) Scale() float32 {
	if !t.Quantized() {
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

// View reinterprets b as a slice of T (no copy); b must be aligned for T. Elements
// past the last whole one are dropped.
func View[T any](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// Float32s views the data as float32 values (no copy).
func (t *Tensor) Float32s() []float32 { return View[float32](t.Data) }

// Float64s views the data as float64 values (no copy).
func (t *Tensor) Float64s() []float64 { return View[float64](t.Data) }

// Int8s views the data as int8 values (no copy).
func (t *Tensor) Int8s() []int8 { return View[int8](t.Data) }

// Uint8s returns the data as uint8 values (no copy).
func (t *Tensor) Uint8s() []uint8 { return t.Data }

// Int16s views the data as int16 values (no copy).
func (t *Tensor) Int16s() []int16 { return View[int16](t.Data) }

// Int32s views the data as int32 values (no copy).
func (t *Tensor) Int32s() []int32 { return View[int32](t.Data) }

// Uint32s views the data as uint32 values (no copy).
func (t *Tensor) Uint32s() []uint32 { return View[uint32](t.Data) }

// Int64s views the data as int64 values (no copy).
func (t *Tensor) Int64s() []int64 { return View[int64](t.Data) }

// Uint64s views the data as uint64 values (no copy).
func (t *Tensor) Uint64s() []uint64 { return View[uint64](t.Data) }

// Bools views the data as bool values (one byte each, no copy).
func (t *Tensor) Bools() []bool { return View[bool](t.Data) }

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
