package conv

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/q8"
	"github.com/delego/delego/core/kernels/kernel"
	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// qgemmModes lists the 8-bit kernels to compare: the portable ones, the
// Go twins on both row formats and the deep layout, and the assembly this
// CPU can run.
func qgemmModes() []q8.Kernel {
	return append([]q8.Kernel{q8.Portable, q8.GoU8, q8.GoS8, q8.GoDeep}, q8.AsmKernels()...)
}

// TestQuantGemmModesIdentical runs CONV_2D (1x1 direct, strided, padded
// 3x3) and FULLY_CONNECTED (batch 1: matrix-vector, and more rows), UINT8
// and INT8 per-channel, with zero points at the ends of their ranges,
// through every GEMM mode and requires identical outputs. Every other
// zero-point case draws weights the pair kernel takes (q8.PairSafe), and
// a kernel of the deep layout must then keep it at the depths where it
// gains (pairGains); on the others, drawn from the whole range, it must
// give way to its fallback.
func TestQuantGemmModesIdentical(t *testing.T) {
	type shape struct {
		h, w, inC, outC, k, stride int
		fc                         bool
	}
	shapes := []shape{
		{h: 5, w: 7, inC: 13, outC: 21, k: 1, stride: 1},
		{h: 9, w: 9, inC: 32, outC: 48, k: 1, stride: 1},
		{h: 4, w: 5, inC: 24, outC: 20, k: 1, stride: 1},
		{h: 1, w: 1, inC: 1024, outC: 1001, k: 1, stride: 1},
		{h: 6, w: 5, inC: 3, outC: 17, k: 3, stride: 2},
		{h: 7, w: 7, inC: 9, outC: 33, k: 3, stride: 1},
		{h: 1, w: 1, inC: 1024, outC: 1001, fc: true},
		{h: 3, w: 1, inC: 37, outC: 5, fc: true},
		{h: 6, w: 1, inC: 300, outC: 70, fc: true},
	}
	zps := [][3]int64{{0, 0, 0}, {255, 255, 255}, {128, 1, 254}, {-128, -128, 127}, {127, 127, -128}, {-7, 5, 3}}
	for _, s := range shapes {
		for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
			for zi, zp := range zps {
				if lo, hi := convTypeRange(typ); min(zp[0], zp[1], zp[2]) < lo || max(zp[0], zp[1], zp[2]) > hi {
					continue
				}
				for _, threads := range []int{1, 2} {
					name := fmt.Sprintf("%v/%s/zp%d/t%d", s, typ, zi, threads)
					var ref []byte
					fill := pairSafeWeights
					if zi%2 == 1 {
						fill = someWeightsAt128
					}
					pairSafe := fill == pairSafeWeights
					for _, m := range qgemmModes() {
						got, used := runQuantGemmMode(t, typ, s.h, s.w, s.inC, s.outC, s.k, s.stride, s.fc, zp, threads, fill, m)
						K := s.inC
						if !s.fc {
							K *= s.k * s.k
						}
						if m.Deep() && (used == m) != (pairSafe && pairGains(K)) {
							t.Fatalf("%s: %v ran as %v (weights pair-safe %v, depth %d)", name, m, used, pairSafe, K)
						}
						if ref == nil {
							ref = got
						} else if !bytes.Equal(got, ref) {
							t.Fatalf("%s: %v differs from %v", name, m, qgemmModes()[0])
						}
					}
				}
			}
		}
	}
}

// weightFill says how runQuantGemmMode draws the weights, against the
// value the kernels store as -128 (UINT8 0, INT8 -128), which the pair
// kernel cannot take (q8.PairSafe).
type weightFill int

const (
	pairSafeWeights  weightFill = iota // random, none stored as -128
	someWeightsAt128                   // random, one at least stored as -128
	allAt128                           // every weight and input stored as -128
)

// TestQuantGemmPairOverflow runs a CONV_2D and a FULLY_CONNECTED whose
// weights and inputs are all stored as -128, where two products of the
// pair kernel's 16-bit lanes would sum to 2^15 and wrap, through every
// GEMM mode: each must give the portable kernel's bytes, the pair kernels
// by giving way to their fallback (q8.PairSafe).
func TestQuantGemmPairOverflow(t *testing.T) {
	for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
		for _, fc := range []bool{false, true} {
			var ref []byte
			for _, m := range qgemmModes() {
				got, used := runQuantGemmMode(t, typ, 4, 4, 64, 32, 1, 1, fc, [3]int64{5, 3, 0}, 1, allAt128, m)
				if m.Deep() && used == m {
					t.Errorf("%s, fc %v: %v kept weights of -128", typ, fc, m)
				}
				if ref == nil {
					ref = got
				} else if !bytes.Equal(got, ref) {
					t.Errorf("%s, fc %v: %v gives\n%v\nportable\n%v", typ, fc, m, got, ref)
				}
			}
		}
	}
}

