package conv

import (
	"math"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

func TestTransposeConvRegistrations(t *testing.T) {
	kerneltest.CheckRegistrations(t, transposeConvOps(), map[schema.BuiltinOperator]tensor.VersionRange{
		schema.BuiltinOperatorTRANSPOSE_CONV: {Min: 1, Max: 3},
	})
}

func TestTransposeConvFloatByHand(t *testing.T) {
	// Input [1,1,2,1] = (1, 2); weights [1,1,2,1] = (10, 100).
	in := kerneltest.F32T([]int{1, 1, 2, 1}, 1, 2)
	w := kerneltest.F32T([]int{1, 1, 2, 1}, 10, 100)
	w.Const = true
	bias := kerneltest.F32T([]int{1}, 1)
	// VALID, stride 1: output width (2-1)+2 = 3:
	//   (1*10, 1*100 + 2*10, 2*100) + 1.
	out := kerneltest.OutT(tensor.Float32)
	k := &transposeConv{padding: schema.PaddingVALID, strideH: 1, strideW: 1}
	if err := kerneltest.RunNode(k, 1, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 1, 3, 1), w, in, bias}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Float32s(), []float32{11, 121, 201}) {
		t.Errorf("valid: %v", out.Float32s())
	}
	// SAME, stride 2: output width 4, no padding needed: the taps do not
	// overlap: (1*10, 1*100, 2*10, 2*100).
	out = kerneltest.OutT(tensor.Float32)
	k = &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 2}
	if err := kerneltest.RunNode(k, 1, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 1, 4, 1), w, in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Float32s(), []float32{10, 100, 20, 200}) {
		t.Errorf("same: %v", out.Float32s())
	}
	// SAME, stride 1, width 2: total padding 1, left 0: the last tap of the
	// last pixel falls off: (1*10, 1*100 + 2*10).
	out = kerneltest.OutT(tensor.Float32)
	k = &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}
	if err := kerneltest.RunNode(k, 1, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 1, 2, 1), w, in}, []*tensor.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Float32s(), []float32{10, 120}) {
		t.Errorf("same stride 1: %v", out.Float32s())
	}
}

// tconvCase is a random TRANSPOSE_CONV configuration for the reference tests.
type tconvCase struct {
	pad                  schema.Padding
	sh, sw, fh, fw       int
	batch, inH, inW, inC int
	outH, outW, outC     int
	hasBias              bool
	seed                 uint32
}

func (c *tconvCase) rnd() int {
	c.seed = c.seed*1664525 + 1013904223
	return int(c.seed >> 8)
}

func tconvCases() []tconvCase {
	var cs []tconvCase
	c := tconvCase{seed: 12345}
	for i := 0; i < 40; i++ {
		c.sh, c.sw = 1+c.rnd()%3, 1+c.rnd()%3
		c.fh, c.fw = 1+c.rnd()%4, 1+c.rnd()%4
		c.batch, c.inH, c.inW = 1+c.rnd()%2, 1+c.rnd()%4, 1+c.rnd()%4
		c.inC, c.outC = 1+c.rnd()%4, 1+c.rnd()%4
		c.hasBias = c.rnd()%2 == 0
		if c.rnd()%2 == 0 {
			c.pad = schema.PaddingVALID
			c.outH, c.outW = (c.inH-1)*c.sh+c.fh, (c.inW-1)*c.sw+c.fw
		} else {
			c.pad = schema.PaddingSAME
			c.outH, c.outW = c.inH*c.sh, c.inW*c.sw
		}
		cs = append(cs, c)
	}
	return cs
}

