package gpu

import (
	"testing"

	"github.com/delego/delego/model/modelbuild"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// refFC is TFLite's FULLY_CONNECTED on the input flattened to [batch, k].
func refFC(in, w, bias []float32, batch, k, units int, a schema.ActivationFunctionType) []float32 {
	out := make([]float32, batch*units)
	for b := range batch {
		for u := range units {
			var acc float32
			for i := range k {
				acc += in[b*k+i] * w[u*k+i]
			}
			if bias != nil {
				acc += bias[u]
			}
			out[b*units+u] = act(acc, a)
		}
	}
	return out
}

func TestFullyConnected(t *testing.T) {
	for _, tc := range []struct {
		name            string
		in, out         []int
		units           int
		bias, keep, rtW bool
		act             schema.ActivationFunctionType
		tol             float64
	}{
		{name: "1x1", in: []int{1, 1}, out: []int{1, 1}, units: 1, bias: true, tol: 1e-6},
		{name: "batch2 relu nobias", in: []int{2, 7}, out: []int{2, 5}, units: 5, act: schema.ActivationFunctionTypeRELU, tol: 1e-5},
		{name: "4-D flattened relu6", in: []int{2, 3, 2, 6}, out: []int{12, 3}, units: 3, bias: true, act: schema.ActivationFunctionTypeRELU6, tol: 1e-5},
		{name: "keep_num_dims relu_n1", in: []int{2, 3, 6}, out: []int{2, 3, 9}, units: 9, bias: true, keep: true, act: schema.ActivationFunctionTypeRELU_N1_TO_1, tol: 1e-5},
		{name: "runtime weights", in: []int{3, 10}, out: []int{3, 6}, units: 6, bias: true, rtW: true, tol: 1e-5},
		{name: "tanh", in: []int{2, 40}, out: []int{2, 7}, units: 7, bias: true, act: schema.ActivationFunctionTypeTANH, tol: 1e-5},
		{name: "large", in: []int{3, 1024}, out: []int{3, 1001}, units: 1001, bias: true, act: schema.ActivationFunctionTypeRELU, tol: 2e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := lcg(23)
			k := tc.in[len(tc.in)-1]
			batch := tensor.NumElements(tc.in) / k
			in, w := r.floats(tensor.NumElements(tc.in)), r.floats(tc.units*k)
			b := modelbuild.New()
			x := b.Tensor("in", tensor.Float32, tc.in)
			var wt int
			feeds := []feed{{tc.in, in}}
			if tc.rtW {
				wt = b.Tensor("w", tensor.Float32, []int{tc.units, k})
				feeds = append(feeds, feed{[]int{tc.units, k}, w})
			} else {
				wt = b.Const("w", tensor.Float32, []int{tc.units, k}, raw(w))
			}
			ins := []int{x, wt, -1}
			var bias []float32
			if tc.bias {
				bias = r.floats(tc.units)
				ins[2] = b.Const("bias", tensor.Float32, []int{tc.units}, raw(bias))
			}
			y := b.Tensor("out", tensor.Float32, tc.out)
			b.Op(schema.BuiltinOperatorFULLY_CONNECTED, 1, ins, []int{y}, modelbuild.Options(schema.BuiltinOptionsFullyConnectedOptions,
				&schema.FullyConnectedOptionsT{FusedActivationFunction: tc.act, KeepNumDims: tc.keep}))
			if tc.rtW {
				b.Inputs(x, wt)
			} else {
				b.Inputs(x)
			}
			b.Outputs(y)
			got := runGraph(t, b, feeds, tc.out)[0]
			compare(t, got, refFC(in, w, bias, batch, k, tc.units, tc.act), tc.tol)
		})
	}
}

type tconvCase struct {
	name           string
	n, h, w, c, oc int
	kh, kw, sh, sw int
	same, bias     bool
	oh, ow         int
}

