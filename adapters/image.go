package adapters

import (
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // register JPEG for image.Decode
	_ "image/png"  // register PNG for image.Decode
	"os"

	_ "golang.org/x/image/bmp" // register BMP for image.Decode

	"github.com/delego/delego/tensor"
)

// Norm maps an 8-bit pixel value p to a float32 input as (p-Mean)/Std.
type Norm struct{ Mean, Std float64 }

// The default normalisation, DefaultMean and DefaultStd, maps [0,255] onto
// [-1,1], as MobileNet-style float models expect.
const (
	DefaultMean = 127.5
	DefaultStd  = 127.5
)

// LoadImage decodes a PNG, JPEG or BMP file.
func LoadImage(path string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	defer f.Close()
	img, format, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("decode image %s (PNG, JPEG and BMP are supported): %w", path, err)
	}
	if b := img.Bounds(); b.Empty() {
		return nil, fmt.Errorf("decode image %s: %s image is empty (%dx%d)", path, format, b.Dx(), b.Dy())
	}
	return img, nil
}

// ImageShape checks that shape is [1,H,W,C] with C 1 or 3 and returns H, W, C.
func ImageShape(shape []int) (h, w, c int, err error) {
	if len(shape) != 4 || shape[0] != 1 || shape[1] < 1 || shape[2] < 1 || (shape[3] != 1 && shape[3] != 3) {
		return 0, 0, 0, fmt.Errorf("shape %v is not an image input [1,H,W,C] with C = 1 or 3", shape)
	}
	return shape[1], shape[2], shape[3], nil
}

// ImageInput converts img into the bytes of an image input tensor of type
// typ and shape [1,H,W,C].
//
// The picture is resized to HxW by nearest neighbour: output pixel (y,x) is
// source pixel (row min(h-1, y*h/H), column min(w-1, x*w/W)) with integer
// division, rows counted from the top. Pixels are RGB (non-premultiplied:
// alpha is ignored); for C = 1 they are turned into luma
// Y = (299*R + 587*G + 114*B + 500) / 1000 (BT.601 weights, rounded to
// nearest), or taken as they are from a grayscale picture.
//
// The values are stored as: UINT8 the pixel p; INT8 p-128; FLOAT32
// (p-norm.Mean)/norm.Std, computed in float64 and rounded to float32.
// ImageInputWith also resizes bilinearly and quantizes.
func ImageInput(img image.Image, typ tensor.DType, shape []int, norm Norm) ([]byte, error) {
	return ImageInputWith(img, typ, shape, InputOptions{Norm: norm})
}

// resizeNearest returns the HxWxC bytes of img resized by nearest neighbour.
func resizeNearest(img image.Image, oh, ow, oc int) []byte {
	b := img.Bounds()
	h, w := b.Dy(), b.Dx()
	gray, isGray := img.(*image.Gray)
	out := make([]byte, 0, oh*ow*oc)
	for y := range oh {
		sy := b.Min.Y + min(h-1, y*h/oh)
		for x := range ow {
			sx := b.Min.X + min(w-1, x*w/ow)
			if oc == 1 && isGray {
				out = append(out, gray.GrayAt(sx, sy).Y)
				continue
			}
			c := color.NRGBAModel.Convert(img.At(sx, sy)).(color.NRGBA)
			if oc == 1 {
				out = append(out, luma(c.R, c.G, c.B))
				continue
			}
			out = append(out, c.R, c.G, c.B)
		}
	}
	return out
}

// luma is the BT.601 luma of an 8-bit RGB colour, rounded to nearest.
func luma(r, g, b uint8) uint8 {
	return uint8((299*uint32(r) + 587*uint32(g) + 114*uint32(b) + 500) / 1000)
}
