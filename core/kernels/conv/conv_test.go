package conv

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// ---- test helpers -------------------------------------------------------

// convFillRand fills t with random values of its type in [lo, hi].
func convFillRand(r *rand.Rand, t *tensor.Tensor, lo, hi int) {
	n := t.NumElements()
	for i := range n {
		v := lo + r.IntN(hi-lo+1)
		switch t.Type {
		case tensor.Uint8:
			t.Uint8s()[i] = uint8(v)
		case tensor.Int8:
			t.Int8s()[i] = int8(v)
		case tensor.Int16:
			t.Int16s()[i] = int16(v)
		case tensor.Int32:
			t.Int32s()[i] = int32(v)
		case tensor.Int64:
			t.Int64s()[i] = int64(v)
		}
	}
}

func convFillRandF(r *rand.Rand, t *tensor.Tensor, scale float32) {
	for i := range t.Float32s() {
		t.Float32s()[i] = (r.Float32()*2 - 1) * scale
	}
}

// convInts reads an integer tensor as int64 values.
func convInts(t *tensor.Tensor) []int64 {
	n := t.NumElements()
	out := make([]int64, n)
	for i := range n {
		switch t.Type {
		case tensor.Uint8:
			out[i] = int64(t.Uint8s()[i])
		case tensor.Int8:
			out[i] = int64(t.Int8s()[i])
		case tensor.Int16:
			out[i] = int64(t.Int16s()[i])
		case tensor.Int32:
			out[i] = int64(t.Int32s()[i])
		case tensor.Int64:
			out[i] = t.Int64s()[i]
		}
	}
	return out
}

// convRefWindow computes the output size and leading padding of one spatial
// dimension from the definitions of SAME and VALID padding.
func convRefWindow(same bool, in, k, stride, dil int) (out, pad int) {
	eff := (k-1)*dil + 1
	if same {
		out = (in + stride - 1) / stride
		pad = max((out-1)*stride+eff-in, 0) / 2
		return
	}
	return (in-eff)/stride + 1, 0
}

// convFloorShift is floor(a / 2^s).
func convFloorShift(a int64, s uint) int64 {
	d := int64(1) << s
	q := a / d
	if a%d != 0 && a < 0 {
		q--
	}
	return q
}

// convRefScale applies a Q31 multiplier with exponent shift to acc. ruy rounds
// the final shift half up, TFLite half away from zero.
func convRefScale(acc int64, m int32, shift int, ruy bool) int64 {
	left, right := 0, 0
	if shift > 0 {
		left = shift
	} else {
		right = -shift
	}
	x := int64(int32(acc) << left)
	// Round x*m/2^31 to nearest, ties up.
	hi := convFloorShift(x*int64(m)+(1<<30), 31)
	if right == 0 {
		return hi
	}
	d := int64(1) << right
	q := convFloorShift(hi, uint(right))
	rem := hi - q*d // in [0, d)
	switch {
	case 2*rem > d:
		q++
	case 2*rem == d && (ruy || hi > 0):
		q++
	}
	return q
}

func convClampI(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

func convTypeRange(t tensor.DType) (int64, int64) {
	switch t {
	case tensor.Uint8:
		return 0, 255
	case tensor.Int8:
		return -128, 127
	case tensor.Int16:
		return -32768, 32767
	}
	return math.MinInt64, math.MaxInt64
}

// convRefActRange is the quantized clamp range of a fused activation.
func convRefActRange(act schema.ActivationFunctionType, typ tensor.DType, scale float32, zp int64) (int64, int64) {
	lo, hi := convTypeRange(typ)
	q := func(f float64) int64 { return zp + int64(math.Round(f/float64(scale))) }
	switch act {
	case schema.ActivationFunctionTypeRELU:
		return max(lo, q(0)), hi
	case schema.ActivationFunctionTypeRELU6:
		return max(lo, q(0)), min(hi, q(6))
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		return max(lo, q(-1)), min(hi, q(1))
	}
	return lo, hi
}

// convCase describes one convolution test.
type convCase struct {
	name               string
	batches, h, w, inC int
	outC, kh, kw       int
	strideH, strideW   int
	dilH, dilW         int
	same               bool
	act                schema.ActivationFunctionType
	noBias             bool
	mult               int // depthwise multiplier
	inZP, wZP, outZP   int64
	inScale, outScale  float32
	perChannel         bool
	depthwise          bool
	threads            int
	groups             int // grouped convolution when > 1
}

func (c convCase) padding() schema.Padding {
	if c.same {
		return schema.PaddingSAME
	}
	return schema.PaddingVALID
}

// convRefAcc returns the accumulators (sum (x-xzp)(w-wzp) + bias) of a
// convolution or depthwise convolution, NHWC, and the output shape: exact in
// int64, summed in (ky, kx, ic) order in float64.
func convRefAcc[T int64 | float64](c convCase, x, w, bias []T, xzp, wzp T) ([]T, []int) {
	oh, ph := convRefWindow(c.same, c.h, c.kh, c.strideH, c.dilH)
	ow, pw := convRefWindow(c.same, c.w, c.kw, c.strideW, c.dilW)
	outC := c.outC
	out := make([]T, c.batches*oh*ow*outC)
	for b := range c.batches {
		for oy := range oh {
			for ox := range ow {
				for oc := range outC {
					var acc T
					for ky := range c.kh {
						for kx := range c.kw {
							iy := oy*c.strideH - ph + ky*c.dilH
							ix := ox*c.strideW - pw + kx*c.dilW
							if iy < 0 || iy >= c.h || ix < 0 || ix >= c.w {
								continue
							}
							if c.depthwise {
								ic := oc / c.mult
								xv := x[((b*c.h+iy)*c.w+ix)*c.inC+ic]
								wv := w[(ky*c.kw+kx)*outC+oc]
								acc += (xv - xzp) * (wv - wzp)
								continue
							}
							fd := c.inC / c.groups
							grp := oc / (outC / c.groups)
							for ic := range fd {
								xv := x[((b*c.h+iy)*c.w+ix)*c.inC+grp*fd+ic]
								wv := w[((oc*c.kh+ky)*c.kw+kx)*fd+ic]
								acc += (xv - xzp) * (wv - wzp)
							}
						}
					}
					if bias != nil {
						acc += bias[oc]
					}
					out[((b*oh+oy)*ow+ox)*outC+oc] = acc
				}
			}
		}
	}
	return out, []int{c.batches, oh, ow, outC}
}

func (c convCase) filterShape() []int {
	if c.depthwise {
		return []int{1, c.kh, c.kw, c.outC}
	}
	return []int{c.outC, c.kh, c.kw, c.inC / c.groups}
}

func (c convCase) newOp() kernel.Op {
	if c.depthwise {
		return &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: c.padding(), StrideW: c.strideW, StrideH: c.strideH,
			DepthMultiplier: c.mult, DilationW: c.dilW, DilationH: c.dilH, Activation: c.act}}
	}
	return &Conv2D{Params: Conv2DParams{Padding: c.padding(), StrideW: c.strideW, StrideH: c.strideH,
		DilationW: c.dilW, DilationH: c.dilH, Activation: c.act}}
}

