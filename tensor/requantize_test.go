package tensor_test

import (
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
)

// TestRequantize8 holds the table to TFLite's arithmetic as delego's
// kernels carry it (kernel.QuantizeMultiplier and
// MultiplyByQuantizedMultiplier, which QUANTIZE uses), on every value of
// quantizations that scale up, down and alike, BodyPix's among them.
func TestRequantize8(t *testing.T) {
	cases := []struct {
		in, out           tensor.DType
		inScale, outScale float32
		inZP, outZP       int32
	}{
		{tensor.Uint8, tensor.Uint8, 0.0802, 0.0873, 77, 71}, // BodyPix's float_part_heatmaps
		{tensor.Uint8, tensor.Uint8, 0.0873, 0.0802, 71, 77},
		{tensor.Int8, tensor.Int8, 0.5, 0.001, -3, 10},
		{tensor.Uint8, tensor.Int8, 0.0078125, 0.0078125, 128, 0},
		{tensor.Int8, tensor.Uint8, 3e-5, 0.2, 0, 255},
		{tensor.Uint8, tensor.Uint8, 1, 1, 0, 0},
	}
	for _, c := range cases {
		lut, err := tensor.Requantize8(c.in, c.inScale, c.inZP, c.out, c.outScale, c.outZP)
		if err != nil {
			t.Fatal(err)
		}
		m, shift := kernel.QuantizeMultiplier(float64(c.inScale) / float64(c.outScale))
		lo, hi, _ := tensor.QuantizedRange(c.out)
		for raw := range 256 {
			v := int32(raw)
			if c.in == tensor.Int8 {
				v = int32(int8(raw))
			}
			want := byte(kernel.Clamp(kernel.MultiplyByQuantizedMultiplier(v-c.inZP, m, shift)+c.outZP, lo, hi))
			if lut[raw] != want {
				t.Fatalf("%+v: byte %d gives %d, TFLite's arithmetic %d", c, raw, lut[raw], want)
			}
		}
	}
}

// TestRequantize8Refuses: other types and scales that are not positive
// and finite are errors that say so.
func TestRequantize8Refuses(t *testing.T) {
	if _, err := tensor.Requantize8(tensor.Float32, 1, 0, tensor.Uint8, 1, 0); err == nil {
		t.Error("FLOAT32 requantized")
	}
	if _, err := tensor.Requantize8(tensor.Uint8, 0, 0, tensor.Uint8, 1, 0); err == nil {
		t.Error("scale 0 requantized")
	}
}

func TestMapBytes(t *testing.T) {
	var lut [256]byte
	for i := range lut {
		lut[i] = byte(255 - i)
	}
	dst := make([]byte, 3)
	if err := tensor.MapBytes(dst, []byte{0, 1, 200}, &lut); err != nil || dst[0] != 255 || dst[1] != 254 || dst[2] != 55 {
		t.Errorf("through a table: %v %v", dst, err)
	}
	if err := tensor.MapBytes(dst, []byte{7, 8, 9}, nil); err != nil || dst[0] != 7 || dst[2] != 9 {
		t.Errorf("without a table: %v %v", dst, err)
	}
	if err := tensor.MapBytes(dst, []byte{1}, nil); err == nil {
		t.Error("1 byte for a 3-byte tensor: no error")
	}
}