// runQuantGemmMode builds and runs one random quantized CONV_2D or
// FULLY_CONNECTED in GEMM mode m and returns its output bytes and the
// kernel it ran. The data are drawn from a generator seeded by the shape,
// so that every mode sees the same, and the weights as fill says.
func runQuantGemmMode(t *testing.T, typ tensor.DType, h, w, inC, outC, k, stride int, fc bool, zp [3]int64, threads int, fill weightFill, m q8.Kernel) ([]byte, q8.Kernel) {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(h*w*inC), uint64(outC*k+stride)))
	lo, hi := convTypeRange(typ)
	in := kerneltest.QT(typ, []int{1, h, w, inC}, 0.05, zp[0])
	convFillRand(r, in, int(lo), int(hi))
	fshape := []int{outC, k, k, inC}
	if fc {
		in.Shape = []int{h, inC}
		fshape = []int{outC, inC}
	}
	filter := kerneltest.ConstT(kerneltest.QT(typ, fshape, 0.02, zp[1]))
	convFillRand(r, filter, int(lo), int(hi))
	stored128 := byte(0) // the byte the kernels store as -128
	if typ == tensor.Int8 {
		stored128 = 0x80
	}
	switch fill {
	case pairSafeWeights:
		for i, b := range filter.Data {
			if b == stored128 {
				filter.Data[i]++
			}
		}
	case someWeightsAt128:
		filter.Data[r.IntN(len(filter.Data))] = stored128
	case allAt128:
		for _, d := range [][]byte{filter.Data, in.Data} {
			for i := range d {
				d[i] = stored128
			}
		}
	}
	if typ == tensor.Int8 && !fc {
		sc := make([]float32, outC)
		for i := range sc {
			sc[i] = 0.002 + 0.03*r.Float32()
		}
		filter.Quant = &tensor.Quantization{Scale: sc, ZeroPoint: make([]int64, outC)}
	}
	bias := kerneltest.ConstT(kerneltest.QT(tensor.Int32, []int{outC}, 0.05*0.02, 0))
	convFillRand(r, bias, -30000, 30000)
	out := kerneltest.QT(typ, nil, 0.3, zp[2])
	var op kernel.Op
	var qg *qGemm
	var repack func()
	if fc {
		f := &FullyConnected{Params: FullyConnectedParams{Activation: schema.ActivationFunctionTypeRELU6}}
		op, qg = f, &f.qg
		repack = func() {
			f.setQuantWeights(filter)
			f.qg.setBias(bias.Int32s(), f.xzp, typ == tensor.Uint8)
		}
	} else {
		c := &Conv2D{Params: Conv2DParams{Padding: schema.PaddingSAME, StrideW: stride, StrideH: stride,
			DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeNONE}}
		op, qg = c, &c.qg
		repack = func() {
			c.setQuantWeights(filter)
			c.qg.setBias(bias.Int32s(), c.xzp, typ == tensor.Uint8)
		}
	}
	n := &kernel.Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: threads}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	qg.kern = m
	repack()
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	return out.Data, qg.kern
}

// TestFlipBytes checks flipBytes against a byte-by-byte XOR on every
// length to 100 and at every start within 8 bytes, and that it writes
// nothing past the slice.
func TestFlipBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 72))
	src := make([]uint8, 120)
	for i := range src {
		src[i] = uint8(r.Uint32())
	}
	for off := range 8 {
		for n := range 101 {
			b := bytes.Clone(src)
			flipBytes(b[off : off+n])
			for i := range b {
				want := src[i]
				if i >= off && i < off+n {
					want ^= 0x80
				}
				if b[i] != want {
					t.Fatalf("offset %d, length %d: byte %d is %#x, want %#x", off, n, i, b[i], want)
				}
			}
		}
	}
}

