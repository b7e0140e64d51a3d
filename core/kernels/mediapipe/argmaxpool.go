package mediapipe

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// MaxPoolingWithArgmax2D and MaxUnpooling2D: MediaPipe's max pooling that
// also writes where each maximum was, and its inverse, which puts each
// value back where the indices say (max_pool_argmax.cc, max_unpooling.cc;
// the encoder and decoder of MediaPipe's hair segmentation model).
//
// Both read a TfLitePoolParams struct from the custom options (padding,
// stride width, stride height, filter width, filter height, activation:
// six int32) and take FLOAT32 only, indices included.
//
// MaxPoolingWithArgmax2D: one input [batch, height, width, channels], two
// outputs of TFLite's pooled shape: out = ceil(in / stride) for SAME,
// (in - filter + stride) / stride for VALID, padded by
// max(0, ((out - 1) * stride + filter - in) / 2) before. Output 0 is each
// window's maximum (the first one on ties; NaN never wins) clamped to the
// fused activation's range; output 1 its position in the window,
// filter_y * filter width + filter_x, plus 0.1 so that a truncation back to
// an integer gives the position even after rounding, as MediaPipe writes it.
// MediaPipe gives an empty output for the padding value 0 (unknown); delego
// refuses it.
//
// MaxUnpooling2D: inputs values and indices [batch, height, width,
// channels]; output [batch, height * filter height, width * filter width,
// channels], zero but where an index puts a value: input (y, x) goes to
// output (y * stride - pad + index / filter width, x * stride - pad +
// index % filter width), the index truncated to an integer and pad =
// max(0, ((height - 1) * stride + filter - out height) / 2) (0 when the
// stride is the filter size). Later values overwrite earlier ones. Where
// MediaPipe writes out of bounds for an index outside the window (or NaN),
// delego's Eval fails, naming the element.

// argmaxPoolOps returns the two ops' registrations (MediaPipe's resolver
// registers version 1).
func argmaxPoolOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorCUSTOM, Custom: maxPoolArgmaxName, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newMaxPoolArgmax},
		{Code: schema.BuiltinOperatorCUSTOM, Custom: maxUnpoolingName, Versions: tensor.VersionRange{Min: 1, Max: 1}, Types: []tensor.DType{tensor.Float32}, New: newMaxUnpooling},
	}
}

const (
	maxPoolArgmaxName = "MaxPoolingWithArgmax2D"
	maxUnpoolingName  = "MaxUnpooling2D"
)

// TfLiteFusedActivation values MediaPipe's pooling can carry.
const (
	actNone = iota
	actRelu
	actReluN1To1
	actRelu6
	actTanh
	actSignBit
	actSigmoid
)

// poolParams is MediaPipe's reading of TfLitePoolParams.
type poolParams struct {
	padding          int32
	strideW, strideH int
	filterW, filterH int
	actMin, actMax   float32 // the fused activation's range
}

// parsePoolParams reads the options struct of op. A node made without a
// model (tests) gets VALID 2x2 windows at stride 2.
func parsePoolParams(op string, info kernel.OpInfo) (poolParams, error) {
	if info.Operator == nil {
		return poolParams{padding: paddingValid, strideW: 2, strideH: 2, filterW: 2, filterH: 2, actMin: -math.MaxFloat32, actMax: math.MaxFloat32}, nil
	}
	buf := info.Operator.CustomOptionsBytes()
	if buf == nil {
		return poolParams{}, fmt.Errorf("%s: the node has no custom options (it needs a TfLitePoolParams struct)", op)
	}
	v, err := cStructInts(op, "TfLitePoolParams", buf, 6)
	if err != nil {
		return poolParams{}, err
	}
	if v[0] != paddingSame && v[0] != paddingValid {
		return poolParams{}, fmt.Errorf("%s: padding %d in the custom options; want 1 (SAME) or 2 (VALID)", op, v[0])
	}
	if err := checkStrides(op, v[1], v[2]); err != nil {
		return poolParams{}, err
	}
	if v[3] < 1 || v[4] < 1 {
		return poolParams{}, fmt.Errorf("%s: filter %dx%d (width x height) in the custom options; want at least 1", op, v[3], v[4])
	}
	p := poolParams{padding: v[0], strideW: int(v[1]), strideH: int(v[2]), filterW: int(v[3]), filterH: int(v[4])}
	// TFLite's CalculateActivationRange: the other activations do not clamp.
	switch v[5] {
	case actRelu:
		p.actMin, p.actMax = 0, math.MaxFloat32
	case actRelu6:
		p.actMin, p.actMax = 0, 6
	case actReluN1To1:
		p.actMin, p.actMax = -1, 1
	case actNone, actTanh, actSignBit, actSigmoid:
		p.actMin, p.actMax = -math.MaxFloat32, math.MaxFloat32
	default:
		return poolParams{}, fmt.Errorf("%s: fused activation %d in the custom options is not one of TFLite's (0 to 6)", op, v[5])
	}
	return p, nil
}

