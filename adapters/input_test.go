package adapters

import (
	"bytes"
	"image"
	"image/color"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/delego/delego/tensor"
)

// grayImage is a w-wide grayscale picture of the given values, row by row.
func grayImage(w int, values ...uint8) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, len(values)/w))
	copy(img.Pix, values)
	return img
}

// TestBilinear: a 2x2 picture scaled to 4x4 as RESIZE_BILINEAR does it
// (align_corners and half_pixel_centers false): the source is read at
// (y/2, x/2), the last row and column repeat.
func TestBilinear(t *testing.T) {
	img := grayImage(2, 0, 100, 200, 40)
	want := []byte{
		0, 50, 100, 100,
		100, 85, 70, 70,
		200, 120, 40, 40,
		200, 120, 40, 40,
	}
	got, err := ImageInputWith(img, tensor.Uint8, []int{1, 4, 4, 1}, InputOptions{Resize: Bilinear})
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("bilinear 2x2 to 4x4: %v, %v; want %v", got, err, want)
	}
}

// TestBilinearTruncates: values between pixels are truncated toward zero
// for UINT8 and INT8 inputs, as label_image casts them, and kept for
// FLOAT32 inputs.
func TestBilinearTruncates(t *testing.T) {
	img := grayImage(2, 0, 1)
	shape := []int{1, 1, 4, 1}
	for _, c := range []struct {
		typ  tensor.DType
		want []byte
	}{
		{tensor.Uint8, []byte{0, 0, 1, 1}},
		{tensor.Int8, []byte{0x80, 0x81, 0x81, 0x81}}, // -128, -127 (from -127.5), -127, -127
	} {
		got, err := ImageInputWith(img, c.typ, shape, InputOptions{Resize: Bilinear})
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("%s: % x, %v; want % x", c.typ, got, err, c.want)
		}
	}
	got, err := ImageInputWith(img, tensor.Float32, shape, InputOptions{Resize: Bilinear, Norm: Norm{Mean: 0, Std: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if f := (&tensor.Tensor{Type: tensor.Float32, Shape: shape, Data: got}).Float32s(); f[1] != 0.5 {
		t.Errorf("float input %v, want 0.5 between the pixels", f)
	}
}

// TestBilinearSameSize: at the picture's own size, bilinear and nearest
// both give the pixels.
func TestBilinearSameSize(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	img := image.NewNRGBA(image.Rect(3, 5, 10, 9)) // a bounds not at the origin
	for i := range img.Pix {
		img.Pix[i] = uint8(r.IntN(256))
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	shape := []int{1, 4, 7, 3}
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Float32} {
		norm := Norm{Mean: DefaultMean, Std: DefaultStd}
		want, err := ImageInput(img, typ, shape, norm)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ImageInputWith(img, typ, shape, InputOptions{Resize: Bilinear, Norm: norm})
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: bilinear at the same size differs from the pixels (%v)", typ, err)
		}
	}
}

// TestQuantizedInput: normalised values through the input's scale and
// zero point, rounded and clamped.
func TestQuantizedInput(t *testing.T) {
	img := grayImage(4, 0, 64, 191, 255)
	shape := []int{1, 1, 4, 1}
	def := Norm{Mean: DefaultMean, Std: DefaultStd}
	for _, c := range []struct {
		typ  tensor.DType
		norm Norm
		q    tensor.Quantization
		want []byte
	}{
		// (p-127.5)/127.5*128+128: 0, 64.25, 191.75, 256 (clamped).
		{tensor.Uint8, def, tensor.Quantization{Scale: []float32{1.0 / 128}, ZeroPoint: []int64{128}}, []byte{0, 64, 192, 255}},
		// (p-127.5)/127.5*128: -128, -63.75, 63.75, 128 (clamped).
		{tensor.Int8, def, tensor.Quantization{Scale: []float32{1.0 / 128}}, []byte{0x80, 0xc0, 64, 127}},
		// real p/4, scale 1/4, zero point -1: p-1, clamped.
		{tensor.Int8, Norm{Mean: 0, Std: 4}, tensor.Quantization{Scale: []float32{0.25}, ZeroPoint: []int64{-1}}, []byte{0xff, 63, 127, 127}},
	} {
		got, err := ImageInputWith(img, c.typ, shape, InputOptions{Norm: c.norm, Quant: &c.q})
		if err != nil || !bytes.Equal(got, c.want) {
			t.Errorf("%s %+v: % x, %v; want % x", c.typ, c.q, got, err, c.want)
		}
	}
}

func TestImageInputWithMistakes(t *testing.T) {
	img := grayImage(1, 7)
	shape := []int{1, 1, 1, 1}
	norm := Norm{Mean: 0, Std: 1}
	for _, c := range []struct {
		typ  tensor.DType
		opts InputOptions
		want string
	}{
		{tensor.Uint8, InputOptions{Resize: Resize(17)}, "unknown resize Resize(17)"},
		{tensor.Uint8, InputOptions{Fit: Fit(3)}, "unknown fit Fit(3)"},
		{tensor.Uint8, InputOptions{Norm: norm, Quant: &tensor.Quantization{Scale: []float32{1, 2}, ZeroPoint: []int64{0, 0}}}, "want one positive scale"},
		{tensor.Uint8, InputOptions{Norm: norm, Quant: &tensor.Quantization{Scale: []float32{0}}}, "want one positive scale"},
		{tensor.Int8, InputOptions{Quant: &tensor.Quantization{Scale: []float32{1}}}, "not a usable mapping"},
		{tensor.Int32, InputOptions{}, "not supported"},
	} {
		if _, err := ImageInputWith(img, c.typ, shape, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want an error with %q", c.typ, c.opts, err, c.want)
		}
	}
}

// TestBilinearLuma: a colour picture into a one-channel input is luma,
// taken before the interpolation.
func TestBilinearLuma(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 1))
	img.SetNRGBA(0, 0, color.NRGBA{R: 255, A: 255})
	img.SetNRGBA(1, 0, color.NRGBA{G: 255, A: 255})
	got, err := ImageInputWith(img, tensor.Uint8, []int{1, 1, 4, 1}, InputOptions{Resize: Bilinear})
	// luma: red 76, green 150; between them (76+150)/2 = 113.
	if want := []byte{76, 113, 150, 150}; err != nil || !bytes.Equal(got, want) {
		t.Errorf("%v, %v; want %v", got, err, want)
	}
}
