package adapters

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/bmp"

	"github.com/delego/delego/testsupport/shared"
)

// fuzzMaxPixels caps the pictures FuzzDecodeImage decodes, so that each
// input costs little memory whatever its header claims.
const fuzzMaxPixels = 64 * 64

// FuzzDecodeImage feeds DecodeImage arbitrary bytes, seeded with small PNG,
// JPEG and BMP pictures and headers that claim huge sizes: it must never
// panic, decode a picture of more than fuzzMaxPixels pixels, or return an
// empty one; a *PixelLimitError must name a size over the cap.
func FuzzDecodeImage(f *testing.F) {
	img := image.NewRGBA(image.Rect(0, 0, 5, 3))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 37)
	}
	gray := image.NewGray(image.Rect(0, 0, 4, 4))
	gray.Set(1, 1, color.Gray{Y: 200})
	for _, enc := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return png.Encode(b, img) },
		func(b *bytes.Buffer) error { return png.Encode(b, gray) },
		func(b *bytes.Buffer) error { return jpeg.Encode(b, img, nil) },
		func(b *bytes.Buffer) error { return bmp.Encode(b, img) },
	} {
		var b bytes.Buffer
		if err := enc(&b); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Add(shared.BMPHeader(0x7fffffff, 1))
	f.Add(shared.BMPHeader(100, -100)) // top-down
	f.Add(shared.PNGHeader(30000, 30000))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeImage(bytes.NewReader(data), fuzzMaxPixels)
		if pe, ok := errors.AsType[*PixelLimitError](err); ok {
			if int64(pe.Width)*int64(pe.Height) <= fuzzMaxPixels {
				t.Errorf("refused a %dx%d picture, within the cap of %d", pe.Width, pe.Height, fuzzMaxPixels)
			}
			return
		}
		if err != nil {
			return
		}
		b := got.Bounds()
		if b.Empty() || int64(b.Dx())*int64(b.Dy()) > fuzzMaxPixels {
			t.Errorf("decoded a %dx%d picture; the cap is %d pixels and empty ones are refused", b.Dx(), b.Dy(), fuzzMaxPixels)
		}
	})
}