func (c convCase) withDefaults() convCase {
	if c.batches == 0 {
		c.batches = 1
	}
	if c.strideH == 0 {
		c.strideH, c.strideW = 1, 1
	}
	if c.dilH == 0 {
		c.dilH, c.dilW = 1, 1
	}
	if c.mult == 0 {
		c.mult = 1
	}
	if c.depthwise {
		c.outC = c.inC * c.mult
	}
	if c.threads == 0 {
		c.threads = 1
	}
	if c.groups == 0 {
		c.groups = 1
	}
	if c.inScale == 0 {
		c.inScale = 0.05
	}
	if c.outScale == 0 {
		c.outScale = 0.1
	}
	return c
}

var convCases = []convCase{
	{name: "1x1", h: 5, w: 6, inC: 7, outC: 9, kh: 1, kw: 1, same: true},
	{name: "1x1 many channels", h: 4, w: 4, inC: 24, outC: 37, kh: 1, kw: 1, same: true},
	{name: "3x3 same", h: 7, w: 6, inC: 3, outC: 5, kh: 3, kw: 3, same: true},
	{name: "3x3 valid", h: 7, w: 6, inC: 4, outC: 6, kh: 3, kw: 3},
	{name: "3x3 stride 2 same", h: 9, w: 8, inC: 3, outC: 8, kh: 3, kw: 3, strideH: 2, strideW: 2, same: true},
	{name: "2x3 stride 2x1 valid", h: 9, w: 8, inC: 2, outC: 3, kh: 2, kw: 3, strideH: 2, strideW: 1},
	{name: "3x3 dilation 2 same", h: 9, w: 9, inC: 3, outC: 4, kh: 3, kw: 3, dilH: 2, dilW: 2, same: true},
	{name: "3x3 dilation 2 valid", h: 9, w: 10, inC: 2, outC: 4, kh: 3, kw: 3, dilH: 2, dilW: 2},
	{name: "1x1 stride 2", h: 6, w: 6, inC: 5, outC: 6, kh: 1, kw: 1, strideH: 2, strideW: 2},
	{name: "no bias relu", h: 5, w: 5, inC: 6, outC: 7, kh: 3, kw: 3, same: true, noBias: true, act: schema.ActivationFunctionTypeRELU},
	{name: "relu6 batch 2", batches: 2, h: 5, w: 4, inC: 5, outC: 6, kh: 3, kw: 3, same: true, act: schema.ActivationFunctionTypeRELU6},
	{name: "relu_n1_to_1", h: 4, w: 5, inC: 3, outC: 4, kh: 2, kw: 2, same: true, act: schema.ActivationFunctionTypeRELU_N1_TO_1},
	{name: "saturating", h: 5, w: 5, inC: 8, outC: 6, kh: 3, kw: 3, same: true, outScale: 0.004},
	{name: "4 threads", batches: 2, h: 9, w: 7, inC: 6, outC: 10, kh: 3, kw: 3, same: true, threads: 4},
	{name: "4 threads few rows", h: 1, w: 3, inC: 20, outC: 40, kh: 1, kw: 1, same: true, threads: 4},
}

var depthwiseCases = []convCase{
	{name: "3x3 same", h: 6, w: 7, inC: 5, kh: 3, kw: 3, same: true},
	{name: "3x3 valid", h: 6, w: 7, inC: 4, kh: 3, kw: 3},
	{name: "3x3 stride 2", h: 9, w: 8, inC: 6, kh: 3, kw: 3, strideH: 2, strideW: 2, same: true},
	{name: "multiplier 2", h: 5, w: 5, inC: 3, kh: 3, kw: 3, same: true, mult: 2},
	{name: "dilation 2", h: 9, w: 9, inC: 4, kh: 3, kw: 3, dilH: 2, dilW: 2, same: true},
	{name: "5x5 relu6 no bias", h: 7, w: 6, inC: 3, kh: 5, kw: 5, same: true, noBias: true, act: schema.ActivationFunctionTypeRELU6},
	{name: "7x7 valid (lane flushes)", h: 9, w: 10, inC: 3, kh: 7, kw: 7, outScale: 0.5},
	{name: "7x5 stride 3x2 same", h: 11, w: 10, inC: 2, kh: 7, kw: 5, strideH: 3, strideW: 2, same: true, mult: 3},
	{name: "batch 2 relu", batches: 2, h: 5, w: 4, inC: 8, kh: 3, kw: 3, same: true, act: schema.ActivationFunctionTypeRELU},
	{name: "saturating", h: 5, w: 5, inC: 6, kh: 3, kw: 3, same: true, outScale: 0.002},
	{name: "4 threads", batches: 2, h: 8, w: 6, inC: 7, kh: 3, kw: 3, same: true, threads: 4, mult: 2},
}

// ---- float ----------------------------------------------------------------

func testFloatConv(t *testing.T, c convCase) {
	c = c.withDefaults()
	r := rand.New(rand.NewPCG(1, uint64(len(c.name))))
	in := tensor.NewTensor(tensor.Float32, c.batches, c.h, c.w, c.inC)
	filter := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, c.filterShape()...))
	convFillRandF(r, in, 1)
	convFillRandF(r, filter, 1)
	var bias *tensor.Tensor
	if !c.noBias {
		bias = kerneltest.ConstT(tensor.NewTensor(tensor.Float32, c.outC))
		convFillRandF(r, bias, 1)
	}
	out := tensor.NewTensor(tensor.Float32)
	kerneltest.MustRun(t, c.newOp(), c.threads, out, in, filter, bias)

	// Reference in float64.
	var biasV []float64
	if bias != nil {
		biasV = kerneltest.Values(bias)
	}
	acc, shape := convRefAcc(c, kerneltest.Values(in), kerneltest.Values(filter), biasV, 0, 0)
	if fmt.Sprint(out.Shape) != fmt.Sprint(shape) {
		t.Fatalf("shape %v, want %v", out.Shape, shape)
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	switch c.act {
	case schema.ActivationFunctionTypeRELU:
		lo = 0
	case schema.ActivationFunctionTypeRELU6:
		lo, hi = 0, 6
	case schema.ActivationFunctionTypeRELU_N1_TO_1:
		lo, hi = -1, 1
	}
	got := out.Float32s()
	for i, a := range acc {
		want := min(max(a, lo), hi)
		g := float64(got[i])
		if math.Abs(g-want) > 1e-5*max(1, math.Abs(want)) {
			t.Fatalf("out[%d] (of shape %v) = %v, want %v", i, shape, g, want)
		}
	}
}