// TestDepthwiseModesIdentical runs quantized DEPTHWISE_CONV_2D (UINT8 and
// INT8 per-channel; strides, dilations, both paddings, channel counts
// around the vector width, depth multipliers 1 to 3, zero points at the
// ends of their ranges) on 1, 2 and 3 threads through the portable kernel,
// the vector kernel's Go twin and, where the CPU has it, its assembly, and
// requires identical outputs.
func TestDepthwiseModesIdentical(t *testing.T) {
	type shape struct{ h, w, c, k, stride, dil, mult int }
	shapes := []shape{
		{7, 9, 16, 3, 1, 1, 1}, {8, 8, 5, 3, 2, 1, 1}, {9, 11, 33, 3, 1, 2, 1}, {6, 5, 17, 5, 2, 1, 1},
		{1, 1, 40, 3, 1, 1, 1}, {10, 3, 48, 3, 2, 1, 1}, {4, 7, 1, 2, 1, 1, 1}, {5, 6, 31, 1, 1, 1, 1},
		{8, 8, 5, 3, 2, 1, 2}, {7, 9, 8, 3, 1, 2, 2}, {6, 5, 11, 5, 2, 1, 3}, {4, 7, 1, 2, 1, 1, 3},
	}
	zps := [][3]int64{{0, 0, 0}, {255, 255, 255}, {128, 1, 254}, {-128, 0, 127}, {127, 0, -128}, {-7, 0, 3}}
	for _, s := range shapes {
		for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
			for zi, zp := range zps {
				if lo, hi := convTypeRange(typ); min(zp[0], zp[1], zp[2]) < lo || max(zp[0], zp[1], zp[2]) > hi {
					continue
				}
				for _, pad := range []schema.Padding{schema.PaddingSAME, schema.PaddingVALID} {
					for _, threads := range []int{1, 2, 3} { // 2 and 3 cut 7 or 9 rows into pieces of pixels
						var ref []byte
						for _, m := range qgemmModes() {
							got := runDepthwiseMode(t, typ, s.h, s.w, s.c, s.k, s.stride, s.dil, s.mult, pad, zp, threads, m)
							if ref == nil {
								ref = got
							} else if !bytes.Equal(got, ref) {
								t.Fatalf("%v/%s/zp%d/pad%d/t%d: %v differs from portable", s, typ, zi, pad, threads, m)
							}
						}
					}
				}
			}
		}
	}
}

// runDepthwiseMode builds and runs one random quantized DEPTHWISE_CONV_2D
// with the kernel of mode m (vnni: the vector kernel) and returns its
// output bytes.
func runDepthwiseMode(t *testing.T, typ tensor.DType, h, w, inC, k, stride, dil, mult int, pad schema.Padding, zp [3]int64, threads int, m q8.Kernel) []byte {
	t.Helper()
	c := inC * mult // output channels
	r := rand.New(rand.NewPCG(uint64(h*w*c), uint64(k*stride+dil)))
	lo, hi := convTypeRange(typ)
	in := kerneltest.QT(typ, []int{2, h, w, inC}, 0.05, zp[0])
	convFillRand(r, in, int(lo), int(hi))
	filter := kerneltest.ConstT(kerneltest.QT(typ, []int{1, k, k, c}, 0.02, zp[1]))
	convFillRand(r, filter, int(lo), int(hi))
	if typ == tensor.Int8 {
		sc := make([]float32, c)
		for i := range sc {
			sc[i] = 0.002 + 0.03*r.Float32()
		}
		filter.Quant = &tensor.Quantization{Scale: sc, ZeroPoint: make([]int64, c), Axis: 3}
	}
	bias := kerneltest.ConstT(kerneltest.QT(tensor.Int32, []int{c}, 0.05*0.02, 0))
	convFillRand(r, bias, -30000, 30000)
	out := kerneltest.QT(typ, nil, 0.1, zp[2])
	op := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: pad, StrideW: stride, StrideH: stride,
		DepthMultiplier: mult, DilationW: dil, DilationH: dil, Activation: schema.ActivationFunctionTypeRELU6}}
	n := &kernel.Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: threads}
	if err := op.Prepare(n); err != nil {
		if pad == schema.PaddingVALID {
			return nil // filter larger than the input
		}
		t.Fatal(err)
	}
	op.vec = m != q8.Portable
	op.vd.kern = m
	op.prepareQuant(threads)
	op.setQuantWeights(filter)
	op.setQuantBias(bias)
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	return out.Data
}

