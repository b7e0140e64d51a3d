package tensor

import "math"

// QuantizedRange returns the representable range of a quantized type.
func QuantizedRange(t DType) (lo, hi int32, ok bool) {
	switch t {
	case Uint8:
		return 0, 255, true
	case Int8:
		return -128, 127, true
	case Int16:
		return -32768, 32767, true
	case Int32:
		return math.MinInt32, math.MaxInt32, true
	}
	return 0, 0, false
}

// Dequantize returns the tensor's values as float32: quantized values mapped
// through scale and zero point (per channel when the tensor has several),
// float32 values copied, and other integer types converted.
func (t *Tensor) Dequantize() []float32 {
	n := t.NumElements()
	out := make([]float32, n)
	var at func(i int) float64
	switch t.Type {
	case Float32:
		copy(out, t.Float32s())
		return out
	case Uint8:
		v := t.Uint8s()
		at = func(i int) float64 { return float64(v[i]) }
	case Int8:
		v := t.Int8s()
		at = func(i int) float64 { return float64(v[i]) }
	case Int16:
		v := t.Int16s()
		at = func(i int) float64 { return float64(v[i]) }
	case Int32:
		v := t.Int32s()
		at = func(i int) float64 { return float64(v[i]) }
	case Int64:
		v := t.Int64s()
		at = func(i int) float64 { return float64(v[i]) }
	default:
		return nil
	}
	q := t.Quant
	if q == nil || len(q.Scale) == 0 {
		for i := range out {
			out[i] = float32(at(i))
		}
		return out
	}
	// inner is the number of elements per step of the quantized axis.
	inner, axisLen := 1, 1
	if len(q.Scale) > 1 {
		axisLen = t.Shape[q.Axis]
		for _, d := range t.Shape[q.Axis+1:] {
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
