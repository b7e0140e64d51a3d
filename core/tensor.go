package core

import (
	"github.com/delego/delego/core/kernels"
)

// DType is a tensor element type (the schema's TensorType).
type DType = kernels.DType

// Quantization is a tensor's affine quantization, per tensor or per channel.
type Quantization = kernels.Quantization

// Tensor is one tensor of an interpreter. Its data is valid after
// AllocateTensors; Invoke writes outputs in place.
type Tensor struct {
	t     *kernels.Tensor
	index int
}

// Index is the tensor's index in the subgraph.
func (t *Tensor) Index() int { return t.index }

// Name is the tensor's name in the model.
func (t *Tensor) Name() string { return t.t.Name }

// Type is the element type.
func (t *Tensor) Type() DType { return t.t.Type }

// Shape returns a copy of the current shape.
func (t *Tensor) Shape() []int { return append([]int(nil), t.t.Shape...) }

// NumElements is the product of the shape's dimensions.
func (t *Tensor) NumElements() int { return t.t.NumElements() }

// ByteSize is the size of the tensor's data in bytes.
func (t *Tensor) ByteSize() int { return t.t.Bytes() }

// Quantization returns the quantization parameters, or nil.
func (t *Tensor) Quantization() *Quantization { return t.t.Quant }

// Data returns the tensor's bytes (little-endian, row-major). The slice aliases
// the interpreter's memory: it is valid until the next AllocateTensors.
func (t *Tensor) Data() []byte { return t.t.Data }

// CopyFrom copies b into the tensor; b must be exactly ByteSize bytes.
func (t *Tensor) CopyFrom(b []byte) error {
	if len(b) != t.ByteSize() || len(t.t.Data) != t.ByteSize() {
		return &TensorSizeError{Tensor: t.Name(), Index: t.index, Want: t.ByteSize(), Got: len(b)}
	}
	copy(t.t.Data, b)
	return nil
}

// Float32s views the data as float32 values.
func (t *Tensor) Float32s() []float32 { return t.t.Float32s() }

// Int8s views the data as int8 values.
func (t *Tensor) Int8s() []int8 { return t.t.Int8s() }

// Uint8s views the data as uint8 values.
func (t *Tensor) Uint8s() []uint8 { return t.t.Uint8s() }

// Int16s views the data as int16 values.
func (t *Tensor) Int16s() []int16 { return t.t.Int16s() }

// Int32s views the data as int32 values.
func (t *Tensor) Int32s() []int32 { return t.t.Int32s() }

// Int64s views the data as int64 values.
func (t *Tensor) Int64s() []int64 { return t.t.Int64s() }

// Dequantize returns the tensor's values as float32: quantized values mapped
// through scale and zero point (per channel when the tensor has several),
// float32 values copied, and other integer types converted.
func (t *Tensor) Dequantize() []float32 {
	k := t.t
	n := k.NumElements()
	out := make([]float32, n)
	var at func(i int) float64
	switch k.Type {
	case kernels.Float32:
		copy(out, k.Float32s())
		return out
	case kernels.Uint8:
		v := k.Uint8s()
		at = func(i int) float64 { return float64(v[i]) }
	case kernels.Int8:
		v := k.Int8s()
		at = func(i int) float64 { return float64(v[i]) }
	case kernels.Int16:
		v := k.Int16s()
		at = func(i int) float64 { return float64(v[i]) }
	case kernels.Int32:
		v := k.Int32s()
		at = func(i int) float64 { return float64(v[i]) }
	case kernels.Int64:
		v := k.Int64s()
		at = func(i int) float64 { return float64(v[i]) }
	default:
		return nil
	}
	q := k.Quant
	if q == nil || len(q.Scale) == 0 {
		for i := range out {
			out[i] = float32(at(i))
		}
		return out
	}
	// inner is the number of elements per step of the quantized axis.
	inner, axisLen := 1, 1
	if len(q.Scale) > 1 {
		axisLen = k.Shape[q.Axis]
		for _, d := range k.Shape[q.Axis+1:] {
			inner *= d
		}
	}
	for i := range out {
		c := (i / inner) % axisLen
		zp := int64(0)
		if c < len(q.ZeroPoint) {
			zp = q.ZeroPoint[c]
		}
		out[i] = float32(float64(q.Scale[c]) * (at(i) - float64(zp)))
	}
	return out
}