func TestConv2DFloat(t *testing.T) {
	for _, c := range convCases {
		t.Run(c.name, func(t *testing.T) { testFloatConv(t, c) })
	}
}

func TestDepthwiseConv2DFloat(t *testing.T) {
	for _, c := range depthwiseCases {
		c.depthwise = true
		t.Run(c.name, func(t *testing.T) { testFloatConv(t, c) })
	}
}

// ---- quantized ----------------------------------------------------------

// testQuantConv runs a UINT8 or INT8 conv/depthwise case and compares the
// output bytes with the reference.
func testQuantConv(t *testing.T, c convCase, typ tensor.DType) {
	c = c.withDefaults()
	r := rand.New(rand.NewPCG(2, uint64(len(c.name))*7+uint64(typ)))
	lo, hi := convTypeRange(typ)
	inZP, wZP, outZP := int64(0), int64(0), int64(0)
	if typ == tensor.Uint8 {
		inZP, wZP, outZP = 128+int64(r.IntN(40))-20, 128+int64(r.IntN(40))-20, 128+int64(r.IntN(40))-20
	} else {
		inZP, outZP = int64(r.IntN(40))-20, int64(r.IntN(40))-20
	}
	in := kerneltest.QT(typ, []int{c.batches, c.h, c.w, c.inC}, c.inScale, inZP)
	convFillRand(r, in, int(lo), int(hi))
	filter := kerneltest.ConstT(kerneltest.QT(typ, c.filterShape(), 0.02, wZP))
	convFillRand(r, filter, int(lo), int(hi))
	fscales := []float32{0.02}
	if c.perChannel {
		fscales = make([]float32, c.outC)
		zps := make([]int64, c.outC)
		for i := range fscales {
			fscales[i] = 0.005 + 0.03*r.Float32()
		}
		axis := 0
		if c.depthwise {
			axis = 3
		}
		filter.Quant = &tensor.Quantization{Scale: fscales, ZeroPoint: zps, Axis: axis}
	}
	var bias *tensor.Tensor
	var biasV []int64
	if !c.noBias {
		bias = kerneltest.ConstT(kerneltest.QT(tensor.Int32, []int{c.outC}, c.inScale*fscales[0], 0))
		convFillRand(r, bias, -3000, 3000)
		biasV = convInts(bias)
	}
	out := kerneltest.QT(typ, nil, c.outScale, outZP)
	kerneltest.MustRun(t, c.newOp(), c.threads, out, in, filter, bias)

	effWZP := wZP
	if typ == tensor.Int8 {
		effWZP = 0
	}
	acc, shape := convRefAcc(c, convInts(in), convInts(filter), biasV, inZP, effWZP)
	if fmt.Sprint(out.Shape) != fmt.Sprint(shape) {
		t.Fatalf("shape %v, want %v", out.Shape, shape)
	}
	alo, ahi := convRefActRange(c.act, typ, c.outScale, outZP)
	got := convInts(out)
	ruy := !c.depthwise
	for i, a := range acc {
		oc := i % c.outC
		var real float64
		if typ == tensor.Uint8 {
			real = float64(c.inScale*fscales[0]) / float64(c.outScale)
		} else {
			fs := fscales[0]
			if c.perChannel {
				fs = fscales[oc]
			}
			real = float64(c.inScale) * float64(fs) / float64(c.outScale)
		}
		m, shift := kernel.QuantizeMultiplier(real)
		want := convClampI(convRefScale(a, m, shift, ruy)+outZP, alo, ahi)
		if got[i] != want {
			t.Fatalf("out[%d] (channel %d, acc %d) = %d, want %d", i, oc, a, got[i], want)
		}
	}
}

func TestConv2DQuantized(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
		for _, c := range convCases {
			t.Run(fmt.Sprintf("%s/%s", typ, c.name), func(t *testing.T) { testQuantConv(t, c, typ) })
		}
	}
	for _, c := range convCases {
		c.perChannel = true
		t.Run("INT8 per-channel/"+c.name, func(t *testing.T) { testQuantConv(t, c, tensor.Int8) })
	}
}

func TestDepthwiseConv2DQuantized(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
		for _, c := range depthwiseCases {
			c.depthwise = true
			t.Run(fmt.Sprintf("%s/%s", typ, c.name), func(t *testing.T) { testQuantConv(t, c, typ) })
		}
	}
	for _, c := range depthwiseCases {
		c.depthwise, c.perChannel = true, true
		t.Run("INT8 per-channel/"+c.name, func(t *testing.T) { testQuantConv(t, c, tensor.Int8) })
	}
}

// TestRequantRoundingTies checks the two rounding flavours where they
// differ: a multiplier of 0.25 (Q31 2^30, exponent -1) is applied as a
// rounding doubling high multiply (x/2, ties up) followed by a rounding shift
// by one, which CONV_2D (ruy) rounds half up and DEPTHWISE_CONV_2D (TFLite)
// half away from zero.
func TestRequantRoundingTies(t *testing.T) {
	for _, depthwise := range []bool{false, true} {
		in := kerneltest.QT(tensor.Uint8, []int{1, 1, 8, 1}, 0.25, 100)
		copy(in.Uint8s(), []uint8{97, 98, 99, 101, 102, 103, 94, 106}) // -3 -2 -1 1 2 3 -6 6
		filter := kerneltest.ConstT(kerneltest.QT(tensor.Uint8, []int{1, 1, 1, 1}, 1, 0))
		filter.Uint8s()[0] = 1
		out := kerneltest.QT(tensor.Uint8, nil, 1, 50)
		var op kernel.Op = &Conv2D{Params: Conv2DParams{Padding: schema.PaddingVALID, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
		// x/2 rounded half up: -1 -1 0 1 1 2 -3 3; then /2 half up.
		want := []uint8{50, 50, 50, 51, 51, 51, 49, 52}
		if depthwise {
			op = &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: schema.PaddingVALID, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationW: 1, DilationH: 1}}
			// then /2 half away from zero.
			want = []uint8{49, 49, 50, 51, 51, 51, 48, 52}
		}
		kerneltest.MustRun(t, op, 1, out, in, filter, nil)
		if !bytes.Equal(out.Uint8s(), want) {
			t.Errorf("depthwise=%v: got %v, want %v", depthwise, out.Uint8s(), want)
		}
	}
}

