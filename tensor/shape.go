package tensor

import "fmt"

// NumElements is the product of the dimensions of shape (1 for a scalar).
func NumElements(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// BroadcastShape returns the NumPy broadcast of shapes a and b (TFLite's
// CalculateShapeForBroadcast): dimensions are matched from the end, a missing
// or size-1 dimension stretches, and a 0 on either side gives 0.
func BroadcastShape(a, b []int) ([]int, error) {
	r := max(len(a), len(b))
	out := make([]int, r)
	for i := range r {
		da, db := DimFromEnd(a, i), DimFromEnd(b, i)
		if da != db && da != 1 && db != 1 {
			return nil, fmt.Errorf("shapes %v and %v are not broadcastable", a, b)
		}
		d := max(da, db)
		if da == 0 || db == 0 {
			d = 0
		}
		out[r-1-i] = d
	}
	return out, nil
}

// DimFromEnd returns dimension i of shape counted from the last one, or 1
// beyond its rank (the dimension broadcasting sees).
func DimFromEnd(shape []int, i int) int {
	if i >= len(shape) {
		return 1
	}
	return shape[len(shape)-1-i]
}

// WindowOutSize is the output size of a window op (a convolution or a
// pool) along one dimension, as TFLite's ComputeOutSize gives it: with SAME
// padding (same) every stride-th position, else (VALID) the positions where
// the dilated filter fits; 0 when the stride is 0.
func WindowOutSize(same bool, in, filter, stride, dilation int) int {
	if stride == 0 {
		return 0
	}
	if same {
		return (in + stride - 1) / stride
	}
	return (in + stride - ((filter-1)*dilation + 1)) / stride
}

// WindowPadding returns the leading padding of a window op along one
// dimension and the extra trailing offset (TFLite's
// ComputePaddingWithOffset): the trailing padding is pad+offset.
func WindowPadding(stride, dilation, in, filter, out int) (pad, offset int) {
	eff := (filter-1)*dilation + 1
	total := max((out-1)*stride+eff-in, 0)
	return total / 2, total % 2
}
