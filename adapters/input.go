package adapters

import (
	"encoding/binary"
	"fmt"
	"image"
	"math"

	"github.com/delego/delego/tensor"
)

// Resize is how a picture is scaled to a model's input size.
type Resize int

const (
	// Nearest takes the nearest source pixel, as the delego command does
	// by default (see ImageInput).
	Nearest Resize = iota
	// Bilinear interpolates between the four nearest source pixels as
	// TensorFlow Lite's RESIZE_BILINEAR does with align_corners and
	// half_pixel_centers false, which TFLite's label_image example uses:
	// output pixel (y,x) reads the source at (y*h/H, x*w/W), computed in
	// float32.
	Bilinear

	// The PIL resizes give the bytes of Pillow's Image.resize with the
	// filter of their name, as pycoral's examples and tests feed models
	// (pycoral's classify_image.py resizes with Image.LANCZOS): on the
	// picture's RGB pixels, or for a one-channel input on its luma as
	// Image.convert("L") makes it. The same bytes need the same picture:
	// a BMP or PNG decodes alike in Go and in Pillow, a JPEG does not
	// (Go's image/jpeg upsamples the colours by replication, Pillow's
	// libjpeg smoothly: on Coral's cat_720p.jpg 31% of the values differ,
	// by up to 26).

	// PILNearest is Image.NEAREST: output pixel x reads source pixel
	// floor((x+0.5)*w/W), the pixel under its centre.
	PILNearest
	// PILBilinear is Image.BILINEAR: a triangle filter that, when it
	// shrinks, widens to average every source pixel under an output one
	// (unlike Bilinear).
	PILBilinear
	// PILBicubic is Image.BICUBIC (Pillow's default for Image.resize).
	PILBicubic
	// PILLanczos is Image.LANCZOS (Image.ANTIALIAS in older Pillows).
	PILLanczos
	// PILBox is Image.BOX: every source pixel under an output pixel, each
	// weighted by how much of it the output pixel covers (area averaging).
	PILBox
	// PILHamming is Image.HAMMING.
	PILHamming
)

// String names the method: "nearest" and "bilinear" (delego's and
// TFLite's), "PIL nearest", "PIL lanczos" and so on.
func (r Resize) String() string {
	switch r {
	case Nearest:
		return "nearest"
	case Bilinear:
		return "bilinear"
	case PILNearest:
		return "PIL nearest"
	case PILBilinear:
		return "PIL bilinear"
	case PILBicubic:
		return "PIL bicubic"
	case PILLanczos:
		return "PIL lanczos"
	case PILBox:
		return "PIL box"
	case PILHamming:
		return "PIL hamming"
	}
	return fmt.Sprintf("Resize(%d)", int(r))
}

// Fit is where the resized picture goes in the input.
type Fit int

const (
	// Stretch resizes the picture to the whole input, whatever its aspect
	// ratio.
	Stretch Fit = iota
	// Letterbox keeps the aspect ratio, as pycoral's
	// common.set_resized_input does: the picture (w by h) is resized to
	// int(w*s) by int(h*s) with s = min(W/w, H/h), put in the top-left
	// corner of the input, and the rest of the input is zero (the bytes
	// 0, whatever the input's type and normalisation).
	Letterbox
)

// String names the fit: "stretch" or "letterbox".
func (f Fit) String() string {
	switch f {
	case Stretch:
		return "stretch"
	case Letterbox:
		return "letterbox"
	}
	return fmt.Sprintf("Fit(%d)", int(f))
}

// InputOptions say how ImageInputWith makes an input tensor from a picture.
type InputOptions struct {
	// Resize is the scaling; the zero value is Nearest.
	Resize Resize
	// Fit is where the picture goes; the zero value is Stretch.
	Fit Fit
	// Norm maps a pixel value p to a real input value (p-Mean)/Std: the
	// value of a FLOAT32 input, and of a quantized one with Quant.
	Norm Norm
	// Quant, for a UINT8 or INT8 input, quantizes the normalised value v
	// with the input's scale and zero point: round(v/scale)+zero_point
	// (half away from zero, as TFLite rounds), clamped to the type's
	// range, as pycoral's examples do when a model's input quantization
	// does not match the pixels. nil: the pixel as it is (UINT8) or minus
	// 128 (INT8), truncated toward zero after Bilinear as label_image does.
	Quant *tensor.Quantization
}