// pooledSize is TFLite's windowed output size along one axis.
func (p poolParams) pooledSize(in, filter, stride int) int {
	if p.padding == paddingSame {
		return (in + stride - 1) / stride
	}
	return (in - filter + stride) / stride
}

// computePadding is TFLite's ComputePadding with a dilation of 1.
func computePadding(stride, in, filter, out int) int {
	return max(0, ((out-1)*stride+filter-in)/2)
}

// checkFloat4D checks that every tensor of a node is FLOAT32 and that the
// named inputs have rank 4.
func checkFloat4D(n *kernel.Node, op string, inputs ...string) error {
	for i, t := range n.Inputs {
		if t.Type != tensor.Float32 {
			return kernel.Unsupported("%s: the %s (input %d) is %s; MediaPipe's kernel takes FLOAT32 only", op, inputs[i], i, t.Type)
		}
		if len(t.Shape) != 4 {
			return fmt.Errorf("%s: the %s (input %d) has shape %v; want [batch, height, width, channels]", op, inputs[i], i, t.Shape)
		}
	}
	for i, t := range n.Outputs {
		if t.Type != tensor.Float32 {
			return kernel.Unsupported("%s: output %d is %s; MediaPipe's kernel writes FLOAT32 only", op, i, t.Type)
		}
	}
	return nil
}

func newMaxPoolArgmax(info kernel.OpInfo) (kernel.Op, error) {
	p, err := parsePoolParams(maxPoolArgmaxName, info)
	if err != nil {
		return nil, err
	}
	return &maxPoolArgmax{p: p}, nil
}

// maxPoolArgmax is one MaxPoolingWithArgmax2D node's kernel.
type maxPoolArgmax struct {
	p          poolParams
	padH, padW int
}

// Prepare checks the node and sizes both outputs.
func (k *maxPoolArgmax) Prepare(n *kernel.Node) error {
	const op = maxPoolArgmaxName
	if err := kernel.CheckArity(n, op, 1, 2); err != nil {
		return err
	}
	if err := n.CheckPresent(op); err != nil {
		return err
	}
	if err := checkFloat4D(n, op, "input"); err != nil {
		return err
	}
	s := n.Inputs[0].Shape
	outH := k.p.pooledSize(s[1], k.p.filterH, k.p.strideH)
	outW := k.p.pooledSize(s[2], k.p.filterW, k.p.strideW)
	if outH < 0 || outW < 0 {
		return fmt.Errorf("%s: a %dx%d filter does not fit the %dx%d input with VALID padding", op, k.p.filterW, k.p.filterH, s[2], s[1])
	}
	k.padH = computePadding(k.p.strideH, s[1], k.p.filterH, outH)
	k.padW = computePadding(k.p.strideW, s[2], k.p.filterW, outW)
	shape := []int{s[0], outH, outW, s[3]}
	kernel.SetShape(n.Outputs[0], shape)
	kernel.SetShape(n.Outputs[1], shape)
	return nil
}

