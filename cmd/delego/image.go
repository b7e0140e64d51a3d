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

// picture is an --image and how to read it.
type picture struct {
	path      string
	norm      adapters.Norm
	normGiven bool // --mean or --std was given
	maxPixels int  // --max-pixels
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
// returns the picture's size.
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
	b, err := adapters.ImageInput(img, t.Info.Type, t.Info.Shape, p.norm)
	if err != nil {
		return nil, adapters.Frame{}, fmt.Errorf("--image: %s: %w", t.Describe("input"), err)
	}
	return [][]byte{b}, adapters.Frame{Width: img.Bounds().Dx(), Height: img.Bounds().Dy()}, nil
}
