package adapters

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // register JPEG for image.Decode
	_ "image/png"  // register PNG for image.Decode
	"io"
	"strings"

	_ "golang.org/x/image/bmp" // register BMP for image.Decode

	"github.com/delego/delego/internal/fileio"
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

// DefaultMaxPixels is the most pixels (width times height) LoadImage
// decodes: 8192x8192, a 256 MiB picture at 4 bytes a pixel. A picture's
// header can claim far more than its file holds (a 2.7 MB PNG of
// 30000x30000), and decoding allocates what the header claims.
const DefaultMaxPixels = 8192 * 8192

// maxHeaderBytes caps what DecodeImage reads before a picture's size: the
// headers of PNG and BMP are small, JPEG's metadata segments (Exif, ICC
// profiles) rarely pass a few MiB.
const maxHeaderBytes = 16 << 20

// PixelLimitError reports a picture with more pixels than its decoder
// allows.
type PixelLimitError struct {
	Path          string // the file; empty for DecodeImage
	Format        string // "png", "jpeg" or "bmp"
	Width, Height int    // as the picture's header gives them
	Max           int    // the cap
	// Hint says how to raise the cap.
	Hint string
}

// Error names the file, the picture's size and the cap, and how to raise it.
func (e *PixelLimitError) Error() string {
	var b strings.Builder
	b.WriteString("image ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	fmt.Fprintf(&b, "the %s picture is %dx%d = %d pixels, more than the limit of %d",
		strings.ToUpper(e.Format), e.Width, e.Height, int64(e.Width)*int64(e.Height), e.Max)
	if e.Hint != "" {
		b.WriteString(" (" + e.Hint + ")")
	}
	return b.String()
}

// LoadImage decodes a PNG, JPEG or BMP file of at most DefaultMaxPixels
// pixels (LoadImageContext without a context).
func LoadImage(path string) (image.Image, error) {
	return LoadImageContext(context.Background(), path, DefaultMaxPixels)
}

// LoadImageContext decodes a PNG, JPEG or BMP file of at most maxPixels
// pixels (DefaultMaxPixels when maxPixels <= 0): a picture whose header
// claims more is refused with a *PixelLimitError before it is decoded.
// The file may be a FIFO; ctx stops an open that waits for its writer,
// and the reads.
func LoadImageContext(ctx context.Context, path string, maxPixels int) (image.Image, error) {
	f, err := fileio.Open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	defer f.Close()
	img, err := DecodeImage(f, maxPixels)
	if pe, ok := errors.AsType[*PixelLimitError](err); ok {
		pe.Path = path
		pe.Hint = "raise it with LoadImageContext's maxPixels"
		return nil, pe
	}
	if err != nil {
		return nil, fmt.Errorf("decode image %s (PNG, JPEG and BMP are supported): %w", path, err)
	}
	return img, nil
}

// DecodeImage decodes a PNG, JPEG or BMP picture of at most maxPixels
// pixels (DefaultMaxPixels when maxPixels <= 0) from r. It reads the
// picture's size first, and refuses a larger one with a *PixelLimitError
// before decoding it; it refuses an empty one too. Other errors are the
// decoder's.
func DecodeImage(r io.Reader, maxPixels int) (image.Image, error) {
	if maxPixels <= 0 {
		maxPixels = DefaultMaxPixels
	}
	head := &recorder{r: r}
	cfg, format, err := image.DecodeConfig(head)
	if err != nil {
		return nil, err
	}
	if w, h := cfg.Width, cfg.Height; w > 0 && h > maxPixels/w {
		return nil, &PixelLimitError{Format: format, Width: w, Height: h, Max: maxPixels}
	}
	// The decoder reads again what DecodeConfig read, then the rest.
	img, format, err := image.Decode(io.MultiReader(bytes.NewReader(head.data), r))
	if err != nil {
		return nil, err
	}
	if b := img.Bounds(); b.Empty() {
		return nil, fmt.Errorf("%s image is empty (%dx%d)", format, b.Dx(), b.Dy())
	}
	return img, nil
}

// recorder keeps what is read through it, up to maxHeaderBytes.
type recorder struct {
	r    io.Reader
	data []byte
}

func (h *recorder) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	if len(h.data)+n > maxHeaderBytes {
		return 0, fmt.Errorf("more than %d MiB before the picture's size", maxHeaderBytes>>20)
	}
	h.data = append(h.data, p[:n]...)
	return n, err
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
			r, g, b := rgbAt(img, sx, sy)
			if oc == 1 {
				out = append(out, luma(r, g, b))
				continue
			}
			out = append(out, r, g, b)
		}
	}
	return out
}

// luma is the BT.601 luma of an 8-bit RGB colour, rounded to nearest.
func luma(r, g, b uint8) uint8 {
	return uint8((299*uint32(r) + 587*uint32(g) + 114*uint32(b) + 500) / 1000)
}
