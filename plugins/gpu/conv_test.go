package gpu

import (
	"context"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// TestConvolutionBlocks covers the remainders of the blocked kernels: output
// channels not a multiple of the vector width (a padded last block), pixels
// not a multiple of the pixels per work item, 1x1 and large spatial sizes,
// and batch 2, on each kernel: pointwise, general conv and depthwise.
func TestConvolutionBlocks(t *testing.T) {
	none, relu6 := schema.ActivationFunctionTypeNONE, schema.ActivationFunctionTypeRELU6
	for _, tc := range []convCase{
		{name: "pointwise oc5 pixels9 batch2", n: 2, h: 3, w: 3, c: 6, oc: 5, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, bias: true, act: relu6},
		{name: "pointwise oc70 1x1 spatial batch2", n: 2, h: 1, w: 1, c: 7, oc: 70, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, same: true, act: none},
		{name: "pointwise oc24 large", n: 1, h: 40, w: 37, c: 19, oc: 24, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, bias: true, act: none},
		{name: "pointwise oc1001", n: 1, h: 1, w: 1, c: 33, oc: 1001, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, bias: true, act: none},
		{name: "conv 3x3 s2 oc7 ow7 batch2", n: 2, h: 13, w: 13, c: 3, oc: 7, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "conv 3x3 valid to 1x1 oc17", n: 1, h: 3, w: 3, c: 5, oc: 17, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, bias: true, act: none},
		{name: "conv 1x1 stride2 oc32", n: 1, h: 9, w: 11, c: 8, oc: 32, kh: 1, kw: 1, sh: 2, sw: 2, dh: 1, dw: 1, same: true, act: none},
		{name: "conv 3x3 s2 large oc16", n: 1, h: 66, w: 65, c: 3, oc: 16, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "depthwise c6 scalar lanes ow remainder", depthwise: true, n: 1, h: 5, w: 7, c: 6, oc: 6, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "depthwise c12 s2 batch2", depthwise: true, n: 2, h: 11, w: 11, c: 12, oc: 12, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, same: true, bias: true, act: none},
		{name: "depthwise c16 dilated large", depthwise: true, n: 1, h: 64, w: 61, c: 16, oc: 16, kh: 3, kw: 3, sh: 1, sw: 1, dh: 2, dw: 2, same: true, act: relu6},
		{name: "depthwise c8 1x1 spatial", depthwise: true, n: 1, h: 1, w: 1, c: 8, oc: 8, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: none},
		{name: "depthwise c32 s2 valid 5x4", depthwise: true, n: 1, h: 9, w: 9, c: 32, oc: 32, kh: 5, kw: 4, sh: 2, sw: 2, dh: 1, dw: 1, bias: true, act: none},
	} {
		t.Run(tc.name, func(t *testing.T) { checkConv(t, tc) })
	}
}

// TestRepackedFilterNotUploaded: a convolution's filter goes to the device
// once, repacked; the model's own copy of it gets no buffer.
func TestRepackedFilterNotUploaded(t *testing.T) {
	b := modelbuild.New()
	in := b.Tensor("in", tensor.Float32, []int{1, 4, 4, 8})
	w := b.Const("w", tensor.Float32, []int{16, 1, 1, 8}, raw(make([]float32, 128)))
	out := b.Tensor("out", tensor.Float32, []int{1, 4, 4, 16})
	b.Op(schema.BuiltinOperatorCONV_2D, 1, []int{in, w, -1}, []int{out},
		modelbuild.Options(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{StrideW: 1, StrideH: 1, DilationWFactor: 1, DilationHFactor: 1}))
	b.Inputs(in)
	b.Outputs(out)
	e, err := New().Compile(context.Background(), &delegate.Partition{Model: b.Bytes()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	x := e.(*executable)
	if x.byTensor[w] != nil {
		t.Errorf("the filter as the model has it (tensor %d) was uploaded beside its repacked copy", w)
	}
	if x.byTensor[in] == nil || x.byTensor[out] == nil {
		t.Error("the input or output has no buffer")
	}
}
