package mediapipe

import (
	"fmt"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// Convolution2DTransposeBias: MediaPipe's transposed convolution with a
// bias (mediapipe/util/tflite/operations/transpose_conv_bias.cc), the
// upsampling layer at the end of the selfie segmentation models.
//
//   - inputs: data [batch, height, width, in channels], weights
//     [out channels, filter height, filter width, in channels] (OHWI), bias
//     [out channels]; all FLOAT32, the only type MediaPipe's kernel takes.
//   - output: [batch, out height, out width, out channels], FLOAT32, with
//     out height = stride * (height - 1) + filter height - pad (the same
//     across), where pad = max(0, filter - (height - 1) % stride - 1) for
//     SAME padding and 0 otherwise. The output starts pad/2 rows (columns)
//     into the full transposed convolution: the rest of the padding is cut
//     off its end.
//   - options: a TfLiteTransposeConvParams struct in the custom options
//     (padding, stride width, stride height: three int32), not FlexBuffers.
//
// Each output element is its bias plus the products input * weight, each
// rounded to float32 and added in MediaPipe's order (input row, column,
// then channel, ascending), so results are bit-exact with MediaPipe's
// reference loop compiled without fused multiply-adds. The kernel gathers
// per output row where MediaPipe scatters per input element; the order of
// the additions into each output is the same.

// transposeConvBiasOps returns the op's registration (MediaPipe's resolver
// registers version 1).
func transposeConvBiasOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: "Convolution2DTransposeBias", Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newTransposeConvBias},
	}
}

const transposeConvBiasName = "Convolution2DTransposeBias"

// transposeConvParams is MediaPipe's reading of TfLiteTransposeConvParams.
type transposeConvParams struct {
	padding          int32 // paddingSame pads; anything else is VALID
	strideW, strideH int
}

// parseTransposeConvParams reads the options struct. A node made without
// a model (tests) gets VALID padding and strides of 1.
func parseTransposeConvParams(buf []byte) (transposeConvParams, error) {
	if buf == nil {
		return transposeConvParams{padding: paddingValid, strideW: 1, strideH: 1}, nil
	}
	v, err := cStructInts(transposeConvBiasName, "TfLiteTransposeConvParams", buf, 3)
	if err != nil {
		return transposeConvParams{}, err
	}
	if err := checkPadding(transposeConvBiasName, v[0]); err != nil {
		return transposeConvParams{}, err
	}
	if err := checkStrides(transposeConvBiasName, v[1], v[2]); err != nil {
		return transposeConvParams{}, err
	}
	return transposeConvParams{padding: v[0], strideW: int(v[1]), strideH: int(v[2])}, nil
}

func newTransposeConvBias(info kernel.OpInfo) (kernel.Op, error) {
	var opts []byte
	if info.Operator != nil {
		opts = info.Operator.CustomOptionsBytes()
		if opts == nil {
			return nil, fmt.Errorf("%s: the node has no custom options (it needs a TfLiteTransposeConvParams struct)", transposeConvBiasName)
		}
	}
	p, err := parseTransposeConvParams(opts)
	if err != nil {
		return nil, err
	}
	return &transposeConvBias{p: p}, nil
}

// transposeConvBias is one node's kernel. It is its own parallel loop body
// (Chunk), so Eval hands it to the workers without allocating.
type transposeConvBias struct {
	p transposeConvParams

	// Set by Prepare: the geometry.
	batches, inH, inW, inC int
	outH, outW, outC       int
	filterH, filterW       int
	padH, padW             int      // offset of the output in the full result
	xSpans                 [][2]int // per output column, the input columns [lo, hi) it reads

	// Set by Eval for Chunk.
	in, weights, bias, out []float32
}