// gather computes, independently of the kernel's scatter, which (input
// pixel, tap) pairs feed output pixel (b, oy, ox): a tap (fy, fx) of input
// (iy, ix) lands at (iy*sh + fy - padTop, ix*sw + fx - padLeft).
func (c tconvCase) gather(f func(b, oy, ox, iy, ix, fy, fx int)) {
	padT := max(((c.inH-1)*c.sh+c.fh-c.outH)/2, 0)
	padL := max(((c.inW-1)*c.sw+c.fw-c.outW)/2, 0)
	for b := 0; b < c.batch; b++ {
		for oy := 0; oy < c.outH; oy++ {
			for ox := 0; ox < c.outW; ox++ {
				for fy := 0; fy < c.fh; fy++ {
					for fx := 0; fx < c.fw; fx++ {
						ny, nx := oy+padT-fy, ox+padL-fx
						if ny%c.sh != 0 || nx%c.sw != 0 || ny < 0 || nx < 0 || ny/c.sh >= c.inH || nx/c.sw >= c.inW {
							continue
						}
						f(b, oy, ox, ny/c.sh, nx/c.sw, fy, fx)
					}
				}
			}
		}
	}
}

func TestTransposeConvFloatVsReference(t *testing.T) {
	for i, c := range tconvCases() {
		in := tensor.NewTensor(tensor.Float32, c.batch, c.inH, c.inW, c.inC)
		w := tensor.NewTensor(tensor.Float32, c.outC, c.fh, c.fw, c.inC)
		w.Const = true
		bias := tensor.NewTensor(tensor.Float32, c.outC)
		for _, s := range [][]float32{in.Float32s(), w.Float32s(), bias.Float32s()} {
			for j := range s {
				s[j] = float32(c.rnd()%2001-1000) / 500
			}
		}
		ins := []*tensor.Tensor{kerneltest.I32T([]int{4}, int32(c.batch), int32(c.outH), int32(c.outW), int32(c.outC)), w, in}
		if c.hasBias {
			ins = append(ins, bias)
		}
		out := kerneltest.OutT(tensor.Float32)
		if err := kerneltest.RunNode(&transposeConv{padding: c.pad, strideH: c.sh, strideW: c.sw}, 1, ins, []*tensor.Tensor{out}); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		ref := make([]float64, c.batch*c.outH*c.outW*c.outC)
		c.gather(func(b, oy, ox, iy, ix, fy, fx int) {
			for o := 0; o < c.outC; o++ {
				for ch := 0; ch < c.inC; ch++ {
					ref[((b*c.outH+oy)*c.outW+ox)*c.outC+o] += float64(in.Float32s()[((b*c.inH+iy)*c.inW+ix)*c.inC+ch]) *
						float64(w.Float32s()[((o*c.fh+fy)*c.fw+fx)*c.inC+ch])
				}
			}
		})
		for j, got := range out.Float32s() {
			want := ref[j]
			if c.hasBias {
				want += float64(bias.Float32s()[j%c.outC])
			}
			if math.Abs(float64(got)-want) > 1e-4 {
				t.Fatalf("case %d (%+v): element %d = %g, want %g", i, c, j, got, want)
			}
		}
	}
}