// BenchmarkQuantGemmModes times the matrix-vector FULLY_CONNECTED (1024 ->
// 1001, batch 1) and a MobileNet 1x1 conv (28x28x192 -> 64), UINT8 and
// INT8, in each GEMM mode: the portable kernel, the VNNI layout's Go twin
// and its assembly.
func BenchmarkQuantGemmModes(b *testing.B) {
	for _, c := range []struct {
		name            string
		h, w, inC, outC int
		fc              bool
	}{
		{"matvec", 1, 1, 1024, 1001, true},
		{"1x1", 28, 28, 192, 64, false},
	} {
		for _, typ := range []tensor.DType{tensor.Uint8, tensor.Int8} {
			for _, m := range qgemmModes() {
				b.Run(fmt.Sprintf("%s/%s/%v", c.name, typ, m), func(b *testing.B) {
					n, op, _ := benchQuantGemmNode(b, typ, c.h, c.w, c.inC, c.outC, c.fc, m)
					b.ReportAllocs()
					for b.Loop() {
						if err := op.Eval(n); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(c.h*c.w*c.inC*c.outC)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				})
			}
		}
	}
}

// benchQuantGemmNode prepares a CONV_2D or FULLY_CONNECTED of type typ
// (UINT8, or INT8 with per-tensor weights) in mode m, and returns its GEMM.
func benchQuantGemmNode(t testing.TB, typ tensor.DType, h, w, inC, outC int, fc bool, m q8.Kernel) (*kernel.Node, kernel.Op, *qGemm) {
	r := rand.New(rand.NewPCG(1, 2))
	lo, hi := convTypeRange(typ)
	zpIn, zpW, zpOut := int64(120), int64(130), int64(128)
	if typ == tensor.Int8 {
		zpIn, zpW, zpOut = -8, 0, 0
	}
	in := kerneltest.QT(typ, []int{1, h, w, inC}, 0.05, zpIn)
	convFillRand(r, in, int(lo), int(hi))
	fshape := []int{outC, 1, 1, inC}
	if fc {
		in.Shape, fshape = []int{h * w, inC}, []int{outC, inC}
	}
	filter := kerneltest.ConstT(kerneltest.QT(typ, fshape, 0.02, zpW))
	convFillRand(r, filter, int(lo), int(hi))
	bias := kerneltest.ConstT(kerneltest.QT(tensor.Int32, []int{outC}, 0.05*0.02, 0))
	out := kerneltest.QT(typ, nil, 0.3, zpOut)
	unsignedRows := typ == tensor.Uint8
	var op kernel.Op
	var qg *qGemm
	var repack func()
	if fc {
		f := &FullyConnected{}
		op, qg = f, &f.qg
		repack = func() { f.setQuantWeights(filter); f.qg.setBias(bias.Int32s(), f.xzp, unsignedRows) }
	} else {
		c := &Conv2D{Params: Conv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
		op, qg = c, &c.qg
		repack = func() { c.setQuantWeights(filter); c.qg.setBias(bias.Int32s(), c.xzp, unsignedRows) }
	}
	n := &kernel.Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: 1}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	qg.kern = m
	repack()
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	return n, op, qg
}

// TestInt8RowsAsTheyCome checks that INT8 CONV_2D and FULLY_CONNECTED on
// the kernels of unsigned weights (VPDPBUSD's, and their twin) take their
// rows as int8, as they come, not flipped to uint8 (x + 128), which would
// copy every row of a 1x1 convolution or a matrix for each use instead of
// reading it in place.
func TestInt8RowsAsTheyCome(t *testing.T) {
	for _, m := range qgemmModes() {
		if !m.UnsignedWeights() {
			continue
		}
		for _, fc := range []bool{false, true} {
			_, _, g := benchQuantGemmNode(t, tensor.Int8, 4, 5, 32, 20, fc, m)
			if g.v.flip || !g.v.signed {
				t.Errorf("%v, fully connected %v: rows stored flipped %v, as int8 %v; want as they come, int8", m, fc, g.v.flip, g.v.signed)
			}
		}
	}
}

// BenchmarkDepthwiseModes times a MobileNet v2 3x3 depthwise conv over
// 56x56x144 (UINT8) with each kernel: the portable one, the Go twin and
// the assembly.
func BenchmarkDepthwiseModes(b *testing.B) {
	for _, m := range qgemmModes() {
		if m == q8.GoS8 {
			continue // the same depthwise twin as q8.GoU8
		}
		b.Run(m.String(), func(b *testing.B) {
			op := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1,
				DepthMultiplier: 1, DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeRELU6}}
			n := convBenchNode(b, op, tensor.Uint8, []int{1, 56, 56, 144}, []int{1, 3, 3, 144}, 1)
			op.vec, op.vd.kern = m != q8.Portable, m
			op.prepareQuant(1)
			op.setQuantWeights(n.Inputs[1])
			op.setQuantBias(n.Inputs[2])
			b.ReportAllocs()
			for b.Loop() {
				if err := op.Eval(n); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(56*56*144*9)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}