// TestConv2DHandValues checks a small float convolution against values
// worked out by hand.
func TestConv2DHandValues(t *testing.T) {
	in := tensor.NewTensor(tensor.Float32, 1, 3, 3, 1)
	copy(in.Float32s(), []float32{1, 2, 3, 4, 5, 6, 7, 8, 9})
	filter := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 1, 2, 2, 1))
	copy(filter.Float32s(), []float32{1, 0, 0, -1})
	bias := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 1))
	bias.Float32s()[0] = 0.5
	out := tensor.NewTensor(tensor.Float32)
	op := &Conv2D{Params: Conv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
	kerneltest.MustRun(t, op, 1, out, in, filter, bias)
	// SAME with a 2x2 filter pads one row/column at the end:
	// out[y][x] = in[y][x] - in[y+1][x+1] + 0.5 (0 outside).
	want := []float32{-3.5, -3.5, 3.5, -3.5, -3.5, 6.5, 7.5, 8.5, 9.5}
	for i, v := range out.Float32s() {
		if v != want[i] {
			t.Fatalf("got %v, want %v", out.Float32s(), want)
		}
	}
}

// ---- threads ------------------------------------------------------------

func TestConvThreadsIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, typ := range []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int8} {
		for _, dw := range []bool{false, true} {
			c := convCase{batches: 2, h: 13, w: 11, inC: 16, outC: 24, kh: 3, kw: 3, same: true, strideH: 1, strideW: 1, dilH: 1, dilW: 1, depthwise: dw, mult: 1, groups: 1}
			if dw {
				c.outC = c.inC
			}
			var in, filter, bias *tensor.Tensor
			if typ == tensor.Float32 {
				in = tensor.NewTensor(tensor.Float32, c.batches, c.h, c.w, c.inC)
				filter = kerneltest.ConstT(tensor.NewTensor(tensor.Float32, c.filterShape()...))
				bias = kerneltest.ConstT(tensor.NewTensor(tensor.Float32, c.outC))
				convFillRandF(r, in, 1)
				convFillRandF(r, filter, 1)
				convFillRandF(r, bias, 1)
			} else {
				lo, hi := convTypeRange(typ)
				in = kerneltest.QT(typ, []int{c.batches, c.h, c.w, c.inC}, 0.05, 3)
				filter = kerneltest.ConstT(kerneltest.QT(typ, c.filterShape(), 0.02, 0))
				bias = kerneltest.ConstT(kerneltest.QT(tensor.Int32, []int{c.outC}, 0.001, 0))
				convFillRand(r, in, int(lo), int(hi))
				convFillRand(r, filter, int(lo), int(hi))
				convFillRand(r, bias, -1000, 1000)
			}
			var ref []byte
			for _, th := range []int{1, 2, 3, 4, 7} {
				out := kerneltest.QT(typ, nil, 0.1, 1)
				if typ == tensor.Float32 {
					out = tensor.NewTensor(tensor.Float32)
				}
				kerneltest.MustRun(t, c.newOp(), th, out, in, filter, bias)
				if ref == nil {
					ref = bytes.Clone(out.Data)
				} else if !bytes.Equal(ref, out.Data) {
					t.Errorf("%s depthwise=%v: %d threads differ from 1 thread", typ, dw, th)
				}
			}
		}
	}
}

// ---- 16x8 -------------------------------------------------------------

func TestConvInt16(t *testing.T) {
	for _, dw := range []bool{false, true} {
		cases := convCases
		if dw {
			cases = depthwiseCases
		}
		for _, c := range cases {
			c.depthwise = dw
			c = c.withDefaults()
			t.Run(fmt.Sprintf("dw=%v/%s", dw, c.name), func(t *testing.T) {
				r := rand.New(rand.NewPCG(5, uint64(len(c.name))))
				in := kerneltest.QT(tensor.Int16, []int{c.batches, c.h, c.w, c.inC}, 0.001, 0)
				convFillRand(r, in, -32768, 32767)
				filter := kerneltest.ConstT(kerneltest.QT(tensor.Int8, c.filterShape(), 0.02, 0))
				convFillRand(r, filter, -127, 127)
				fscales := make([]float32, c.outC)
				for i := range fscales {
					fscales[i] = 0.005 + 0.03*r.Float32()
				}
				axis := 0
				if dw {
					axis = 3
				}
				filter.Quant = &tensor.Quantization{Scale: fscales, ZeroPoint: make([]int64, c.outC), Axis: axis}
				var bias *tensor.Tensor
				var biasV []int64
				if !c.noBias {
					bias = kerneltest.ConstT(kerneltest.QT(tensor.Int64, []int{c.outC}, 1e-5, 0))
					convFillRand(r, bias, -1<<20, 1<<20)
					biasV = convInts(bias)
				}
				outScale := float32(0.002)
				if c.outScale < 0.05 {
					outScale = 0.0001 // saturates
				}
				out := kerneltest.QT(tensor.Int16, nil, outScale, 0)
				kerneltest.MustRun(t, c.newOp(), c.threads, out, in, filter, bias)
				acc, _ := convRefAcc(c, convInts(in), convInts(filter), biasV, 0, 0)
				alo, ahi := convRefActRange(c.act, tensor.Int16, outScale, 0)
				got := convInts(out)
				for i, a := range acc {
					oc := i % c.outC
					m, shift := kernel.QuantizeMultiplier(float64(float32(0.001)) * float64(fscales[oc]) / float64(outScale))
					var v int64
					if bias != nil || dw {
						// INT64 bias (and any depthwise): the reference
						// kernel's 16-bit multiplier, one rounding shift.
						rm := int64((m + (1 << 15)) >> 16)
						if m >= 0x7FFF0000 {
							rm = 0x7FFF
						}
						total := uint(15 - shift)
						v = convFloorShift(a*rm+(1<<(total-1)), total)
					} else {
						// No bias: ruy's portable kernel, one rounding.
						total := uint(31 - shift)
						v = convFloorShift(a*int64(m)+(1<<(total-1)), total)
					}
					want := convClampI(int64(int32(v)), alo, ahi)
					if got[i] != want {
						t.Fatalf("out[%d] = %d, want %d", i, got[i], want)
					}
				}
			})
		}
	}
}

// ---- FULLY_CONNECTED -------------------------------------------------------

func TestFullyConnectedFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 7))
	for _, tc := range []struct {
		inShape []int
		units   int
		keep    bool
		noBias  bool
		act     schema.ActivationFunctionType
		want    []int
		threads int
	}{
		{inShape: []int{1, 10}, units: 3, want: []int{1, 3}},
		{inShape: []int{4, 2, 5}, units: 7, want: []int{8, 7}, act: schema.ActivationFunctionTypeRELU},
		{inShape: []int{4, 2, 5}, units: 7, keep: true, want: []int{4, 2, 7}, noBias: true},
		{inShape: []int{9, 33}, units: 13, want: []int{9, 13}, act: schema.ActivationFunctionTypeRELU6, threads: 3},
		{inShape: []int{2, 40}, units: 50, want: []int{2, 50}, threads: 4},
	} {
		depth := tc.inShape[len(tc.inShape)-1]
		in := tensor.NewTensor(tensor.Float32, tc.inShape...)
		convFillRandF(r, in, 2)
		w := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, tc.units, depth))
		convFillRandF(r, w, 1)
		var bias *tensor.Tensor
		if !tc.noBias {
			bias = kerneltest.ConstT(tensor.NewTensor(tensor.Float32, tc.units))
			convFillRandF(r, bias, 1)
		}
		out := tensor.NewTensor(tensor.Float32)
		op := &FullyConnected{Params: FullyConnectedParams{Activation: tc.act, KeepNumDims: tc.keep}}
		kerneltest.MustRun(t, op, max(tc.threads, 1), out, in, w, bias)
		if fmt.Sprint(out.Shape) != fmt.Sprint(tc.want) {
			t.Fatalf("shape %v, want %v", out.Shape, tc.want)
		}
		lo, hi := math.Inf(-1), math.Inf(1)
		if tc.act == schema.ActivationFunctionTypeRELU {
			lo = 0
		} else if tc.act == schema.ActivationFunctionTypeRELU6 {
			lo, hi = 0, 6
		}
		rows := in.NumElements() / depth
		for b := range rows {
			for u := range tc.units {
				var acc float64
				for k := range depth {
					acc += float64(in.Float32s()[b*depth+k]) * float64(w.Float32s()[u*depth+k])
				}
				if bias != nil {
					acc += float64(bias.Float32s()[u])
				}
				want := min(max(acc, lo), hi)
				if g := float64(out.Float32s()[b*tc.units+u]); math.Abs(g-want) > 1e-5*max(1, math.Abs(want)) {
					t.Fatalf("out[%d,%d] = %v, want %v", b, u, g, want)
				}
			}
		}
	}
}

func TestFullyConnectedQuantized(t *testing.T) {
	r := rand.New(rand.NewPCG(8, 9))
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16} {
		for _, tc := range []struct {
			rows, depth, units int
			noBias             bool
			act                schema.ActivationFunctionType
			outScale           float32
			threads            int
		}{
			{rows: 1, depth: 560, units: 10},
			{rows: 3, depth: 17, units: 9, act: schema.ActivationFunctionTypeRELU},
			{rows: 6, depth: 33, units: 21, noBias: true, act: schema.ActivationFunctionTypeRELU6, threads: 3},
			{rows: 5, depth: 20, units: 12, outScale: 0.001}, // saturates
			{rows: 2, depth: 64, units: 40, threads: 4},
		} {
			t.Run(fmt.Sprintf("%s/%dx%dx%d", typ, tc.rows, tc.depth, tc.units), func(t *testing.T) {
				lo, hi := convTypeRange(typ)
				inZP, wZP, outZP := int64(0), int64(0), int64(0)
				inScale, wScale, outScale := float32(0.05), float32(0.01), float32(0.2)
				if tc.outScale != 0 {
					outScale = tc.outScale
				}
				biasT := tensor.Int32
				switch typ {
				case tensor.Uint8:
					inZP, wZP, outZP = 120, 135, 128
				case tensor.Int8:
					inZP, wZP, outZP = -5, 3, 7
				case tensor.Int16:
					wZP, biasT = 0, tensor.Int64
					inScale, outScale = 0.001, outScale/20
				}
				in := kerneltest.QT(typ, []int{tc.rows, tc.depth}, inScale, inZP)
				convFillRand(r, in, int(lo), int(hi))
				wt := typ
				if typ == tensor.Int16 {
					wt = tensor.Int8
				}
				w := kerneltest.ConstT(kerneltest.QT(wt, []int{tc.units, tc.depth}, wScale, wZP))
				wlo, whi := convTypeRange(wt)
				convFillRand(r, w, int(wlo), int(whi))
				var bias *tensor.Tensor
				var bv []int64
				if !tc.noBias {
					bias = kerneltest.ConstT(kerneltest.QT(biasT, []int{tc.units}, inScale*wScale, 0))
					convFillRand(r, bias, -5000, 5000)
					bv = convInts(bias)
				}
				out := kerneltest.QT(typ, nil, outScale, outZP)
				op := &FullyConnected{Params: FullyConnectedParams{Activation: tc.act}}
				kerneltest.MustRun(t, op, max(tc.threads, 1), out, in, w, bias)
				if fmt.Sprint(out.Shape) != fmt.Sprint([]int{tc.rows, tc.units}) {
					t.Fatalf("shape %v", out.Shape)
				}
				x, wv, got := convInts(in), convInts(w), convInts(out)
				m, shift := kernel.QuantizeMultiplier(float64(inScale*wScale) / float64(outScale))
				alo, ahi := convRefActRange(tc.act, typ, outScale, outZP)
				for b := range tc.rows {
					for u := range tc.units {
						var acc int64
						for k := range tc.depth {
							acc += (x[b*tc.depth+k] - inZP) * (wv[u*tc.depth+k] - wZP)
						}
						if bv != nil {
							acc += bv[u]
						}
						var v int64
						switch {
						case typ == tensor.Int16 && bias != nil:
							// INT64 bias: the reference kernel's 16-bit multiplier.
							rm := int64((m + (1 << 15)) >> 16)
							total := uint(15 - shift)
							v = convFloorShift(acc*rm+(1<<(total-1)), total)
						case typ == tensor.Int16:
							// No bias: ruy's portable kernel, one rounding.
							total := uint(31 - shift)
							v = convFloorShift(acc*int64(m)+(1<<(total-1)), total)
						default:
							v = convRefScale(acc, m, shift, true)
						}
						want := convClampI(v+outZP, alo, ahi)
						if g := got[b*tc.units+u]; g != want {
							t.Fatalf("out[%d,%d] = %d, want %d (acc %d)", b, u, g, want, acc)
						}
					}
				}
			})
		}
	}
}

