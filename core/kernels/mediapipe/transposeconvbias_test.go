package mediapipe

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

const tcb = "Convolution2DTransposeBias"

// TestTransposeConvBiasWorked checks values worked by hand from
// transpose_conv_bias.cc: the output starts at the bias, each input element
// adds input * weight over its filter window at stride * position, and
// SAME padding cuts pad/2 off the start and the rest off the end.
func TestTransposeConvBiasWorked(t *testing.T) {
	for _, c := range []struct {
		name            string
		padding, sw, sh int32
		in, w           *tensor.Tensor
		bias            []float32
		wantShape       []int
		want            []float64
	}{{
		// 2x2 filter, stride 2 (the selfie models): pad 0, each input
		// element becomes a 2x2 block of input * weight + bias.
		name: "blocks", padding: paddingSame, sw: 2, sh: 2,
		in: kerneltest.F32T([]int{1, 2, 2, 1}, 1, 2, 3, 4), w: kerneltest.F32T([]int{1, 2, 2, 1}, 1, 10, 100, 1000),
		bias: []float32{0.5}, wantShape: []int{1, 4, 4, 1},
		want: []float64{
			1.5, 10.5, 2.5, 20.5,
			100.5, 1000.5, 200.5, 2000.5,
			3.5, 30.5, 4.5, 40.5,
			300.5, 3000.5, 400.5, 4000.5,
		},
	}, {
		// Width 2, filter 3, stride 2, SAME: pad = max(0, 3 - 1%2 - 1) = 1,
		// width 2*1 + 3 - 1 = 4, offset 1/2 = 0. Full: 1,2,3 at 0..2 and
		// 2,4,6 at 2..4 = [1 2 5 4 6]; the last is cut.
		name: "same odd pad", padding: paddingSame, sw: 2, sh: 1,
		in: kerneltest.F32T([]int{1, 1, 2, 1}, 1, 2), w: kerneltest.F32T([]int{1, 1, 3, 1}, 1, 2, 3),
		bias: []float32{0.5}, wantShape: []int{1, 1, 4, 1}, want: []float64{1.5, 2.5, 5.5, 4.5},
	}, {
		// Width 2, filter 3, stride 1, SAME: pad = 2, width 1 + 3 - 2 = 2,
		// offset 1. Full: [1 4 7 6]; the output is [4 7].
		name: "same even pad", padding: paddingSame, sw: 1, sh: 1,
		in: kerneltest.F32T([]int{1, 1, 2, 1}, 1, 2), w: kerneltest.F32T([]int{1, 1, 3, 1}, 1, 2, 3),
		bias: []float32{0.5}, wantShape: []int{1, 1, 2, 1}, want: []float64{4.5, 7.5},
	}, {
		// VALID: the full result, width 1*(2-1) + 3 = 4.
		name: "valid", padding: paddingValid, sw: 1, sh: 1,
		in: kerneltest.F32T([]int{1, 1, 2, 1}, 1, 2), w: kerneltest.F32T([]int{1, 1, 3, 1}, 1, 2, 3),
		bias: []float32{0.5}, wantShape: []int{1, 1, 4, 1}, want: []float64{1.5, 4.5, 7.5, 6.5},
	}, {
		// Two input channels summed, two output channels each with its
		// bias (OHWI weights): 1x1 filter, stride 1.
		name: "channels", padding: paddingValid, sw: 1, sh: 1,
		in: kerneltest.F32T([]int{1, 1, 1, 2}, 2, 3), w: kerneltest.F32T([]int{2, 1, 1, 2}, 1, 10, -1, 100),
		bias: []float32{1, -1}, wantShape: []int{1, 1, 1, 2}, want: []float64{1 + 2 + 30, -1 - 2 + 300},
	}} {
		t.Run(c.name, func(t *testing.T) {
			op := mustOp(t, tcb, cStruct(c.padding, c.sw, c.sh))
			out := kerneltest.OutT(tensor.Float32)
			kerneltest.MustRun(t, op, 1, out, c.in, c.w, kerneltest.F32T([]int{len(c.bias)}, c.bias...))
			kerneltest.CheckOutput(t, c.name, out, c.wantShape, c.want)
		})
	}
}