// ImageInputWith converts img into the bytes of an image input tensor of
// type typ and shape [1,H,W,C] as opts say. Pixels are RGB (alpha
// ignored), or luma for C = 1 (BT.601 as ImageInput says, or Pillow's for
// the PIL resizes). ImageInput is ImageInputWith with only Norm set.
func ImageInputWith(img image.Image, typ tensor.DType, shape []int, opts InputOptions) ([]byte, error) {
	oh, ow, oc, err := ImageShape(shape)
	if err != nil {
		return nil, err
	}
	switch typ {
	case tensor.Uint8, tensor.Int8, tensor.Float32:
	default:
		return nil, fmt.Errorf("image inputs of type %s are not supported (UINT8, INT8 and FLOAT32 are)", typ)
	}
	norm := opts.Norm
	if (typ == tensor.Float32 || opts.Quant != nil) && (norm.Std == 0 || math.IsNaN(norm.Std) || math.IsNaN(norm.Mean)) {
		return nil, fmt.Errorf("normalisation (p-%v)/%v is not a usable mapping", norm.Mean, norm.Std)
	}
	rh, rw := oh, ow // the resized picture's size
	switch opts.Fit {
	case Stretch:
	case Letterbox:
		if _, rw, rh, err = LetterboxSize(img.Bounds(), ow, oh); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("unknown fit %v", opts.Fit)
	}
	values, err := resize(img, rh, rw, oc, opts.Resize)
	if err != nil {
		return nil, err
	}
	var data []byte
	switch {
	case typ == tensor.Float32:
		data = floatInput(values, norm)
	case opts.Quant != nil:
		if data, err = quantizedInput(values, typ, norm, opts.Quant); err != nil {
			return nil, err
		}
	default:
		data = pixelInput(values, typ)
	}
	if rh == oh && rw == ow {
		return data, nil
	}
	// Letterbox: the rows of the picture in the input's top-left corner.
	out := make([]byte, oh*ow*oc*typ.Size())
	in, row := rw*oc*typ.Size(), ow*oc*typ.Size()
	for y := range rh {
		copy(out[y*row:], data[y*in:(y+1)*in])
	}
	return out, nil
}

// resize returns the oh x ow x oc values of img resized by r.
func resize(img image.Image, oh, ow, oc int, r Resize) ([]float32, error) {
	switch r {
	case Nearest:
		return toFloats(resizeNearest(img, oh, ow, oc)), nil
	case Bilinear:
		return resizeBilinear(img, oh, ow, oc), nil
	case PILNearest, PILBilinear, PILBicubic, PILLanczos, PILBox, PILHamming:
		pix, h, w := pictureBytes(img, oc, pilLuma)
		return toFloats(pilResize(pix, h, w, oc, oh, ow, r)), nil
	}
	return nil, fmt.Errorf("unknown resize %v", r)
}

// LetterboxSize is how pycoral's common.set_resized_input fits a picture
// of size pic into an input of w by h pixels: the scale s = min(w/pw,
// h/ph) and the size int(pw*s) by int(ph*s) the picture is resized to.
// A picture so narrow that a side comes to no pixel is an error.
func LetterboxSize(pic image.Rectangle, w, h int) (scale float64, sw, sh int, err error) {
	pw, ph := pic.Dx(), pic.Dy()
	if pw < 1 || ph < 1 {
		return 0, 0, 0, fmt.Errorf("letterbox: the picture is empty (%dx%d)", pw, ph)
	}
	scale = min(float64(w)/float64(pw), float64(h)/float64(ph))
	sw, sh = int(float64(pw)*scale), int(float64(ph)*scale)
	if sw < 1 || sh < 1 {
		return 0, 0, 0, fmt.Errorf("letterbox: the %dx%d picture scaled by %g to fit %dx%d is %dx%d pixels, nothing on one side", pw, ph, scale, w, h, sw, sh)
	}
	return scale, sw, sh, nil
}

