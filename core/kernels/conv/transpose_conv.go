package conv

import (
	"fmt"
	"math"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// transposeConvOps returns the registration of TRANSPOSE_CONV, with the version ranges of TF 2.9's builtin resolver (register.cc; checked
// against the TF 2.9 C library, which refuses the next version up).
func transposeConvOps() []kernel.Registration {
	return []kernel.Registration{
		{Code: schema.BuiltinOperatorTRANSPOSE_CONV, Versions: tensor.VersionRange{Min: 1, Max: 3}, Types: []tensor.DType{tensor.Float32, tensor.Int8, tensor.Uint8, tensor.Int16}, Main: 2, New: newTransposeConv},
	}
}

// TRANSPOSE_CONV (TF 2.9 transpose_conv.cc, kGenericOptimized): inputs are
// the output shape (1-D int32 [4]), the weights [outC, fh, fw, inC] (OHWI),
// the input [N, H, W, inC] and, optionally, the bias [outC]. Types:
//   - FLOAT32 (float bias);
//   - UINT8 with per-tensor weights, int32 bias: one output multiplier;
//   - INT8 with per-channel (axis 0) or per-tensor int8 weights, int32 bias:
//     one multiplier per output channel; the weights' zero point is ignored,
//     as TFLite does;
//   - INT16 input/output (zero points 0) with int8 weights: with an int64
//     bias accumulated in 64 bits and scaled by the 64-bit
//     MultiplyByQuantizedMultiplier (TFLite's reference 16x8 kernel); with
//     an int32 bias or none, TF 2.9 accumulates in (wrapping) int32 and
//     scales with the 32-bit one, which is reproduced too.
//
// No fused activation (TF 2.9's options have none).
//
// Every input pixel is scattered into the output through the filter, as
// TFLite's GEMM + col2im do: out[oy, ox, o] += sum_c in[iy, ix, c] *
// w[o, fy, fx, c] with oy = iy*strideH + fy - padTop. Integer accumulation
// is exact, so quantized outputs equal TFLite's bit for bit; float sums
// follow the same per-output order except inside each dot product.
type transposeConv struct {
	padding          schema.Padding
	strideH, strideW int

	padT, padL int

	// Weights rearranged to [fh][fw][outC][inC] so that one filter tap is a
	// contiguous outC x inC matrix; quantized ones minus their zero point.
	wF []float32
	wQ []int32
	// Requantization, per output channel.
	mult  []int32
	shift []int
	// Scratch.
	inVec []int32
	acc32 []int32
	acc64 []int64
}

// newTransposeConv reads TRANSPOSE_CONV's builtin options (padding, strides).
func newTransposeConv(info kernel.OpInfo) (kernel.Op, error) {
	k := &transposeConv{}
	if tbl, ok := info.Options(schema.BuiltinOptionsTransposeConvOptions); ok {
		var o schema.TransposeConvOptions
		o.Init(tbl.Bytes, tbl.Pos)
		k.padding = o.Padding()
		k.strideH, k.strideW = int(o.StrideH()), int(o.StrideW())
	}
	return k, nil
}

type tconvTensors struct {
	shape, w, in, bias, out *tensor.Tensor
}

func (k *transposeConv) tensors(n *kernel.Node) (t tconvTensors, err error) {
	if (len(n.Inputs) != 3 && len(n.Inputs) != 4) || len(n.Outputs) != 1 {
		return t, fmt.Errorf("TRANSPOSE_CONV: want 3 or 4 inputs and 1 output, have %d and %d", len(n.Inputs), len(n.Outputs))
	}
	t = tconvTensors{shape: n.Inputs[0], w: n.Inputs[1], in: n.Inputs[2], bias: n.Input(3), out: n.Outputs[0]}
	if t.shape == nil || t.w == nil || t.in == nil || t.out == nil {
		return t, fmt.Errorf("TRANSPOSE_CONV: missing tensor")
	}
	return t, nil
}

func (k *transposeConv) Prepare(n *kernel.Node) error {
	t, err := k.tensors(n)
	if err != nil {
		return err
	}
	in, w, bias, out := t.in, t.w, t.bias, t.out
	if len(t.shape.Shape) != 1 || len(in.Shape) != 4 || len(w.Shape) != 4 {
		return fmt.Errorf("TRANSPOSE_CONV: output shape, weights and input of ranks %d, %d, %d, want 1, 4, 4",
			len(t.shape.Shape), len(w.Shape), len(in.Shape))
	}
	if t.shape.Type != tensor.Int32 || t.shape.NumElements() != 4 {
		return fmt.Errorf("TRANSPOSE_CONV: output shape is %s of %d elements, want 4 INT32", t.shape.Type, t.shape.NumElements())
	}
	switch in.Type {
	case tensor.Float32, tensor.Uint8, tensor.Int8:
		if w.Type != in.Type {
			return fmt.Errorf("TRANSPOSE_CONV: %s input with %s weights", in.Type, w.Type)
		}
	case tensor.Int16:
		if w.Type != tensor.Int8 {
			return fmt.Errorf("TRANSPOSE_CONV: INT16 input with %s weights, want INT8", w.Type)
		}
		if in.ZeroPoint() != 0 || out.ZeroPoint() != 0 {
			return fmt.Errorf("TRANSPOSE_CONV: INT16 zero points %d, %d, want 0", in.ZeroPoint(), out.ZeroPoint())
		}
	default:
		return kernel.Unsupported("TRANSPOSE_CONV: input type %s", in.Type)
	}
	if out.Type != in.Type {
		return fmt.Errorf("TRANSPOSE_CONV: %s input, %s output", in.Type, out.Type)
	}
	outC := w.Shape[0]
	if in.Shape[3] != w.Shape[3] {
		return fmt.Errorf("TRANSPOSE_CONV: input has %d channels, weights %d", in.Shape[3], w.Shape[3])
	}
	if bias != nil {
		want := map[tensor.DType]tensor.DType{tensor.Float32: tensor.Float32, tensor.Uint8: tensor.Int32, tensor.Int8: tensor.Int32, tensor.Int16: tensor.Int64}[in.Type]
		if bias.Type != want && !(in.Type == tensor.Int16 && bias.Type == tensor.Int32) {
			return fmt.Errorf("TRANSPOSE_CONV: %s bias for %s input, want %s", bias.Type, in.Type, want)
		}
		if (in.Type == tensor.Int8 || in.Type == tensor.Int16) && bias.ZeroPoint() != 0 {
			return fmt.Errorf("TRANSPOSE_CONV: bias zero point %d, want 0", bias.ZeroPoint())
		}
		if bias.NumElements() != outC {
			return fmt.Errorf("TRANSPOSE_CONV: %d biases for %d output channels", bias.NumElements(), outC)
		}
	}
	if k.strideH < 1 || k.strideW < 1 {
		return fmt.Errorf("TRANSPOSE_CONV: strides %dx%d", k.strideH, k.strideW)
	}
	if k.padding != schema.PaddingSAME && k.padding != schema.PaddingVALID {
		return kernel.Unsupported("TRANSPOSE_CONV: padding %d", k.padding)
	}
	if in.Type != tensor.Float32 {
		if err := k.prepareQuant(in, w, bias, out); err != nil {
			return err
		}
	}
	if w.Const {
		k.transposeWeights(w, in.Type)
	}
	k.inVec = kernel.Sized(k.inVec, in.Shape[3])
	if !t.shape.Const {
		out.Dynamic = true
		return nil
	}
	return k.resizeOutput(t, false)
}

// resizeOutput takes the output shape from the shape tensor, checks that it
// fits the input (the convolution of the output through the filter must
// give back the input's size, which TFLite's col2im assumes) and sizes the
// accumulators.
func (k *transposeConv) resizeOutput(t tconvTensors, eval bool) error {
	s := t.shape.Int32s()
	shape := []int{int(s[0]), int(s[1]), int(s[2]), int(s[3])}
	in, w := t.in, t.w
	if shape[0] != in.Shape[0] || shape[3] != w.Shape[0] || shape[1] < 0 || shape[2] < 0 {
		return fmt.Errorf("TRANSPOSE_CONV: output shape %v for input %v and weights %v", shape, in.Shape, w.Shape)
	}
	fh, fw := w.Shape[1], w.Shape[2]
	convH := kernel.ComputeOutSize(k.padding, shape[1], fh, k.strideH, 1)
	convW := kernel.ComputeOutSize(k.padding, shape[2], fw, k.strideW, 1)
	if convH != in.Shape[1] || convW != in.Shape[2] {
		return fmt.Errorf("TRANSPOSE_CONV: output %dx%d does not match a %dx%d input with %dx%d filter, strides %dx%d",
			shape[1], shape[2], in.Shape[1], in.Shape[2], fh, fw, k.strideH, k.strideW)
	}
	k.padT, _ = tensor.WindowPadding(k.strideH, 1, shape[1], fh, convH)
	k.padL, _ = tensor.WindowPadding(k.strideW, 1, shape[2], fw, convW)
	elems := tensor.NumElements(shape)
	switch {
	case in.Type == tensor.Float32:
	case k.wide(t):
		k.acc64 = kernel.Sized(k.acc64, elems)
	default:
		k.acc32 = kernel.Sized(k.acc32, elems)
	}
	if eval {
		t.out.SetShape(shape)
	} else {
		t.out.Shape = shape
	}
	return nil
}

// prepareQuant computes the per-output-channel multipliers as TFLite's
// PopulateConvolutionQuantizationParams does.
func (k *transposeConv) prepareQuant(in, w, bias, out *tensor.Tensor) error {
	outC := w.Shape[0]
	q := w.Quant
	if q == nil || len(q.Scale) == 0 {
		return fmt.Errorf("TRANSPOSE_CONV: quantized weights without scales")
	}
	perChannel := len(q.Scale) > 1
	if perChannel {
		if in.Type == tensor.Uint8 {
			return fmt.Errorf("TRANSPOSE_CONV: per-channel weights need INT8 or INT16 input, have UINT8")
		}
		if q.Axis != 0 || len(q.Scale) != outC {
			return kernel.Unsupported("TRANSPOSE_CONV: %d weight scales on axis %d for %d output channels", len(q.Scale), q.Axis, outC)
		}
	}
	k.mult = kernel.Sized(k.mult, outC)
	k.shift = kernel.Sized(k.shift, outC)
	if in.Type == tensor.Uint8 {
		// GetQuantizedConvolutionMultipler: the product of the scales is
		// taken in float32, then divided in double.
		if bias != nil {
			product := float64(in.Scale()) * float64(w.Scale())
			if math.Abs(product-float64(bias.Scale()))/float64(out.Scale()) > 0.02 {
				return fmt.Errorf("TRANSPOSE_CONV: bias scale %g far from input*weights scale %g", bias.Scale(), product)
			}
		}
		m, s := kernel.QuantizeMultiplier(float64(in.Scale()*w.Scale()) / float64(out.Scale()))
		for o := range k.mult {
			k.mult[o], k.shift[o] = m, s
		}
		return nil
	}
	for o := range k.mult {
		scale := q.Scale[0]
		if perChannel {
			scale = q.Scale[o]
		}
		k.mult[o], k.shift[o] = kernel.QuantizeMultiplier(float64(in.Scale()) * float64(scale) / float64(out.Scale()))
	}
	return nil
}

// transposeWeights rearranges OHWI weights into [fh][fw][outC][inC],
// subtracting the zero point of uint8 weights (int8 ones keep theirs
// ignored, as in TFLite).
func (k *transposeConv) transposeWeights(w *tensor.Tensor, inType tensor.DType) {
	outC, fh, fw, inC := w.Shape[0], w.Shape[1], w.Shape[2], w.Shape[3]
	n := outC * fh * fw * inC
	dst := func(o, y, x, c int) int { return ((y*fw+x)*outC+o)*inC + c }
	switch inType {
	case tensor.Float32:
		k.wF = kernel.Sized(k.wF, n)
		src := w.Float32s()
		i := 0
		for o := 0; o < outC; o++ {
			for y := 0; y < fh; y++ {
				for x := 0; x < fw; x++ {
					copy(k.wF[dst(o, y, x, 0):dst(o, y, x, 0)+inC], src[i:i+inC])
					i += inC
				}
			}
		}
	default:
		k.wQ = kernel.Sized(k.wQ, n)
		var get func(i int) int32
		if w.Type == tensor.Uint8 {
			src, zp := w.Uint8s(), w.ZeroPoint()
			get = func(i int) int32 { return int32(src[i]) - zp }
		} else {
			src := w.Int8s()
			get = func(i int) int32 { return int32(src[i]) }
		}
		i := 0
		for o := 0; o < outC; o++ {
			for y := 0; y < fh; y++ {
				for x := 0; x < fw; x++ {
					d := k.wQ[dst(o, y, x, 0) : dst(o, y, x, 0)+inC]
					for c := range d {
						d[c] = get(i)
						i++
					}
				}
			}
		}
	}
}

func (k *transposeConv) Eval(n *kernel.Node) error {
	t, err := k.tensors(n)
	if err != nil {
		return err
	}
	if t.out.Dynamic {
		if err := k.resizeOutput(t, true); err != nil {
			return err
		}
	}
	if !t.w.Const {
		k.transposeWeights(t.w, t.in.Type)
	}
	switch t.in.Type {
	case tensor.Float32:
		k.evalFloat(t)
	default:
		if k.wide(t) {
			k.evalInt(t, true)
			k.requantize64(t)
		} else {
			k.evalInt(t, false)
			k.requantize32(t)
		}
	}
	return nil
}

// wide reports whether the node accumulates in 64 bits: 16x8 with an int64
// bias. TF 2.9 runs 16x8 without a bias, or with an int32 one, through
// int32 accumulators (which wrap) and the 32-bit MultiplyByQuantizedMultiplier,
// as checked against its C library.
func (k *transposeConv) wide(t tconvTensors) bool {
	return t.in.Type == tensor.Int16 && t.bias != nil && t.bias.Type == tensor.Int64
}

// tconvGeom is the loop geometry shared by the kernels.
type tconvGeom struct {
	batch, inH, inW, inC, outH, outW, outC, fh, fw int
}

func (k *transposeConv) geom(t tconvTensors) tconvGeom {
	return tconvGeom{
		batch: t.in.Shape[0], inH: t.in.Shape[1], inW: t.in.Shape[2], inC: t.in.Shape[3],
		outH: t.out.Shape[1], outW: t.out.Shape[2], outC: t.out.Shape[3],
		fh: t.w.Shape[1], fw: t.w.Shape[2],
	}
}

// tapRange returns the filter taps [lo, hi) of an input row or column at
// origin (its first tap's output coordinate) that land inside [0, size).
func tapRange(origin, taps, size int) (lo, hi int) {
	return max(0, -origin), min(taps, size-origin)
}

func (k *transposeConv) evalFloat(t tconvTensors) {
	g := k.geom(t)
	in, out := t.in.Float32s(), t.out.Float32s()
	clear(out)
	blk := g.outC * g.inC
	for b := 0; b < g.batch; b++ {
		for iy := 0; iy < g.inH; iy++ {
			oy0 := iy*k.strideH - k.padT
			fy0, fy1 := tapRange(oy0, g.fh, g.outH)
			for ix := 0; ix < g.inW; ix++ {
				ox0 := ix*k.strideW - k.padL
				fx0, fx1 := tapRange(ox0, g.fw, g.outW)
				px := in[((b*g.inH+iy)*g.inW+ix)*g.inC:][:g.inC]
				for fy := fy0; fy < fy1; fy++ {
					row := (b*g.outH + oy0 + fy) * g.outW
					for fx := fx0; fx < fx1; fx++ {
						tap := fy*g.fw + fx
						wb := k.wF[tap*blk : (tap+1)*blk]
						acc := out[(row+ox0+fx)*g.outC:][:g.outC]
						for o := range acc {
							acc[o] += dotF32(px, wb[o*g.inC:(o+1)*g.inC])
						}
					}
				}
			}
		}
	}
	if t.bias != nil {
		bias := t.bias.Float32s()
		for i := 0; i < len(out); i += g.outC {
			row := out[i : i+g.outC]
			for o := range row {
				row[o] += bias[o]
			}
		}
	}
}

// inputPixel loads one input pixel minus the input zero point.
func (k *transposeConv) inputPixel(t tconvTensors, g tconvGeom, b, iy, ix int) []int32 {
	base := ((b*g.inH+iy)*g.inW + ix) * g.inC
	v := k.inVec[:g.inC]
	zp := t.in.ZeroPoint()
	switch t.in.Type {
	case tensor.Uint8:
		for c, x := range t.in.Uint8s()[base : base+g.inC] {
			v[c] = int32(x) - zp
		}
	case tensor.Int8:
		for c, x := range t.in.Int8s()[base : base+g.inC] {
			v[c] = int32(x) - zp
		}
	case tensor.Int16:
		for c, x := range t.in.Int16s()[base : base+g.inC] {
			v[c] = int32(x) - zp
		}
	}
	return v
}

// evalInt accumulates the quantized products, into k.acc32 (wrapping, as
// TFLite's int32 accumulators) or, when wide, into k.acc64.
func (k *transposeConv) evalInt(t tconvTensors, wide bool) {
	g := k.geom(t)
	n := t.out.NumElements()
	var acc32 []int32
	var acc64 []int64
	if wide {
		acc64 = k.acc64[:n]
		clear(acc64)
	} else {
		acc32 = k.acc32[:n]
		clear(acc32)
	}
	blk := g.outC * g.inC
	for b := 0; b < g.batch; b++ {
		for iy := 0; iy < g.inH; iy++ {
			oy0 := iy*k.strideH - k.padT
			fy0, fy1 := tapRange(oy0, g.fh, g.outH)
			for ix := 0; ix < g.inW; ix++ {
				ox0 := ix*k.strideW - k.padL
				fx0, fx1 := tapRange(ox0, g.fw, g.outW)
				px := k.inputPixel(t, g, b, iy, ix)
				for fy := fy0; fy < fy1; fy++ {
					row := (b*g.outH + oy0 + fy) * g.outW
					for fx := fx0; fx < fx1; fx++ {
						tap := fy*g.fw + fx
						wb := k.wQ[tap*blk : (tap+1)*blk]
						at := (row + ox0 + fx) * g.outC
						if wide {
							acc := acc64[at : at+g.outC]
							for o := range acc {
								acc[o] += dotI32To64(px, wb[o*g.inC:(o+1)*g.inC])
							}
						} else {
							acc := acc32[at : at+g.outC]
							for o := range acc {
								acc[o] += dotI32(px, wb[o*g.inC:(o+1)*g.inC])
							}
						}
					}
				}
			}
		}
	}
}

// dotF32 is a float32 dot product with four partial sums (like a SIMD
// GEMM, its summation order differs from a plain loop's in the last bits).
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += float32(a[i] * b[i])
		s1 += float32(a[i+1] * b[i+1])
		s2 += float32(a[i+2] * b[i+2])
		s3 += float32(a[i+3] * b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += float32(a[i] * b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// dotI32 is an int32 dot product; overflow wraps as in TFLite's int32
// accumulators.
func dotI32(a, b []int32) int32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 int32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// dotI32To64 sums int32 products (int16*int8 ones cannot overflow) in 64 bits.
func dotI32To64(a, b []int32) int64 {
	b = b[:len(a)]
	var s0, s1 int64
	i := 0
	for ; i+2 <= len(a); i += 2 {
		s0 += int64(a[i] * b[i])
		s1 += int64(a[i+1] * b[i+1])
	}
	for ; i < len(a); i++ {
		s0 += int64(a[i] * b[i])
	}
	return s0 + s1
}

// requantize32 adds the bias, scales each channel and clamps to the output
// type (TFLite's BiasAdd + Quantize).
func (k *transposeConv) requantize32(t tconvTensors) {
	outC := t.out.Shape[3]
	acc := k.acc32[:t.out.NumElements()]
	var bias []int32
	if t.bias != nil {
		bias = t.bias.Int32s()
	}
	zp := t.out.ZeroPoint()
	lo, hi, _ := tensor.QuantizedRange(t.out.Type)
	u8, i8, i16 := t.out.Uint8s(), t.out.Int8s(), t.out.Int16s()
	for i := 0; i < len(acc); i += outC {
		row := acc[i : i+outC]
		for o, a := range row {
			if bias != nil {
				a += bias[o]
			}
			v := min(max(kernel.MultiplyByQuantizedMultiplier(a, k.mult[o], k.shift[o])+zp, lo), hi)
			switch t.out.Type {
			case tensor.Uint8:
				u8[i+o] = uint8(v)
			case tensor.Int8:
				i8[i+o] = int8(v)
			default:
				i16[i+o] = int16(v)
			}
		}
	}
}

// requantize64 is the 16x8 variant with TFLite's 64-bit multiplier.
func (k *transposeConv) requantize64(t tconvTensors) {
	outC := t.out.Shape[3]
	acc := k.acc64[:t.out.NumElements()]
	var bias []int64
	if t.bias != nil {
		bias = t.bias.Int64s()
	}
	out := t.out.Int16s()
	for i := 0; i < len(acc); i += outC {
		row := acc[i : i+outC]
		for o, a := range row {
			if bias != nil {
				a += bias[o]
			}
			v := kernel.MultiplyByQuantizedMultiplier64(a, k.mult[o], k.shift[o])
			out[i+o] = int16(min(max(v, math.MinInt16), math.MaxInt16))
		}
	}
}