// TestTransposeConvQuantizedVsReference compares uint8, int8 (per-channel)
// and int16x8 outputs with an int64 gather reference requantized the way
// TFLite does.
func TestTransposeConvQuantizedVsReference(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8, tensor.Int16} {
		for i, c := range tconvCases() {
			inScale, outScale := float32(0.02+float64(c.rnd()%100)/1000), float32(0.05+float64(c.rnd()%100)/100)
			wScales := make([]float32, c.outC)
			for o := range wScales {
				wScales[o] = float32(0.005 + float64(c.rnd()%100)/2000)
			}
			var inZp, wZp, outZp int64
			in := tensor.NewTensor(typ, c.batch, c.inH, c.inW, c.inC)
			wt := typ
			if typ == tensor.Int16 {
				wt = tensor.Int8
				inScale /= 256
				outScale /= 256
			}
			w := tensor.NewTensor(wt, c.outC, c.fh, c.fw, c.inC)
			w.Const = true
			switch typ {
			case tensor.Uint8:
				inZp, wZp, outZp = int64(c.rnd()%256), int64(c.rnd()%256), int64(c.rnd()%256)
				wScales = wScales[:1]
				c.rndBytes(in.Data)
				c.rndBytes(w.Data)
			case tensor.Int8:
				inZp, outZp = int64(c.rnd()%256-128), int64(c.rnd()%256-128)
				c.rndBytes(in.Data)
				c.rndBytes(w.Data)
			case tensor.Int16:
				for j := range in.Int16s() {
					in.Int16s()[j] = int16(c.rnd())
				}
				c.rndBytes(w.Data)
			}
			in.Quant = &tensor.Quantization{Scale: []float32{inScale}, ZeroPoint: []int64{inZp}}
			w.Quant = &tensor.Quantization{Scale: wScales, ZeroPoint: make([]int64, len(wScales))}
			w.Quant.ZeroPoint[0] = wZp
			biasType := map[tensor.DType]tensor.DType{tensor.Uint8: tensor.Int32, tensor.Int8: tensor.Int32, tensor.Int16: tensor.Int64}[typ]
			bias := tensor.NewTensor(biasType, c.outC)
			biasVals := make([]int64, c.outC)
			for o := range biasVals {
				biasVals[o] = int64(c.rnd()%20001 - 10000)
				if biasType == tensor.Int64 {
					bias.Int64s()[o] = biasVals[o]
				} else {
					bias.Int32s()[o] = int32(biasVals[o])
				}
			}
			bias.Quant = &tensor.Quantization{Scale: []float32{inScale * wScales[0]}, ZeroPoint: []int64{0}}
			ins := []*tensor.Tensor{kerneltest.I32T([]int{4}, int32(c.batch), int32(c.outH), int32(c.outW), int32(c.outC)), w, in}
			if c.hasBias {
				ins = append(ins, bias)
			}
			out := kerneltest.QOut(typ, outScale, outZp)
			if err := kerneltest.RunNode(&transposeConv{padding: c.pad, strideH: c.sh, strideW: c.sw}, 1, ins, []*tensor.Tensor{out}); err != nil {
				t.Fatalf("%s case %d: %v", typ, i, err)
			}
			acc := make([]int64, c.batch*c.outH*c.outW*c.outC)
			inAt := func(j int) int64 {
				switch typ {
				case tensor.Uint8:
					return int64(in.Uint8s()[j]) - inZp
				case tensor.Int8:
					return int64(in.Int8s()[j]) - inZp
				}
				return int64(in.Int16s()[j])
			}
			wAt := func(j int) int64 {
				if typ == tensor.Uint8 {
					return int64(w.Uint8s()[j]) - wZp
				}
				return int64(w.Int8s()[j]) // int8 weights' zero point is ignored
			}
			c.gather(func(b, oy, ox, iy, ix, fy, fx int) {
				for o := 0; o < c.outC; o++ {
					for ch := 0; ch < c.inC; ch++ {
						acc[((b*c.outH+oy)*c.outW+ox)*c.outC+o] += inAt(((b*c.inH+iy)*c.inW+ix)*c.inC+ch) * wAt(((o*c.fh+fy)*c.fw+fx)*c.inC+ch)
					}
				}
			})
			lo, hi, _ := tensor.QuantizedRange(typ)
			for j, a := range acc {
				o := j % c.outC
				if c.hasBias {
					a += biasVals[o]
				}
				var m int32
				var s int
				if typ == tensor.Uint8 {
					// TFLite multiplies the two float32 scales in float32.
					m, s = kernel.QuantizeMultiplier(float64(inScale*wScales[0]) / float64(outScale))
				} else {
					m, s = kernel.QuantizeMultiplier(float64(inScale) * float64(wScales[o]) / float64(outScale))
				}
				var v int32
				if typ == tensor.Int16 && c.hasBias {
					v = kernel.MultiplyByQuantizedMultiplier64(a, m, s)
				} else {
					v = kernel.MultiplyByQuantizedMultiplier(int32(a), m, s) + int32(outZp)
				}
				v = min(max(v, lo), hi)
				var got int32
				switch typ {
				case tensor.Uint8:
					got = int32(out.Uint8s()[j])
				case tensor.Int8:
					got = int32(out.Int8s()[j])
				default:
					got = int32(out.Int16s()[j])
				}
				if got != v {
					t.Fatalf("%s case %d (%+v): element %d = %d, want %d", typ, i, c, j, got, v)
				}
			}
		}
	}
}

func (c *tconvCase) rndBytes(b []byte) {
	for i := range b {
		b[i] = byte(c.rnd())
	}
}