// Prepare checks the node as MediaPipe's Prepare does and sizes the output.
func (k *transposeConvBias) Prepare(n *kernel.Node) error {
	const op = transposeConvBiasName
	if err := kernel.CheckArity(n, op, 3, 1); err != nil {
		return err
	}
	if err := n.CheckPresent(op); err != nil {
		return err
	}
	in, w, b, out := n.Inputs[0], n.Inputs[1], n.Inputs[2], n.Outputs[0]
	for i, t := range []*tensor.Tensor{in, w, b, out} {
		if t.Type != tensor.Float32 {
			what := [...]string{"data input", "weights", "bias", "output"}[i]
			return kernel.Unsupported("%s: the %s is %s; MediaPipe's kernel takes FLOAT32 only", op, what, t.Type)
		}
	}
	if len(in.Shape) != 4 || len(w.Shape) != 4 || len(b.Shape) != 1 {
		return fmt.Errorf("%s: data input of shape %v, weights %v, bias %v; want ranks 4, 4 and 1", op, in.Shape, w.Shape, b.Shape)
	}
	if w.Shape[0] != b.Shape[0] {
		return fmt.Errorf("%s: weights of shape %v for %d output channels, bias for %d", op, w.Shape, w.Shape[0], b.Shape[0])
	}
	if in.Shape[3] != w.Shape[3] {
		return fmt.Errorf("%s: data input of shape %v has %d channels, the weights %v take %d", op, in.Shape, in.Shape[3], w.Shape, w.Shape[3])
	}
	if in.Shape[1] < 1 || in.Shape[2] < 1 || w.Shape[1] < 1 || w.Shape[2] < 1 {
		return fmt.Errorf("%s: data input of shape %v, weights %v; want a height and width of at least 1", op, in.Shape, w.Shape)
	}
	k.batches, k.inH, k.inW, k.inC = in.Shape[0], in.Shape[1], in.Shape[2], in.Shape[3]
	k.outC, k.filterH, k.filterW = w.Shape[0], w.Shape[1], w.Shape[2]
	var padH, padW int
	if k.p.padding == paddingSame {
		padH = max(0, k.filterH-(k.inH-1)%k.p.strideH-1)
		padW = max(0, k.filterW-(k.inW-1)%k.p.strideW-1)
	}
	k.outH = k.p.strideH*(k.inH-1) + k.filterH - padH
	k.outW = k.p.strideW*(k.inW-1) + k.filterW - padW
	k.padH, k.padW = padH/2, padW/2
	k.xSpans = kernel.Sized(k.xSpans, k.outW)
	for ox := range k.xSpans {
		lo, hi := inputSpan(ox+k.padW, k.p.strideW, k.filterW, k.inW)
		k.xSpans[ox] = [2]int{lo, hi}
	}
	kernel.SetShape(out, []int{k.batches, k.outH, k.outW, k.outC})
	return nil
}

// Eval computes the output rows, in parallel when they are many.
func (k *transposeConvBias) Eval(n *kernel.Node) error {
	k.in, k.weights, k.bias = n.Inputs[0].Float32s(), n.Inputs[1].Float32s(), n.Inputs[2].Float32s()
	k.out = n.Outputs[0].Float32s()
	rows := k.batches * k.outH
	work := len(k.out) * k.inC * k.filterH * k.filterW / max(1, k.p.strideH*k.p.strideW)
	if workers := kernel.WorkersFor(n.Threads, rows, work); workers > 1 {
		n.Workers.Run(rows, workers, 1, k)
	} else {
		k.Chunk(0, 0, rows)
	}
	k.in, k.weights, k.bias, k.out = nil, nil, nil, nil
	return nil
}

// Chunk computes output rows [lo, hi) (batch * out height + row). Each
// output is the bias plus its products added one at a time in (input row,
// input column, channel) order, MediaPipe's order. Four neighbouring
// outputs that read as many input columns are computed together, their
// sums interleaved: four independent chains of additions instead of one,
// each with the same additions in the same order.
func (k *transposeConvBias) Chunk(_, lo, hi int) {
	for r := lo; r < hi; r++ {
		b, oy := r/k.outH, r%k.outH
		out := k.out[r*k.outW*k.outC:][:k.outW*k.outC]
		ox := 0
		for ; ox+4 <= k.outW; ox++ {
			if k.sameSpans(ox) {
				for oc := range k.outC {
					k.quad(b, oy, ox, oc, out)
				}
				ox += 3
				continue
			}
			for oc := range k.outC {
				out[ox*k.outC+oc] = k.one(b, oy, ox, oc)
			}
		}
		for ; ox < k.outW; ox++ {
			for oc := range k.outC {
				out[ox*k.outC+oc] = k.one(b, oy, ox, oc)
			}
		}
	}
}

