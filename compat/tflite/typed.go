package tflite

// The typed accessors view the tensor's memory: writing into a slice they
// return writes the tensor. Each is nil when the tensor's elements are of
// another type or it has no memory yet (before AllocateTensors), and each
// setter copies as many values as fit.

// Float32s views a Float32 tensor.
func (t *Tensor) Float32s() []float32 { return view(t, Float32, t.t.Float32s) }

// SetFloat32s copies v into a Float32 tensor.
func (t *Tensor) SetFloat32s(v []float32) error { return set(t, Float32, t.t.Float32s, v) }

// Float32At is the Float32 element at the indices at, one per dimension.
func (t *Tensor) Float32At(at ...int) float32 {
	shape, pos := t.t.Shape(), 0
	for i, d := range shape {
		pos = pos*d + at[i]
	}
	return t.Float32s()[pos]
}

// Int32s views an Int32 tensor.
func (t *Tensor) Int32s() []int32 { return view(t, Int32, t.t.Int32s) }

// SetInt32s copies v into an Int32 tensor.
func (t *Tensor) SetInt32s(v []int32) error { return set(t, Int32, t.t.Int32s, v) }

// UInt8s views a UInt8 tensor.
func (t *Tensor) UInt8s() []uint8 { return view(t, UInt8, t.t.Uint8s) }

// SetUint8s copies v into a UInt8 tensor.
func (t *Tensor) SetUint8s(v []uint8) error { return set(t, UInt8, t.t.Uint8s, v) }

// Int64s views an Int64 tensor.
func (t *Tensor) Int64s() []int64 { return view(t, Int64, t.t.Int64s) }

// SetInt64s copies v into an Int64 tensor.
func (t *Tensor) SetInt64s(v []int64) error { return set(t, Int64, t.t.Int64s, v) }

// Int16s views an Int16 tensor.
func (t *Tensor) Int16s() []int16 { return view(t, Int16, t.t.Int16s) }

// SetInt16s copies v into an Int16 tensor.
func (t *Tensor) SetInt16s(v []int16) error { return set(t, Int16, t.t.Int16s, v) }

// Int8s views an Int8 tensor.
func (t *Tensor) Int8s() []int8 { return view(t, Int8, t.t.Int8s) }

// SetInt8s copies v into an Int8 tensor.
func (t *Tensor) SetInt8s(v []int8) error { return set(t, Int8, t.t.Int8s, v) }

// view is the tensor's memory as []E, nil when its type is not typ or it
// has none.
func view[E any](t *Tensor, typ TensorType, elems func() []E) []E {
	if t.Type() != typ {
		return nil
	}
	if s := elems(); len(s) > 0 {
		return s
	}
	return nil
}

// set copies v into the tensor's memory, seen as []E.
func set[E any](t *Tensor, typ TensorType, elems func() []E, v []E) error {
	if t.Type() != typ {
		return ErrTypeMismatch
	}
	s := elems()
	if len(s) == 0 {
		return ErrBadTensor
	}
	copy(s, v)
	return nil
}