func TestFullyConnectedHybrid(t *testing.T) {
	r := rand.New(rand.NewPCG(10, 11))
	for _, asym := range []bool{false, true} {
		rows, depth, units := 3, 37, 11
		in := tensor.NewTensor(tensor.Float32, rows, depth)
		convFillRandF(r, in, 3)
		w := kerneltest.ConstT(kerneltest.QT(tensor.Int8, []int{units, depth}, 0.02, 0))
		convFillRand(r, w, -127, 127)
		bias := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, units))
		convFillRandF(r, bias, 1)
		out := tensor.NewTensor(tensor.Float32)
		op := &FullyConnected{Params: FullyConnectedParams{AsymmetricQuantizeInputs: asym}}
		kerneltest.MustRun(t, op, 1, out, in, w, bias)
		for b := range rows {
			x := in.Float32s()[b*depth : (b+1)*depth]
			// Quantize the row as TFLite does.
			q := make([]int64, depth)
			var sf float32
			var zp int64
			if asym {
				mn, mx := 0.0, 0.0
				for _, v := range x {
					mn, mx = math.Min(mn, float64(v)), math.Max(mx, float64(v))
				}
				scale := (mx - mn) / 255
				zpMin, zpMax := -128-mn/scale, 127-mx/scale
				zpd := zpMax
				if 128+math.Abs(mn/scale) < 127+math.Abs(mx/scale) {
					zpd = zpMin
				}
				zp = int64(math.Round(min(max(zpd, -128), 127)))
				sf = float32(scale)
				for i, v := range x {
					q[i] = convClampI(int64(math.Round(float64(float32(zp)+v*(1/sf)))), -128, 127)
				}
			} else {
				var r float32
				for _, v := range x {
					r = max(r, float32(math.Abs(float64(v))))
				}
				sf = r / 127
				for i, v := range x {
					q[i] = int64(math.Round(float64(v * (127 / r))))
				}
			}
			for u := range units {
				var dot int64
				for k := range depth {
					dot += (q[k] - zp) * int64(w.Int8s()[u*depth+k])
				}
				want := bias.Float32s()[u] + float32(dot)*(sf*0.02)
				if g := out.Float32s()[b*units+u]; g != want {
					t.Fatalf("asym=%v out[%d,%d] = %v, want %v", asym, b, u, g, want)
				}
			}
		}
	}
}

func TestSymmetricQuantize(t *testing.T) {
	v := []float32{-2.54, 0, 1.27, 0.005, 0.01}
	q := make([]int8, len(v))
	s := kernel.SymmetricQuantize(v, q)
	if s != float32(2.54)/127 {
		t.Errorf("scale %v", s)
	}
	want := []int8{-127, 0, 64, 0, 0} // 1.27*127/2.54 = 63.5 -> 64; 0.01*50 = 0.5 -> round half away = 1?
	want[4] = int8(math.Round(float64(float32(0.01) * (127 / float32(2.54)))))
	for i := range q {
		if q[i] != want[i] {
			t.Fatalf("got %v, want %v", q, want)
		}
	}
	zero := make([]int8, 3)
	if s := kernel.SymmetricQuantize([]float32{0, 0, 0}, zero); s != 1 {
		t.Errorf("all-zero scale %v, want 1", s)
	}
	sf, zp := kernel.AsymmetricQuantize([]float32{0, 1, 2, 2.55}, q[:4])
	if math.Abs(float64(sf)-2.55/255) > 1e-9 || zp != -128 {
		t.Errorf("asymmetric scale %v zero point %d", sf, zp)
	}
	if q[0] != -128 || q[3] != 127 {
		t.Errorf("asymmetric values %v", q[:4])
	}
}

// ---- errors and registration -----------------------------------------------

func TestConvErrors(t *testing.T) {
	base := func() (*tensor.Tensor, *tensor.Tensor, *tensor.Tensor) {
		return tensor.NewTensor(tensor.Float32, 1, 4, 4, 3), kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 2, 3, 3, 3)), kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 2))
	}
	p := Conv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}
	prep := func(op kernel.Op, ins ...*tensor.Tensor) error {
		return op.Prepare(&kernel.Node{Inputs: ins, Outputs: []*tensor.Tensor{tensor.NewTensor(ins[0].Type)}, Threads: 1})
	}
	in, f, b := base()
	if err := prep(&Conv2D{Params: p}, in, f, kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 3))); err == nil {
		t.Error("bias of wrong size accepted")
	}
	if err := prep(&Conv2D{Params: p}, in, kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 2, 3, 3, 4)), b); err == nil {
		t.Error("filter depth mismatch accepted")
	}
	if err := prep(&Conv2D{Params: p}, tensor.NewTensor(tensor.Float32, 4, 4, 3), f, b); err == nil {
		t.Error("3-D input accepted")
	}
	bad := p
	bad.StrideW = 0
	if err := prep(&Conv2D{Params: bad}, in, f, b); err == nil {
		t.Error("zero stride accepted")
	}
	valid := p
	valid.Padding = schema.PaddingVALID
	if err := prep(&Conv2D{Params: valid}, tensor.NewTensor(tensor.Float32, 1, 2, 2, 3), kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 2, 5, 5, 3)), b); err == nil {
		t.Error("filter larger than VALID input accepted")
	}
	tanh := p
	tanh.Activation = schema.ActivationFunctionTypeTANH
	if err := prep(&Conv2D{Params: tanh}, in, f, b); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("TANH activation: %v, want ErrUnsupported", err)
	}
	if _, err := newConv2D(kernel.OpInfo{}); err != nil {
		t.Errorf("newConv2D with schema defaults: %v", err)
	}
	// Depthwise: filter depth must be a multiple of the input depth.
	dw := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DepthMultiplier: 1, DilationW: 1, DilationH: 1}}
	if err := prep(dw, in, kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 1, 3, 3, 4)), nil); err == nil {
		t.Error("depthwise filter depth 4 for input depth 3 accepted")
	}
	// FC: input not a multiple of the depth, weights not 2-D.
	fc := &FullyConnected{}
	if err := prep(fc, tensor.NewTensor(tensor.Float32, 2, 5), kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 3, 4)), nil); err == nil {
		t.Error("FC input 2x5 with depth 4 accepted")
	}
	if err := prep(fc, tensor.NewTensor(tensor.Float32, 2, 4), kerneltest.ConstT(tensor.NewTensor(tensor.Float32, 3, 4, 1)), nil); err == nil {
		t.Error("3-D FC weights accepted")
	}
	// Quantized: bias must be INT32, and uint8 bias scale must match.
	qin := kerneltest.QT(tensor.Uint8, []int{1, 4, 4, 3}, 0.5, 128)
	qf := kerneltest.ConstT(kerneltest.QT(tensor.Uint8, []int{2, 3, 3, 3}, 0.1, 128))
	qout := kerneltest.QT(tensor.Uint8, nil, 1, 128)
	n := &kernel.Node{Inputs: []*tensor.Tensor{qin, qf, kerneltest.ConstT(kerneltest.QT(tensor.Int32, []int{2}, 0.5, 0))}, Outputs: []*tensor.Tensor{qout}, Threads: 1}
	if err := (&Conv2D{Params: p}).Prepare(n); err == nil {
		t.Error("UINT8 bias scale 0.5 for input*filter scale 0.05 accepted")
	}
	n.Inputs[2] = kerneltest.ConstT(kerneltest.QT(tensor.Float32, []int{2}, 0.05, 0))
	if err := (&Conv2D{Params: p}).Prepare(n); err == nil {
		t.Error("FLOAT32 bias for UINT8 conv accepted")
	}
	n.Inputs[0] = kerneltest.QT(tensor.Int8, []int{1, 4, 4, 3}, 0.5, 0)
	if err := (&Conv2D{Params: p}).Prepare(n); !errors.Is(err, kernel.ErrUnsupported) {
		t.Errorf("INT8 input with UINT8 filter: %v, want ErrUnsupported", err)
	}
}