// Frame is the Frame that takes the coordinates of results on an input of
// shape [1,H,W,C] made from img by ImageInputWith with o to img's pixels:
// the picture's size for Stretch; for Letterbox the input's size and the
// scale (see Frame.Scale). It is the zero Frame (normalised coordinates)
// where ImageInputWith would refuse the shape or the fit.
func (o InputOptions) Frame(img image.Image, shape []int) Frame {
	h, w, _, err := ImageShape(shape)
	if err != nil {
		return Frame{}
	}
	switch o.Fit {
	case Stretch:
		return Frame{Width: img.Bounds().Dx(), Height: img.Bounds().Dy()}
	case Letterbox:
		if s, _, _, err := LetterboxSize(img.Bounds(), w, h); err == nil {
			return Frame{Width: w, Height: h, Scale: s}
		}
	}
	return Frame{}
}

// toFloats widens 8-bit pixel values.
func toFloats(pixels []byte) []float32 {
	out := make([]float32, len(pixels))
	for i, p := range pixels {
		out[i] = float32(p)
	}
	return out
}

// floatInput stores (v-norm.Mean)/norm.Std for each value, computed in
// float64 and rounded to float32.
func floatInput(values []float32, norm Norm) []byte {
	out := make([]byte, 4*len(values))
	for i, v := range values {
		f := float32((float64(v) - norm.Mean) / norm.Std)
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return out
}

// pixelInput stores each value as a UINT8 input's byte, or minus 128 as an
// INT8 input's, truncated toward zero as label_image casts.
func pixelInput(values []float32, typ tensor.DType) []byte {
	out := make([]byte, len(values))
	for i, v := range values {
		if typ == tensor.Int8 {
			out[i] = byte(int8(int(v - 128)))
		} else {
			out[i] = byte(int(v))
		}
	}
	return out
}

// quantizedInput stores round(((v-Mean)/Std)/scale)+zero_point for each
// value, clamped to typ's range.
func quantizedInput(values []float32, typ tensor.DType, norm Norm, q *tensor.Quantization) ([]byte, error) {
	if len(q.Scale) != 1 || len(q.ZeroPoint) > 1 || !(q.Scale[0] > 0) {
		return nil, fmt.Errorf("quantize the input: want one positive scale and at most one zero point, have scales %v, zero points %v", q.Scale, q.ZeroPoint)
	}
	zp := 0.0
	if len(q.ZeroPoint) == 1 {
		zp = float64(q.ZeroPoint[0])
	}
	lo, hi := 0.0, 255.0
	if typ == tensor.Int8 {
		lo, hi = -128, 127
	}
	out := make([]byte, len(values))
	for i, v := range values {
		real := (float64(v) - norm.Mean) / norm.Std
		qv := min(hi, max(lo, math.Round(real/float64(q.Scale[0]))+zp))
		out[i] = byte(int(qv)) // two's complement for INT8

	}
	return out, nil
}

// resizeBilinear returns the HxWxC values of img resized as RESIZE_BILINEAR
// does (align_corners and half_pixel_centers false), in float32. Each
// product is rounded to float32 on its own, so that no platform fuses a
// multiply and an add into different bits.
func resizeBilinear(img image.Image, oh, ow, oc int) []float32 {
	pix, h, w := pictureBytes(img, oc, luma)
	src := toFloats(pix)
	sy, sx := float32(h)/float32(oh), float32(w)/float32(ow)
	out := make([]float32, 0, oh*ow*oc)
	for y := range oh {
		iy := float32(y) * sy
		y0 := max(int(math.Floor(float64(iy))), 0)
		y1, dy := min(y0+1, h-1), iy-float32(y0)
		for x := range ow {
			ix := float32(x) * sx
			x0 := max(int(math.Floor(float64(ix))), 0)
			x1, dx := min(x0+1, w-1), ix-float32(x0)
			for c := range oc {
				at := func(r, col int) float32 { return src[(r*w+col)*oc+c] }
				v := float32(at(y0, x0)*(1-dy)*(1-dx)) + float32(at(y1, x0)*dy*(1-dx)) +
					float32(at(y0, x1)*(1-dy)*dx) + float32(at(y1, x1)*dy*dx)
				out = append(out, v)
			}
		}
	}
	return out
}