// scatterTransposeConvBias is MediaPipe's reference loop as it is written:
// outputs start at the bias, then every input element scatters
// input * weight into the outputs its window covers.
func scatterTransposeConvBias(in, w, bias *tensor.Tensor, padding, sw, sh int) (out []float32, shape []int) {
	b, ih, iw, ic := in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
	oc, fh, fw := w.Shape[0], w.Shape[1], w.Shape[2]
	var ph, pw int
	if padding == paddingSame {
		ph, pw = max(0, fh-(ih-1)%sh-1), max(0, fw-(iw-1)%sw-1)
	}
	oh, ow := sh*(ih-1)+fh-ph, sw*(iw-1)+fw-pw
	ph, pw = ph/2, pw/2
	out = make([]float32, b*oh*ow*oc)
	iv, wv, bv := in.Float32s(), w.Float32s(), bias.Float32s()
	for n := range b {
		for i := range oh * ow {
			for o := range oc {
				out[(n*oh*ow+i)*oc+o] = bv[o]
			}
		}
		for y := range ih {
			for x := range iw {
				for c := range ic {
					for fy := range fh {
						for fx := range fw {
							for o := range oc {
								oy, ox := y*sh-ph+fy, x*sw-pw+fx
								if oy < 0 || oy >= oh || ox < 0 || ox >= ow {
									continue
								}
								p := float32(iv[((n*ih+y)*iw+x)*ic+c] * wv[((o*fh+fy)*fw+fx)*ic+c])
								out[((n*oh+oy)*ow+ox)*oc+o] += p
							}
						}
					}
				}
			}
		}
	}
	return out, []int{b, oh, ow, oc}
}

// TestTransposeConvBiasMatchesMediaPipeLoop: over random geometries
// (strides 1 to 3, filters 1 to 4, SAME and VALID, odd and even sizes),
// the kernel's gathered sums are bit-exact with MediaPipe's scattering
// loop, which adds the same products in the same order, on any number of
// threads.
func TestTransposeConvBiasMatchesMediaPipeLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 6))
	for i := range 200 {
		padding := int32(paddingSame)
		if rng.IntN(2) == 0 {
			padding = paddingValid
		}
		sw, sh := 1+rng.IntN(3), 1+rng.IntN(3)
		b, ih, iw, ic := 1+rng.IntN(2), 1+rng.IntN(6), 1+rng.IntN(6), 1+rng.IntN(4)
		oc, fh, fw := 1+rng.IntN(3), 1+rng.IntN(4), 1+rng.IntN(4)
		if i == 0 { // large enough to run on several threads
			b, ih, iw, ic, oc, fh, fw, sh, sw = 2, 40, 40, 16, 4, 3, 3, 2, 2
		}
		in := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, b, ih, iw, ic), uint32(i))
		w := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, oc, fh, fw, ic), uint32(i+1000))
		bias := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, oc), uint32(i+2000))
		want, shape := scatterTransposeConvBias(in, w, bias, int(padding), sw, sh)
		for _, threads := range []int{1, 4} {
			op := mustOp(t, tcb, cStruct(padding, int32(sw), int32(sh)))
			out := kerneltest.OutT(tensor.Float32)
			kerneltest.MustRun(t, op, threads, out, in, w, bias)
			name := fmt.Sprintf("case %d (in %v, weights %v, padding %d, strides %dx%d, %d threads)", i, in.Shape, w.Shape, padding, sw, sh, threads)
			if fmt.Sprint(out.Shape) != fmt.Sprint(shape) {
				t.Fatalf("%s: shape %v, want %v", name, out.Shape, shape)
			}
			for j, v := range out.Float32s() {
				if v != want[j] {
					t.Fatalf("%s: element %d is %g, MediaPipe's loop gives %g", name, j, v, want[j])
				}
			}
		}
	}
}

// TestTransposeConvBiasOptions: the options struct is read as MediaPipe
// reads it, and options it would misread or divide by are refused.
func TestTransposeConvBiasOptions(t *testing.T) {
	// The selfie segmentation models' bytes: SAME, strides 2 and 2.
	p, err := parseTransposeConvParams([]byte{1, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0})
	if err != nil || p != (transposeConvParams{padding: paddingSame, strideW: 2, strideH: 2}) {
		t.Errorf("selfie options: %+v, %v", p, err)
	}
	// Later TFLite versions add fields to the struct: they are ignored.
	if p, err := parseTransposeConvParams(cStruct(2, 3, 1, 0)); err != nil || p.strideW != 3 || p.strideH != 1 || p.padding != paddingValid {
		t.Errorf("16-byte options: %+v, %v", p, err)
	}
	for _, c := range []struct {
		opts []byte
		want string
	}{
		{nil, "has no custom options"},
		{cStruct(1, 2), "custom options of 8 bytes; want a TfLiteTransposeConvParams of at least 12 bytes"},
		{cStruct(3, 2, 2), "padding 3"},
		{cStruct(1, 0, 2), "strides 0x2"},
		{cStruct(1, 2, -1), "strides 2x-1"},
	} {
		_, err := newOp(t, tcb, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), tcb+": ") {
			t.Errorf("options %v: error %v, want one naming the op and %q", c.opts, err, c.want)
		}
	}
}