func TestConvRegistrations(t *testing.T) {
	want := map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorCONV_2D:           {Min: 1, Max: 5},
		schema.BuiltinOperatorDEPTHWISE_CONV_2D: {Min: 1, Max: 6},
		schema.BuiltinOperatorFULLY_CONNECTED:   {Min: 1, Max: 9},
	}
	kerneltest.CheckRegistrations(t, convOps(), want)
}

// TestRequantFunctions checks the requantization helpers against convRefScale
// on random and extreme accumulators and multipliers, left shifts included.
func TestRequantFunctions(t *testing.T) {
	r := rand.New(rand.NewPCG(12, 13))
	accs := []int32{0, 1, -1, 2, -2, 3, -3, math.MaxInt32, math.MinInt32, 1 << 20, -(1 << 20)}
	for range 2000 {
		accs = append(accs, int32(r.Uint32()), int32(r.IntN(1<<16))-1<<15)
	}
	reals := []float64{0.25, 0.5, 1, 1.5, 3.9, 0.75 / 1024, 1.0 / (1 << 20), 0.0003, 2e-9}
	for range 50 {
		reals = append(reals, math.Exp(r.Float64()*20-16))
	}
	for _, real := range reals {
		m, shift := kernel.QuantizeMultiplier(real)
		var rq chanRequant
		rq.resize(1)
		rq.set(0, m, shift)
		q := newQchan(&rq, 0, 0)
		for _, a := range accs {
			if shift > 0 && (int64(a)<<shift > math.MaxInt32 || int64(a)<<shift < math.MinInt32) {
				continue // TFLite's left shift would overflow
			}
			lo, hi := int32(math.MinInt32), int32(math.MaxInt32)
			want := convRefScale(int64(a), m, shift, true)
			if got := q.Ruy(a, 0, lo, hi); int64(got) != want {
				t.Fatalf("Ruy(%d, %g) = %d, want %d", a, real, got, want)
			}
			if got := ruyRequant(a, rq.mult[0], rq.left[0], rq.right[0], 0, lo, hi); int64(got) != want {
				t.Fatalf("ruyRequant(%d, %g) = %d, want %d", a, real, got, want)
			}
			want = convRefScale(int64(a), m, shift, false)
			if got := q.TFL(a, 0, lo, hi); int64(got) != want {
				t.Fatalf("TFL(%d, %g) = %d, want %d", a, real, got, want)
			}
			if got := tfliteRequant(a, rq.mult[0], rq.left[0], rq.right[0], 0, lo, hi); int64(got) != want {
				t.Fatalf("tfliteRequant(%d, %g) = %d, want %d", a, real, got, want)
			}
			if got := kernel.MultiplyByQuantizedMultiplier(a, m, shift); int64(got) != want {
				t.Fatalf("MultiplyByQuantizedMultiplier(%d, %g) = %d, want %d", a, real, got, want)
			}
		}
	}
}

// TestConvNonConstAndResize runs the kernels with weights and bias that are
// not constant (packed during Eval), and re-prepares after an input resize.
func TestConvNonConstAndResize(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 15))
	for _, typ := range []tensor.DType{tensor.Float32, tensor.Uint8, tensor.Int8} {
		for _, kind := range []string{"conv", "depthwise", "fc"} {
			mk := func(shape ...int) *tensor.Tensor {
				if typ == tensor.Float32 {
					t := tensor.NewTensor(tensor.Float32, shape...)
					convFillRandF(r, t, 1)
					return t
				}
				lo, hi := convTypeRange(typ)
				t := kerneltest.QT(typ, shape, 0.05, 2)
				convFillRand(r, t, int(lo), int(hi))
				return t
			}
			var op func() kernel.Op
			var fshape []int
			var outC int
			switch kind {
			case "conv":
				op = func() kernel.Op {
					return &Conv2D{Params: Conv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 2, DilationW: 1, DilationH: 1}}
				}
				fshape, outC = []int{7, 3, 3, 5}, 7
			case "depthwise":
				op = func() kernel.Op {
					return &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: schema.PaddingSAME, StrideW: 2, StrideH: 1, DepthMultiplier: 1, DilationW: 1, DilationH: 1}}
				}
				fshape, outC = []int{1, 3, 3, 5}, 5
			case "fc":
				op = func() kernel.Op { return &FullyConnected{} }
				fshape, outC = []int{7, 5}, 7
			}
			filter := mk(fshape...)
			if typ != tensor.Float32 {
				filter.Quant.Scale[0] = 0.02
			}
			var bias *tensor.Tensor
			if typ == tensor.Float32 {
				bias = tensor.NewTensor(tensor.Float32, outC)
				convFillRandF(r, bias, 1)
			} else {
				bias = kerneltest.QT(tensor.Int32, []int{outC}, 0.05*0.02, 0)
				convFillRand(r, bias, -500, 500)
			}
			constF, constB := *filter, *bias
			constF.Const, constB.Const = true, true
			for _, shape := range [][]int{{1, 6, 5, 5}, {2, 9, 4, 5}} {
				in := mk(shape...)
				newOut := func() *tensor.Tensor {
					if typ == tensor.Float32 {
						return tensor.NewTensor(tensor.Float32)
					}
					return kerneltest.QT(typ, nil, 0.1, -3)
				}
				want, got := newOut(), newOut()
				kerneltest.MustRun(t, op(), 2, want, in, &constF, &constB)
				// One op instance, prepared twice (the second time after a
				// resize from the other shape), weights not constant.
				o := op()
				other := mk(3, 4, 7, 5)
				if err := o.Prepare(&kernel.Node{Inputs: []*tensor.Tensor{other, filter, bias}, Outputs: []*tensor.Tensor{newOut()}, Threads: 1}); err != nil {
					t.Fatal(err)
				}
				kerneltest.MustRun(t, o, 2, got, in, filter, bias)
				if !bytes.Equal(want.Data, got.Data) || fmt.Sprint(want.Shape) != fmt.Sprint(got.Shape) {
					t.Errorf("%s %s %v: non-constant weights after a resize differ", typ, kind, shape)
				}
			}
		}
	}
}

