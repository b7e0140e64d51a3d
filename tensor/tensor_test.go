package tensor

import "testing"

func TestQuantizationEqualAndString(t *testing.T) {
	a := &Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{3}}
	b := &Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{3}}
	var none *Quantization
	for _, c := range []struct {
		x, y *Quantization
		want bool
	}{
		{a, b, true}, {none, none, true}, {a, none, false}, {none, a, false},
		{a, &Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{4}}, false},
		{a, &Quantization{Scale: []float32{0.5}, ZeroPoint: []int64{3}, Axis: 1}, false},
	} {
		if got := c.x.Equal(c.y); got != c.want {
			t.Errorf("%v.Equal(%v) = %v", c.x, c.y, got)
		}
	}
	if a.String() != "scale [0.5] zero point [3]" || none.String() != "no quantization" {
		t.Errorf("String: %q, %q", a.String(), none.String())
	}
}
