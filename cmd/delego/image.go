package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"image"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/internal/words"
	"github.com/delego/delego/model"
	"github.com/delego/delego/tensor"
)

// The picture conversion of --image is the adapters package's (the Go API
// gives the same bytes as the command line).

// maxPixelsHelp documents --max-pixels in the help of every command that
// takes --image.
const maxPixelsHelp = `  --max-pixels N   the most pixels (width times height) an --image
                   picture may have (default 67108864, 8192x8192): a
                   picture whose header claims more is refused before it
                   is decoded, since decoding takes memory for every pixel
                   the header claims
`

// resizeHelp documents --resize and --fit in "delego run -h", which the
// other commands that take --image refer to.
const resizeHelp = `  --resize FILTER  resize the picture byte for byte as Pillow's Image.resize
                   does (Pillow 9.4) with FILTER: nearest, bilinear,
                   bicubic, lanczos, area (Pillow's BOX) or hamming; for
                   C = 1 on Pillow's luma (Image.convert("L")). Byte for
                   byte from a BMP or PNG: Go decodes a JPEG differently
                   from Pillow's libjpeg. pycoral's examples resize with
                   lanczos (classify_image.py, detect_image.py), its
                   classification tests with nearest. Without --resize,
                   delego's own nearest neighbour (see --image above), as
                   before.
  --fit FIT        stretch (default): the picture fills the input, whatever
                   its aspect ratio; letterbox: as pycoral's
                   set_resized_input, the w x h picture is scaled by
                   s = min(W/w, H/h) to int(w*s) x int(h*s) in the input's
                   top-left corner, and the rest of the input is zero
                   bytes. Boxes and keypoints of --task then come back in
                   the picture's pixels (divided by s), as pycoral's
                   detect.get_objects(..., image_scale) gives them.
`

// picture is an --image and how to read it.
type picture struct {
	path      string
	norm      adapters.Norm
	normGiven bool // --mean or --std was given
	maxPixels int  // --max-pixels
	resize    adapters.Resize
	fit       adapters.Fit
}

// resizeFlags are --resize and --fit: as given, then parsed.
type resizeFlags struct {
	resizeName, fitName string
	resize              adapters.Resize
	fit                 adapters.Fit
}

// define defines --resize and --fit on fs.
func (r *resizeFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&r.resizeName, "resize", "", "")
	fs.StringVar(&r.fitName, "fit", "stretch", "")
}

// parse sets how --resize and --fit resize a picture, or returns the
// usage error of a name they do not know or of either given without
// --image.
func (r *resizeFlags) parse(cmd string, set map[string]bool, image string) error {
	if (set["resize"] || set["fit"]) && image == "" {
		return usagef(cmd, "--resize and --fit apply to --image only")
	}
	r.resize = adapters.Nearest
	if set["resize"] {
		var ok bool
		if r.resize, ok = pilFilter(r.resizeName); !ok {
			return usagef(cmd, "--resize %q: want nearest, bilinear, bicubic, lanczos, area or hamming", r.resizeName)
		}
	}
	switch r.fitName {
	case "stretch":
		r.fit = adapters.Stretch
	case "letterbox":
		r.fit = adapters.Letterbox
	default:
		return usagef(cmd, "--fit %q: want stretch or letterbox", r.fitName)
	}
	return nil
}

// pilFilter is the Pillow filter that --resize names.
func pilFilter(name string) (adapters.Resize, bool) {
	switch name {
	case "nearest":
		return adapters.PILNearest, true
	case "bilinear":
		return adapters.PILBilinear, true
	case "bicubic":
		return adapters.PILBicubic, true
	case "lanczos":
		return adapters.PILLanczos, true
	case "area":
		return adapters.PILBox, true
	case "hamming":
		return adapters.PILHamming, true
	}
	return 0, false
}

// defineMaxPixels defines --max-pixels on fs.
func defineMaxPixels(fs *flag.FlagSet, maxPixels *int) {
	fs.IntVar(maxPixels, "max-pixels", adapters.DefaultMaxPixels, "")
}

// checkMaxPixels is the usage error of a --max-pixels that cannot be, or
// that is given without --image; nil when it is fine.
func checkMaxPixels(cmd string, set map[string]bool, maxPixels int, image string) error {
	switch {
	case maxPixels < 1:
		return usagef(cmd, "--max-pixels must be at least 1, got %d", maxPixels)
	case set["max-pixels"] && image == "":
		return usagef(cmd, "--max-pixels applies to --image only")
	}
	return nil
}

// loadImage decodes a PNG, JPEG or BMP file of at most maxPixels pixels;
// ctx stops the reads (and the wait for a FIFO's writer).
func loadImage(ctx context.Context, path string, maxPixels int) (image.Image, error) {
	img, err := adapters.LoadImageContext(ctx, path, maxPixels)
	if pe, ok := errors.AsType[*adapters.PixelLimitError](err); ok {
		pe.Hint = "raise it with --max-pixels"
	}
	return img, err
}

// imageInputs converts a picture into the single image input of m, and
// returns the Frame that takes results to the picture's pixels.
func imageInputs(ctx context.Context, m *model.Model, p picture) ([][]byte, adapters.Frame, error) {
	ins := adapters.ModelInputs(m)
	if len(ins) != 1 {
		return nil, adapters.Frame{}, fmt.Errorf("--image needs a model with one image input; this model has %s", words.Plural(len(ins), "input", "inputs"))
	}
	t := ins[0]
	if _, _, _, err := adapters.ImageShape(t.Info.Shape); err != nil {
		return nil, adapters.Frame{}, fmt.Errorf("--image: %s: %w", t.Describe("input"), err)
	}
	if p.normGiven && t.Info.Type != tensor.Float32 {
		return nil, adapters.Frame{}, fmt.Errorf("--mean and --std apply to FLOAT32 inputs; %s is %s", t.Describe("input"), t.Info.Type)
	}
	img, err := loadImage(ctx, p.path, p.maxPixels)
	if err != nil {
		return nil, adapters.Frame{}, err
	}
	opts := adapters.InputOptions{Resize: p.resize, Fit: p.fit, Norm: p.norm}
	b, err := adapters.ImageInputWith(img, t.Info.Type, t.Info.Shape, opts)
	if err != nil {
		return nil, adapters.Frame{}, fmt.Errorf("--image: %s: %w", t.Describe("input"), err)
	}
	return [][]byte{b}, opts.Frame(img, t.Info.Shape), nil
}
