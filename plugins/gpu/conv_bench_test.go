package gpu

import (
	"context"
	"testing"

	"github.com/delego/delego/delegate"
	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// BenchmarkConv times one Invoke of a one-node partition for MobileNet V2's
// convolution shapes (input and output transfers included), to profile the
// kernels one by one: `go test -run - -bench Conv ./plugins/gpu`.
func BenchmarkConv(b *testing.B) {
	relu6 := schema.ActivationFunctionTypeRELU6
	for _, tc := range []convCase{
		{name: "conv3x3s2 224x3to32", n: 1, h: 224, w: 224, c: 3, oc: 32, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "pointwise 112x32to16", n: 1, h: 112, w: 112, c: 32, oc: 16, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true},
		{name: "pointwise 56x24to144", n: 1, h: 56, w: 56, c: 24, oc: 144, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "pointwise 14x384to64", n: 1, h: 14, w: 14, c: 384, oc: 64, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true},
		{name: "pointwise 7x320to1280", n: 1, h: 7, w: 7, c: 320, oc: 1280, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "pointwise 1x1280to1001", n: 1, h: 1, w: 1, c: 1280, oc: 1001, kh: 1, kw: 1, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true},
		{name: "depthwise 112x96 s2", depthwise: true, n: 1, h: 112, w: 112, c: 96, oc: 96, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "depthwise 56x144 s1", depthwise: true, n: 1, h: 56, w: 56, c: 144, oc: 144, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: relu6},
		{name: "depthwise 14x384 s1", depthwise: true, n: 1, h: 14, w: 14, c: 384, oc: 384, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, same: true, bias: true, act: relu6},
	} {
		b.Run(tc.name, func(b *testing.B) { benchConv(b, tc) })
	}
}

func benchConv(b *testing.B, tc convCase) {
	oh := tensor.WindowOutSize(tc.same, tc.h, tc.kh, tc.sh, tc.dh)
	ow := tensor.WindowOutSize(tc.same, tc.w, tc.kw, tc.sw, tc.dw)
	fshape, code := []int{tc.oc, tc.kh, tc.kw, tc.c}, schema.BuiltinOperatorCONV_2D
	opts := modelbuild.Options(schema.BuiltinOptionsConv2DOptions, &schema.Conv2DOptionsT{Padding: schema.PaddingSAME,
		StrideH: int32(tc.sh), StrideW: int32(tc.sw), FusedActivationFunction: tc.act})
	if tc.depthwise {
		fshape, code = []int{1, tc.kh, tc.kw, tc.oc}, schema.BuiltinOperatorDEPTHWISE_CONV_2D
		opts = modelbuild.Options(schema.BuiltinOptionsDepthwiseConv2DOptions, &schema.DepthwiseConv2DOptionsT{Padding: schema.PaddingSAME,
			StrideH: int32(tc.sh), StrideW: int32(tc.sw), DepthMultiplier: 1, FusedActivationFunction: tc.act})
	}
	r := lcg(3)
	m := modelbuild.New()
	x := m.Tensor("in", tensor.Float32, []int{tc.n, tc.h, tc.w, tc.c})
	f := m.Const("filter", tensor.Float32, fshape, raw(r.floats(tensor.NumElements(fshape))))
	bias := m.Const("bias", tensor.Float32, []int{tc.oc}, raw(r.floats(tc.oc)))
	y := m.Tensor("out", tensor.Float32, []int{tc.n, oh, ow, tc.oc})
	m.Op(code, 1, []int{x, f, bias}, []int{y}, opts)
	m.Inputs(x)
	m.Outputs(y)
	e, err := New().Compile(context.Background(), &delegate.Partition{Model: m.Bytes()})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	in := []*tensor.Tensor{{Type: tensor.Float32, Shape: []int{tc.n, tc.h, tc.w, tc.c}, Data: raw(r.floats(tc.n * tc.h * tc.w * tc.c))}}
	out := []*tensor.Tensor{{Type: tensor.Float32, Shape: []int{tc.n, oh, ow, tc.oc}, Data: make([]byte, 4*tc.n*oh*ow*tc.oc)}}
	macs := float64(tc.n * oh * ow * tc.oc * tc.kh * tc.kw)
	if !tc.depthwise {
		macs *= float64(tc.c)
	}
	b.ResetTimer()
	for range b.N {
		if err := e.Invoke(context.Background(), in, out); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}