// TestTransposeConvInt16Wraps checks the TF 2.9 behaviour of 16x8 without
// an int64 bias: int32 accumulators that wrap. 64 channels of 32767*127 sum
// past 2^31.
func TestTransposeConvInt16Wraps(t *testing.T) {
	const inC = 600 // 600 * 32767 * 127 > 2^31
	in := tensor.NewTensor(tensor.Int16, 1, 1, 1, inC)
	w := tensor.NewTensor(tensor.Int8, 1, 1, 1, inC)
	w.Const = true
	for i := 0; i < inC; i++ {
		in.Int16s()[i] = 32767
		w.Int8s()[i] = 127
	}
	in.Quant = &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}
	w.Quant = &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}
	m, s := kernel.QuantizeMultiplier(1.0 / (1 << 20))
	sum := int64(inC) * 32767 * 127
	k := &transposeConv{padding: schema.PaddingVALID, strideH: 1, strideW: 1}
	run := func(ins ...*tensor.Tensor) int16 {
		out := kerneltest.QOut(tensor.Int16, 1<<20, 0)
		if err := kerneltest.RunNode(k, 1, append([]*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 1, 1, 1), w, in}, ins...), []*tensor.Tensor{out}); err != nil {
			t.Fatal(err)
		}
		return out.Int16s()[0]
	}
	// No bias: the int32 accumulator wraps (about -1715 instead of 2381).
	if got, want := run(), kernel.MultiplyByQuantizedMultiplier(int32(uint32(sum)), m, s); int32(got) != want || want > 0 {
		t.Errorf("no bias: got %d, want %d", got, want)
	}
	// An int64 bias makes the accumulator 64-bit: no wrap.
	bias := tensor.NewTensor(tensor.Int64, 1)
	bias.Quant = &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}
	if got, want := run(bias), kernel.MultiplyByQuantizedMultiplier64(sum, m, s); int32(got) != want || want != 2381 {
		t.Errorf("int64 bias: got %d, want %d", got, want)
	}
}

func TestTransposeConvErrors(t *testing.T) {
	in := kerneltest.F32T([]int{1, 2, 2, 1})
	w := kerneltest.F32T([]int{1, 3, 3, 1})
	w.Const = true
	u8w := kerneltest.U8T([]int{2, 1, 1, 1}, 0.1, 0)
	u8w.Quant = &tensor.Quantization{Scale: []float32{0.1, 0.2}, ZeroPoint: []int64{0, 0}}
	cases := []struct {
		name string
		k    *transposeConv
		ins  []*tensor.Tensor
	}{
		{"output does not map back", &transposeConv{padding: schema.PaddingVALID, strideH: 2, strideW: 2}, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 3, 3, 1), w, in}},
		{"output batch", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{kerneltest.I32T([]int{4}, 2, 2, 2, 1), w, in}},
		{"output channels", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 2, 2, 3), w, in}},
		{"shape of 3", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{kerneltest.I32T([]int{3}, 1, 2, 2), w, in}},
		{"zero stride", &transposeConv{padding: schema.PaddingSAME}, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 2, 2, 1), w, in}},
		{"channels", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 2, 2, 1), kerneltest.F32T([]int{1, 3, 3, 2}), in}},
		{"bias type", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 2, 2, 1), w, in, tensor.NewTensor(tensor.Int32, 1)}},
		{"uint8 per-channel", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1},
			[]*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 2, 2, 2), u8w, kerneltest.U8T([]int{1, 2, 2, 1}, 0.1, 0)}},
		{"int32 input", &transposeConv{padding: schema.PaddingSAME, strideH: 1, strideW: 1}, []*tensor.Tensor{kerneltest.I32T([]int{4}, 1, 2, 2, 1), tensor.NewTensor(tensor.Int32, 1, 3, 3, 1), tensor.NewTensor(tensor.Int32, 1, 2, 2, 1)}},
	}
	for _, c := range cases {
		out := &tensor.Tensor{Type: c.ins[2].Type, Quant: &tensor.Quantization{Scale: []float32{1}, ZeroPoint: []int64{0}}}
		if err := kerneltest.RunNode(c.k, 1, c.ins, []*tensor.Tensor{out}); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}
