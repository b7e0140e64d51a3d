package kernel

import (
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/model/schema"
)

// TestActivateFloats works every fused activation by hand on the same
// values, in place and into another slice.
func TestActivateFloats(t *testing.T) {
	src := []float32{-7, -0.5, float32(math.Copysign(0, -1)), 0.25, 3, 9}
	for _, c := range []struct {
		act  schema.ActivationFunctionType
		want []float32
	}{
		{schema.ActivationFunctionTypeNONE, []float32{42, 42, 42, 42, 42, 42}},
		{schema.ActivationFunctionTypeRELU, []float32{0, 0, 0, 0.25, 3, 9}},
		{schema.ActivationFunctionTypeRELU_N1_TO_1, []float32{-1, -0.5, 0, 0.25, 1, 1}},
		{schema.ActivationFunctionTypeRELU6, []float32{0, 0, 0, 0.25, 3, 6}},
		{schema.ActivationFunctionTypeTANH, []float32{float32(math.Tanh(-7)), float32(math.Tanh(-0.5)), 0, float32(math.Tanh(0.25)), float32(math.Tanh(3)), float32(math.Tanh(9))}},
		{schema.ActivationFunctionTypeSIGN_BIT, []float32{1, 1, 1, 0, 0, 0}},
	} {
		dst := []float32{42, 42, 42, 42, 42, 42}
		ActivateFloats(src, dst, c.act)
		if !slices.Equal(dst, c.want) {
			t.Errorf("%v: %v, want %v", c.act, dst, c.want)
		}
		in := slices.Clone(src)
		ActivateFloats(in, in, c.act)
		if c.act != schema.ActivationFunctionTypeNONE && !slices.Equal(in, c.want) {
			t.Errorf("%v in place: %v, want %v", c.act, in, c.want)
		}
	}
}