// TestTransposeConvBiasRefuses: what MediaPipe's Prepare refuses, with an
// error naming the op; types other than FLOAT32 are unsupported.
func TestTransposeConvBiasRefuses(t *testing.T) {
	f := func(shape ...int) *tensor.Tensor { return tensor.NewTensor(tensor.Float32, shape...) }
	for _, c := range []struct {
		name        string
		ins         []*tensor.Tensor
		out         *tensor.Tensor
		want        string
		unsupported bool
	}{
		{"uint8 input", []*tensor.Tensor{kerneltest.QT(tensor.Uint8, []int{1, 2, 2, 1}, 1, 0), f(1, 2, 2, 1), f(1)}, kerneltest.OutT(tensor.Float32), "the data input is UINT8", true},
		{"int32 bias", []*tensor.Tensor{f(1, 2, 2, 1), f(1, 2, 2, 1), tensor.NewTensor(tensor.Int32, 1)}, kerneltest.OutT(tensor.Float32), "the bias is INT32", true},
		{"int8 output", []*tensor.Tensor{f(1, 2, 2, 1), f(1, 2, 2, 1), f(1)}, kerneltest.QOut(tensor.Int8, 1, 0), "the output is INT8", true},
		{"rank", []*tensor.Tensor{f(2, 2, 1), f(1, 2, 2, 1), f(1)}, kerneltest.OutT(tensor.Float32), "want ranks 4, 4 and 1", false},
		{"bias size", []*tensor.Tensor{f(1, 2, 2, 1), f(2, 2, 2, 1), f(3)}, kerneltest.OutT(tensor.Float32), "for 2 output channels, bias for 3", false},
		{"channels", []*tensor.Tensor{f(1, 2, 2, 3), f(1, 2, 2, 1), f(1)}, kerneltest.OutT(tensor.Float32), "has 3 channels, the weights [1 2 2 1] take 1", false},
		{"empty", []*tensor.Tensor{f(1, 0, 2, 1), f(1, 2, 2, 1), f(1)}, kerneltest.OutT(tensor.Float32), "at least 1", false},
	} {
		op := mustOp(t, tcb, cStruct(paddingSame, 2, 2))
		n := &kernel.Node{Inputs: c.ins, Outputs: []*tensor.Tensor{c.out}, Threads: 1}
		err := op.Prepare(n)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), tcb+": ") || errors.Is(err, kernel.ErrUnsupported) != c.unsupported {
			t.Errorf("%s: error %v, want one naming the op and %q (unsupported: %v)", c.name, err, c.want, c.unsupported)
		}
	}
	op := mustOp(t, tcb, cStruct(paddingSame, 2, 2))
	if err := op.Prepare(&kernel.Node{Inputs: []*tensor.Tensor{f(1, 2, 2, 1), f(1, 2, 2, 1)}, Outputs: []*tensor.Tensor{kerneltest.OutT(tensor.Float32)}}); err == nil {
		t.Error("two inputs: no error")
	}
}

// BenchmarkTransposeConvBiasSelfie is the selfie segmentation models' node:
// [1,128,128,16] through a 2x2 filter at stride 2 to [1,256,256,1].
func BenchmarkTransposeConvBiasSelfie(b *testing.B) {
	in := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 1, 128, 128, 16), 1)
	w := kerneltest.LcgFill(tensor.NewTensor(tensor.Float32, 1, 2, 2, 16), 2)
	bias := kerneltest.F32T([]int{1}, 0.5)
	out := kerneltest.OutT(tensor.Float32)
	op := newTransposeConvBias
	k, err := op(kernel.OpInfo{})
	if err != nil {
		b.Fatal(err)
	}
	k.(*transposeConvBias).p = transposeConvParams{padding: paddingSame, strideW: 2, strideH: 2}
	n := &kernel.Node{Inputs: []*tensor.Tensor{in, w, bias}, Outputs: []*tensor.Tensor{out}, Threads: 1}
	if err := k.Prepare(n); err != nil {
		b.Fatal(err)
	}
	out.Data = tensor.NewTensor(tensor.Float32, out.Shape...).Data
	b.ReportAllocs()
	for b.Loop() {
		if err := k.Eval(n); err != nil {
			b.Fatal(err)
		}
	}
}