// Eval writes each window's maximum and its position in the window.
func (k *maxPoolArgmax) Eval(n *kernel.Node) error {
	in, out, idx := n.Inputs[0], n.Outputs[0], n.Outputs[1]
	src, dst, pos := in.Float32s(), out.Float32s(), idx.Float32s()
	inH, inW, ch := in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	p := k.p
	for b := range in.Shape[0] {
		for oy := range outH {
			y0 := oy*p.strideH - k.padH
			fy0, fy1 := max(0, -y0), min(p.filterH, inH-y0)
			for ox := range outW {
				x0 := ox*p.strideW - k.padW
				fx0, fx1 := max(0, -x0), min(p.filterW, inW-x0)
				o := ((b*outH+oy)*outW + ox) * ch
				for c := range ch {
					best, at := float32(-math.MaxFloat32), 0
					for fy := fy0; fy < fy1; fy++ {
						row := ((b*inH+y0+fy)*inW + x0) * ch
						for fx := fx0; fx < fx1; fx++ {
							if v := src[row+fx*ch+c]; v > best {
								best, at = v, fy*p.filterW+fx
							}
						}
					}
					dst[o+c] = min(max(best, p.actMin), p.actMax)
					pos[o+c] = float32(at) + 0.1
				}
			}
		}
	}
	return nil
}

func newMaxUnpooling(info kernel.OpInfo) (kernel.Op, error) {
	p, err := parsePoolParams(maxUnpoolingName, info)
	if err != nil {
		return nil, err
	}
	return &maxUnpooling{p: p}, nil
}

// maxUnpooling is one MaxUnpooling2D node's kernel.
type maxUnpooling struct {
	p          poolParams
	padH, padW int
}

// Prepare checks the node and sizes the output.
func (k *maxUnpooling) Prepare(n *kernel.Node) error {
	const op = maxUnpoolingName
	if err := kernel.CheckArity(n, op, 2, 1); err != nil {
		return err
	}
	if err := n.CheckPresent(op); err != nil {
		return err
	}
	if err := checkFloat4D(n, op, "values", "indices"); err != nil {
		return err
	}
	s := n.Inputs[0].Shape
	if is := n.Inputs[1].Shape; fmt.Sprint(is) != fmt.Sprint(s) {
		return fmt.Errorf("%s: indices of shape %v for values of shape %v; want the same shape", op, is, s)
	}
	outH, outW := s[1]*k.p.filterH, s[2]*k.p.filterW
	k.padH = computePadding(k.p.strideH, outH, k.p.filterH, s[1])
	k.padW = computePadding(k.p.strideW, outW, k.p.filterW, s[2])
	kernel.SetShape(n.Outputs[0], []int{s[0], outH, outW, s[3]})
	return nil
}

// Eval zeroes the output and puts every value where its index says.
func (k *maxUnpooling) Eval(n *kernel.Node) error {
	in, out := n.Inputs[0], n.Outputs[0]
	src, idx, dst := in.Float32s(), n.Inputs[1].Float32s(), out.Float32s()
	inH, inW, ch := in.Shape[1], in.Shape[2], in.Shape[3]
	outH, outW := out.Shape[1], out.Shape[2]
	p := k.p
	clear(dst)
	for b := range in.Shape[0] {
		for y := range inH {
			for x := range inW {
				i := ((b*inH+y)*inW + x) * ch
				for c := range ch {
					v := idx[i+c]
					// C's float-to-int conversion truncates; out of int
					// range (or NaN) it is undefined, and refused.
					if !(v > -1<<31 && v < 1<<31) {
						return fmt.Errorf("%s: index %g at [%d,%d,%d,%d] is not a position in a %dx%d window", maxUnpoolingName, v, b, y, x, c, p.filterW, p.filterH)
					}
					at := int(v)
					oy := y*p.strideH - k.padH + at/p.filterW
					ox := x*p.strideW - k.padW + at%p.filterW
					if oy < 0 || oy >= outH || ox < 0 || ox >= outW {
						return fmt.Errorf("%s: index %g at [%d,%d,%d,%d] puts its value at row %d, column %d, outside the %dx%d output", maxUnpoolingName, v, b, y, x, c, oy, ox, outH, outW)
					}
					dst[((b*outH+oy)*outW+ox)*ch+c] = src[i+c]
				}
			}
		}
	}
	return nil
}