// TestConvHybrid checks hybrid (FLOAT32 input, INT8 filter) CONV_2D and
// DEPTHWISE_CONV_2D against float references within the input
// quantization error, and the per-tensor conv exactly against an
// independent re-quantization.
func TestConvHybrid(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 17))
	for _, dw := range []bool{false, true} {
		for _, perChannel := range []bool{false, true} {
			c := convCase{h: 6, w: 5, inC: 4, outC: 6, kh: 3, kw: 3, same: true, depthwise: dw, perChannel: perChannel}.withDefaults()
			in := tensor.NewTensor(tensor.Float32, c.batches, c.h, c.w, c.inC)
			convFillRandF(r, in, 2)
			filter := kerneltest.ConstT(kerneltest.QT(tensor.Int8, c.filterShape(), 0.01, 0))
			convFillRand(r, filter, -127, 127)
			scales := make([]float32, c.outC)
			for i := range scales {
				scales[i] = 0.01
				if perChannel {
					scales[i] = 0.005 + 0.01*r.Float32()
				}
			}
			axis := 0
			if dw {
				axis = 3
			}
			filter.Quant = &tensor.Quantization{Scale: scales, ZeroPoint: make([]int64, c.outC), Axis: axis}
			bias := kerneltest.ConstT(tensor.NewTensor(tensor.Float32, c.outC))
			convFillRandF(r, bias, 1)
			out := tensor.NewTensor(tensor.Float32)
			kerneltest.MustRun(t, c.newOp(), 1, out, in, filter, bias)
			xs := make([]int64, in.NumElements())
			for i := range xs {
				xs[i] = int64(math.Round(float64(in.Float32s()[i]) * 1e6))
			}
			// Float reference from the dequantized filter.
			acc, _ := convRefAcc(c, xs, convInts(filter), nil, 0, 0)
			for i, a := range acc {
				oc := i % c.outC
				want := float64(a)*1e-6*float64(scales[oc]) + float64(bias.Float32s()[oc])
				if g := float64(out.Float32s()[i]); math.Abs(g-want) > 0.08 {
					t.Fatalf("dw=%v perChannel=%v out[%d] = %v, want about %v", dw, perChannel, i, g, want)
				}
			}
			if dw || perChannel {
				continue
			}
			// Per-tensor conv: symmetric quantization of the whole batch.
			var rng float32
			for _, v := range in.Float32s() {
				rng = max(rng, float32(math.Abs(float64(v))))
			}
			q := make([]int64, len(xs))
			for i, v := range in.Float32s() {
				q[i] = int64(math.Round(float64(v * (127 / rng))))
			}
			sf := rng / 127 * 0.01
			acc, _ = convRefAcc(c, q, convInts(filter), nil, 0, 0)
			for i, a := range acc {
				want := float32(float32(a)*sf) + bias.Float32s()[i%c.outC] // the product rounded, never fused
				if g := out.Float32s()[i]; g != want {
					t.Fatalf("per-tensor out[%d] = %v, want %v", i, g, want)
				}
			}
		}
	}
}

// TestIm2colRows holds im2colRows to im2colPixel with stride n, over
// geometries with and without padding, strides, dilations and batches,
// for runs of rows that start anywhere and cross output rows and batches.
func TestIm2colRows(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, pad := range []schema.Padding{schema.PaddingSAME, schema.PaddingVALID} {
		for range 60 {
			h, w, c := 1+r.IntN(9), 1+r.IntN(9), 1+r.IntN(5)
			k, s, d := 1+r.IntN(3), 1+r.IntN(3), 1+r.IntN(2)
			g, err := windowGeom("test", pad, 2, h, w, c, k, k, s, s, d, d)
			if err != nil || g.rows() == 0 {
				continue
			}
			in := make([]int16, 2*h*w*c)
			for i := range in {
				in[i] = int16(i + 1)
			}
			K := g.depth()
			for _, n := range []int{1, 4, 12} {
				for p0 := 0; p0+n <= g.rows(); p0 += 1 + r.IntN(3) {
					got, want := make([]int16, n*K), make([]int16, n*K)
					im2colRows(&g, in, p0, n, -7, got)
					for i := range n {
						im2colPixel(&g, in, p0+i, -7, want[i:], n)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%+v rows %d..%d: got %v, want %v", g, p0, p0+n, got, want)
					}
				}
			}
		}
	}
}

// TestWidenChannels holds widenChannels (and widenBytes2, the bytes' path
// by 2) to repeating each element mult times, for every length to 20.
func TestWidenChannels(t *testing.T) {
	for n := range 21 {
		for mult := 1; mult <= 3; mult++ {
			in, inF := make([]uint8, n), make([]float32, n)
			var want []uint8
			for i := range in {
				in[i], inF[i] = uint8(i*37+1), float32(i)+0.5
				for range mult {
					want = append(want, in[i])
				}
			}
			got, gotF := make([]uint8, n*mult+1), make([]float32, n*mult)
			if mult == 2 {
				widenBytes2(in, got)
			} else {
				widenChannels(in, mult, got)
			}
			widenChannels(inF, mult, gotF)
			if !bytes.Equal(got[:n*mult], want) || got[n*mult] != 0 {
				t.Fatalf("%d bytes by %d: %v, want %v", n, mult, got, want)
			}
			for i, v := range gotF {
				if v != inF[i/mult] {
					t.Fatalf("%d floats by %d: element %d is %v, want %v", n, mult, i, v, inF[i/mult])
				}
			}
		}
	}
}