// sameSpans says whether outputs ox to ox+3 of a row read as many input
// columns each.
func (k *transposeConvBias) sameSpans(ox int) bool {
	s := k.xSpans[ox : ox+4]
	n := s[0][1] - s[0][0]
	return s[1][1]-s[1][0] == n && s[2][1]-s[2][0] == n && s[3][1]-s[3][0] == n
}

// one is output channel oc of pixel (oy, ox) of batch b.
func (k *transposeConvBias) one(b, oy, ox, oc int) float32 {
	inC := k.inC
	yLo, yHi := inputSpan(oy+k.padH, k.p.strideH, k.filterH, k.inH)
	xLo, xHi := k.xSpans[ox][0], k.xSpans[ox][1]
	acc := k.bias[oc]
	for iy := yLo; iy < yHi; iy++ {
		fy := oy + k.padH - iy*k.p.strideH
		inRow := k.in[((b*k.inH+iy)*k.inW)*inC:]
		wRow := k.weights[(oc*k.filterH+fy)*k.filterW*inC:]
		for ix := xLo; ix < xHi; ix++ {
			fx := ox + k.padW - ix*k.p.strideW
			in := inRow[ix*inC:][:inC]
			w := wRow[fx*inC:][:len(in)]
			for c, v := range in {
				acc += float32(v * w[c])
			}
		}
	}
	return acc
}

// quad is one for outputs ox to ox+3 (which sameSpans), written to out
// (the output row).
func (k *transposeConvBias) quad(b, oy, ox, oc int, out []float32) {
	inC, sw := k.inC, k.p.strideW
	yLo, yHi := inputSpan(oy+k.padH, k.p.strideH, k.filterH, k.inH)
	spans := k.xSpans[ox : ox+4]
	bias := k.bias[oc]
	a0, a1, a2, a3 := bias, bias, bias, bias
	for iy := yLo; iy < yHi; iy++ {
		fy := oy + k.padH - iy*k.p.strideH
		inRow := k.in[((b*k.inH+iy)*k.inW)*inC:]
		wRow := k.weights[(oc*k.filterH+fy)*k.filterW*inC:]
		for j := range spans[0][1] - spans[0][0] {
			x0, x1, x2, x3 := spans[0][0]+j, spans[1][0]+j, spans[2][0]+j, spans[3][0]+j
			in0 := inRow[x0*inC:][:inC]
			in1 := inRow[x1*inC:][:len(in0)]
			in2 := inRow[x2*inC:][:len(in0)]
			in3 := inRow[x3*inC:][:len(in0)]
			w0 := wRow[(ox+k.padW-x0*sw)*inC:][:len(in0)]
			w1 := wRow[(ox+1+k.padW-x1*sw)*inC:][:len(in0)]
			w2 := wRow[(ox+2+k.padW-x2*sw)*inC:][:len(in0)]
			w3 := wRow[(ox+3+k.padW-x3*sw)*inC:][:len(in0)]
			for c, v := range in0 {
				a0 += float32(v * w0[c])
				a1 += float32(in1[c] * w1[c])
				a2 += float32(in2[c] * w2[c])
				a3 += float32(in3[c] * w3[c])
			}
		}
	}
	o := out[ox*k.outC:]
	o[oc], o[k.outC+oc], o[2*k.outC+oc], o[3*k.outC+oc] = a0, a1, a2, a3
}

// inputSpan returns the input rows [lo, hi) whose filter window covers
// position p of the full (unpadded) transposed convolution along one axis:
// those i with 0 <= p - i*stride < filter, within [0, size).
func inputSpan(p, stride, filter, size int) (lo, hi int) {
	if first := p - filter + 1; first > 0 {
		lo = (first + stride - 1) / stride
	}
	return lo, min(size, p/stride+1)
}