// refTransposeConv is tensorflow/lite/kernels/internal/reference/
// transpose_conv.h for float: every input pixel scattered through the
// filter into a zeroed output, then the bias added.
func refTransposeConv(tc tconvCase, in, f, bias []float32, pt, pl int) []float32 {
	out := make([]float32, tc.n*tc.oh*tc.ow*tc.oc)
	for b := range tc.n {
		for iy := range tc.h {
			for ix := range tc.w {
				for ic := range tc.c {
					ox0, oy0 := ix*tc.sw-pl, iy*tc.sh-pt
					for fy := range tc.kh {
						for fx := range tc.kw {
							for oc := range tc.oc {
								ox, oy := ox0+fx, oy0+fy
								if ox < 0 || ox >= tc.ow || oy < 0 || oy >= tc.oh {
									continue
								}
								out[((b*tc.oh+oy)*tc.ow+ox)*tc.oc+oc] += in[((b*tc.h+iy)*tc.w+ix)*tc.c+ic] *
									f[((oc*tc.kh+fy)*tc.kw+fx)*tc.c+ic]
							}
						}
					}
				}
			}
		}
	}
	if bias != nil {
		for i := range out {
			out[i] += bias[i%tc.oc]
		}
	}
	return out
}

func TestTransposeConv(t *testing.T) {
	for _, tc := range []tconvCase{
		{name: "same stride2 bias", n: 1, h: 4, w: 5, c: 3, oc: 5, kh: 3, kw: 3, sh: 2, sw: 2, same: true, bias: true, oh: 8, ow: 10},
		{name: "same stride2 odd output", n: 1, h: 4, w: 4, c: 2, oc: 3, kh: 3, kw: 3, sh: 2, sw: 2, same: true, oh: 7, ow: 8},
		{name: "valid stride1 batch2", n: 2, h: 5, w: 4, c: 6, oc: 7, kh: 3, kw: 2, sh: 1, sw: 1, bias: true, oh: 7, ow: 5},
		{name: "valid stride3x2 kernel4", n: 1, h: 3, w: 4, c: 5, oc: 2, kh: 4, kw: 4, sh: 3, sw: 2, oh: 10, ow: 10},
		{name: "1x1", n: 1, h: 1, w: 1, c: 1, oc: 1, kh: 1, kw: 1, sh: 1, sw: 1, same: true, bias: true, oh: 1, ow: 1},
		{name: "large", n: 1, h: 16, w: 16, c: 32, oc: 19, kh: 4, kw: 4, sh: 2, sw: 2, same: true, bias: true, oh: 32, ow: 32},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := lcg(29)
			in, f := r.floats(tc.n*tc.h*tc.w*tc.c), r.floats(tc.oc*tc.kh*tc.kw*tc.c)
			var bias []float32
			b := modelbuild.New()
			shape := []int{tc.n, tc.oh, tc.ow, tc.oc}
			os := b.Const("shape", tensor.Int32, []int{4}, int32s(shape...))
			wt := b.Const("w", tensor.Float32, []int{tc.oc, tc.kh, tc.kw, tc.c}, raw(f))
			x := b.Tensor("in", tensor.Float32, []int{tc.n, tc.h, tc.w, tc.c})
			ins := []int{os, wt, x}
			version := 1
			if tc.bias {
				bias = r.floats(tc.oc)
				ins = append(ins, b.Const("bias", tensor.Float32, []int{tc.oc}, raw(bias)))
				version = 3
			}
			y := b.Tensor("out", tensor.Float32, shape)
			pad := schema.PaddingVALID
			if tc.same {
				pad = schema.PaddingSAME
			}
			b.Op(schema.BuiltinOperatorTRANSPOSE_CONV, version, ins, []int{y}, modelbuild.Options(schema.BuiltinOptionsTransposeConvOptions,
				&schema.TransposeConvOptionsT{Padding: pad, StrideH: int32(tc.sh), StrideW: int32(tc.sw)}))
			b.Inputs(x)
			b.Outputs(y)
			pt, pl := 0, 0
			if tc.same {
				pt, _ = tensor.WindowPadding(tc.sh, 1, tc.oh, tc.kh, tc.h)
				pl, _ = tensor.WindowPadding(tc.sw, 1, tc.ow, tc.kw, tc.w)
			}
			got := runGraph(t, b, []feed{{[]int{tc.n, tc.h, tc.w, tc.c}, in}}, shape)[0]
			compare(t, got, refTransposeConv(tc, in, f, bias, pt, pl), 1e-5)
		})
	}
}
