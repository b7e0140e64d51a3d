package main

import (
	"image"

	"github.com/delego/delego/adapters"
	"github.com/delego/delego/tensor"
)

// The picture conversion of --image is the adapters package's (the Go API
// gives the same bytes as the command line).

// pixelNorm maps an 8-bit pixel value p to a float32 input as (p-Mean)/Std.
type pixelNorm = adapters.Norm

const (
	defaultMean = adapters.DefaultMean
	defaultStd  = adapters.DefaultStd
)

// loadImage decodes a PNG, JPEG or BMP file.
func loadImage(path string) (image.Image, error) { return adapters.LoadImage(path) }

// imageShape checks that shape is [1,H,W,C] with C 1 or 3 and returns H, W, C.
func imageShape(shape []int) (h, w, c int, err error) { return adapters.ImageShape(shape) }

// imageToTensor converts img into the bytes of an image input tensor (see
// adapters.ImageInput).
func imageToTensor(img image.Image, typ tensor.DType, shape []int, norm pixelNorm) ([]byte, error) {
	return adapters.ImageInput(img, typ, shape, norm)
}
