package core

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// Tensor is one tensor of an interpreter. Its data is valid after
// AllocateTensors; Invoke writes outputs in place.
type Tensor struct {
	t     *tensor.Tensor
	index int
}

// Index is the tensor's index in the subgraph.
func (t *Tensor) Index() int { return t.index }

// Name is the tensor's name in the model.
func (t *Tensor) Name() string { return t.t.Name }

// Type is the element type.
func (t *Tensor) Type() tensor.DType { return t.t.Type }

// Shape returns a copy of the current shape.
func (t *Tensor) Shape() []int { return append([]int(nil), t.t.Shape...) }

// NumElements is the product of the shape's dimensions.
func (t *Tensor) NumElements() int { return t.t.NumElements() }

// ByteSize is the size of the tensor's data in bytes: for a STRING tensor,
// the size of its string buffer.
func (t *Tensor) ByteSize() int {
	if t.t.Type == tensor.String {
		return len(t.t.Data)
	}
	return t.t.Bytes()
}

// Quantization returns the quantization parameters, or nil.
func (t *Tensor) Quantization() *tensor.Quantization { return t.t.Quant }

// Data returns the tensor's bytes (little-endian, row-major; for a STRING
// tensor, TFLite's string buffer). The slice aliases the interpreter's
// memory: it is valid until the next AllocateTensors, or for a tensor whose
// size is only known during Invoke (a STRING tensor, above all), until the
// next Invoke.
func (t *Tensor) Data() []byte { return t.t.Data }

// CopyFrom copies b into the tensor; b must be exactly ByteSize bytes, or,
// for a STRING tensor, a string buffer (see tensor.Strings) holding one
// string per element.
func (t *Tensor) CopyFrom(b []byte) error {
	if t.t.Type == tensor.String {
		s, err := tensor.ParseStrings(bytes.Clone(b)) // b may be the tensor's own data
		if err != nil {
			return fmt.Errorf("tensor %d (%q): %w", t.index, t.Name(), err)
		}
		return t.setStrings(s.Len(), s.At)
	}
	if t.t.Const {
		return fmt.Errorf("tensor %d (%q) is a constant of the model", t.index, t.Name())
	}
	if len(b) != t.ByteSize() || len(t.t.Data) != t.ByteSize() {
		return &TensorSizeError{Tensor: t.Name(), Index: t.index, Want: t.ByteSize(), Got: len(b)}
	}
	copy(t.t.Data, b)
	return nil
}

// Strings returns a STRING tensor's strings, one per element in row-major
// order. It fails when the tensor is not STRING or holds no well-formed
// string buffer (an input not set, an output before Invoke).
func (t *Tensor) Strings() ([]string, error) {
	s, err := t.t.Strings()
	if err != nil {
		return nil, fmt.Errorf("tensor %d: %w", t.index, err)
	}
	return s.All(), nil
}

// SetStrings sets a STRING tensor's strings (an input's, usually), one per
// element of its shape in row-major order; ResizeInput changes the shape.
func (t *Tensor) SetStrings(values []string) error {
	return t.setStrings(len(values), func(i int) []byte { return []byte(values[i]) })
}

func (t *Tensor) setStrings(n int, at func(int) []byte) error {
	switch {
	case t.t.Type != tensor.String:
		return fmt.Errorf("tensor %d (%q) is %s, not STRING", t.index, t.Name(), t.t.Type)
	case t.t.Const:
		return fmt.Errorf("tensor %d (%q) is a constant of the model", t.index, t.Name())
	case n != t.NumElements():
		return fmt.Errorf("tensor %d (%q) of shape %v holds %d strings, got %d", t.index, t.Name(), t.t.Shape, t.NumElements(), n)
	}
	t.t.SetStrings(t.t.Shape, at)
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

// Dequantize returns the tensor's values as float32 (see tensor.Tensor.Dequantize).
func (t *Tensor) Dequantize() []float32 { return t.t.Dequantize() }

// denseKey names a sparse constant's dense data among a model's derived
// values.
type denseKey struct{ subgraph, tensor int }

// denseData is tensor i of subgraph sg, stored sparse in the model, expanded
// to its dense layout once per model and shared by its interpreters.
func denseData(m *model.Model, sg, i int, info model.TensorInfo, stored []byte) ([]byte, error) {
	if stored == nil {
		return nil, errors.New("it has no data")
	}
	if info.Type.Size() == 0 {
		return nil, fmt.Errorf("sparse %s tensors are not supported", info.Type)
	}
	type result struct {
		data []byte
		err  error
	}
	r := m.Derived(denseKey{sg, i}, func() any {
		data, err := info.Sparsity.Densify(info.Shape, info.Type.Size(), stored)
		return result{data, err}
	}).(result)
	return r.data, r.err
}
