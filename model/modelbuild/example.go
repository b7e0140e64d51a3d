package modelbuild

import (
	"encoding/binary"
	"math"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Example is the command line's built-in example: a small float32 image
// classifier (CONV_2D + RELU, MAX_POOL_2D, RESHAPE, FULLY_CONNECTED, SOFTMAX)
// over a [1,16,16,3] picture with four classes, with fixed pseudo-random
// weights, together with a matching input (a red square on a blue ground,
// scaled to [-1, 1]) and its class labels.
func Example() (model, input []byte, labels []string) {
	rng := lcg(7)
	weights := func(n int, scale float32) []byte {
		out := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(scale*rng.next()))
		}
		return out
	}
	const h, w, c, filters, classes = 16, 16, 3, 8, 4
	b := New()
	b.Description("delego built-in example: tiny float32 image classifier")
	in := b.Tensor("image", tensor.Float32, []int{1, h, w, c})
	convW := b.Const("conv/weights", tensor.Float32, []int{filters, 3, 3, c}, weights(filters*9*c, 0.5))
	convB := b.Const("conv/bias", tensor.Float32, []int{filters}, weights(filters, 0.1))
	conv := b.Tensor("conv", tensor.Float32, []int{1, h, w, filters})
	b.Op(schema.BuiltinOperatorCONV_2D, 1, []int{in, convW, convB}, []int{conv},
		Options(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{
			Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationWFactor: 1, DilationHFactor: 1,
			FusedActivationFunction: schema.ActivationFunctionTypeRELU,
		}))
	pool := b.Tensor("pool", tensor.Float32, []int{1, h / 4, w / 4, filters})
	b.Op(schema.BuiltinOperatorMAX_POOL_2D, 1, []int{conv}, []int{pool},
		Options(schema.BuiltinOptionsPool2DOptions, &schema.Pool2DOptionsT{
			Padding: schema.PaddingVALID, StrideW: 4, StrideH: 4, FilterWidth: 4, FilterHeight: 4,
		}))
	flatShape := b.Const("flat/shape", tensor.Int32, []int{2}, int32Bytes(1, -1))
	flat := b.Tensor("flat", tensor.Float32, []int{1, (h / 4) * (w / 4) * filters})
	b.Op(schema.BuiltinOperatorRESHAPE, 1, []int{pool, flatShape}, []int{flat},
		Options(schema.BuiltinOptionsReshapeOptions, &schema.ReshapeOptionsT{NewShape: []int32{1, -1}}))
	fcW := b.Const("fc/weights", tensor.Float32, []int{classes, (h / 4) * (w / 4) * filters}, weights(classes*(h/4)*(w/4)*filters, 0.2))
	fcB := b.Const("fc/bias", tensor.Float32, []int{classes}, weights(classes, 0.1))
	logits := b.Tensor("logits", tensor.Float32, []int{1, classes})
	b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, []int{flat, fcW, fcB}, []int{logits},
		Options(schema.BuiltinOptionsFullyConnectedOptions, &schema.FullyConnectedOptionsT{}))
	probs := b.Tensor("probabilities", tensor.Float32, []int{1, classes})
	b.Op(schema.BuiltinOperatorSOFTMAX, 1, []int{logits}, []int{probs},
		Options(schema.BuiltinOptionsSoftmaxOptions, &schema.SoftmaxOptionsT{Beta: 1}))
	b.Inputs(in)
	b.Outputs(probs)

	input = make([]byte, 4*h*w*c)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			px := [3]float32{-1, -1, 1} // blue ground
			if y >= 4 && y < 12 && x >= 4 && x < 12 {
				px = [3]float32{1, -1, -1} // red square
			}
			for ch := 0; ch < c; ch++ {
				binary.LittleEndian.PutUint32(input[4*((y*w+x)*c+ch):], math.Float32bits(px[ch]))
			}
		}
	}
	return b.Bytes(), input, []string{"circle", "square", "stripes", "noise"}
}

func int32Bytes(v ...int32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], uint32(x))
	}
	return out
}

// lcg is the golden README's 32-bit linear congruential generator.
type lcgState uint32

func lcg(seed uint32) *lcgState { s := lcgState(seed); return &s }

// next returns a value in [-1, 1).
func (s *lcgState) next() float32 {
	*s = *s*1664525 + 1013904223
	return float32(uint32(*s)>>8)/(1<<24)*2 - 1
}
