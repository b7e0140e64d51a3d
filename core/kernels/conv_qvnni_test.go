package kernels

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/delego/delego/model/schema"
	"github.com/delego/delego/tensor"
)

// skipNoAsm skips tests of the assembly on a CPU (or build) without it.
func skipNoAsm(t *testing.T) {
	t.Helper()
	if len(qvAsmKernels()) == 0 {
		t.Skip("no 8-bit assembly kernel on this CPU or build")
	}
}

// randQvBlock gives b random but valid requantization parameters.
func randQvBlock(r *rand.Rand, b *qvBlock, tfl bool) {
	var rq chanRequant
	rq.resize(16)
	for j := range 16 {
		m := int32(1<<30 + r.Int64N(1<<30))
		shift := -r.IntN(12)
		if r.IntN(4) == 0 {
			shift = r.IntN(3)
		}
		rq.set(j, m, shift)
		q := newQchan(&rq, j, int32(r.IntN(20001)-10000))
		if !tfl {
			q.negAdj = 0
		}
		b.set(j, q)
	}
}

// randExtremeBytes fills b with random bytes, often the extremes.
func randExtremeBytes(r *rand.Rand, b []uint8) {
	for i := range b {
		switch r.IntN(8) {
		case 0:
			b[i] = 0
		case 1:
			b[i] = 255
		case 2:
			b[i] = 127
		case 3:
			b[i] = 128
		default:
			b[i] = uint8(r.Uint32())
		}
	}
}

// qgemmTileCase builds a random tile call over fresh buffers, on int8 rows
// when signed; out is filled with a sentinel so that masked-out stores
// show.
func qgemmTileCase(r *rand.Rand, rows, k4, nb int, exact, signed bool) (qgemmTileArgs, []uint8, func() []int64) {
	lda := 4*k4 + r.IntN(3)*4
	a := make([]uint8, (rows-1)*lda+4*k4)
	randExtremeBytes(r, a)
	w := make([]int8, nb*64*k4)
	randExtremeBytes(r, unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(w))), len(w)))
	rowterm := make([]int32, 4)
	qp := make([]qvBlock, nb)
	for b := range qp {
		randQvBlock(r, &qp[b], false)
	}
	if !exact {
		for i := range rowterm {
			rowterm[i] = int32(r.IntN(200001) - 100000)
		}
	}
	ldo := 16*nb + r.IntN(5)
	out := bytes.Repeat([]uint8{0x5a}, (rows-1)*ldo+16*nb)
	tail := uint64(r.IntN(0xffff)) + 1
	zp := int64(r.IntN(256) - 128)
	lo, hi := int64(-128), int64(127)
	if r.IntN(2) == 0 {
		lo, hi = int64(r.IntN(128)-128), int64(r.IntN(128))
	}
	if exact {
		zp, lo, hi, tail = 0, -1<<31, 1<<31-1, 0xffff
	}
	ta := qgemmTileArgs{a: &a[0], lda: lda, rows: rows, k4: k4, w: &w[0], wstride: 64 * k4, nb: nb,
		tail: tail, rowterm: &rowterm[0], qp: &qp[0], out: &out[0], ldo: ldo, zp: zp, lo: lo, hi: hi}
	if signed {
		ta.signed = 1
	}
	ref := func() []int64 {
		var s []int64
		for row := range rows {
			for c := range 16 * nb {
				var acc int64
				for k := range 4 * k4 {
					x := int64(a[row*lda+k])
					if signed {
						x = int64(int8(x))
					}
					acc += x * int64(w[(c/16)*64*k4+(k/4)*64+4*(c%16)+k%4])
				}
				s = append(s, acc)
			}
		}
		return s
	}
	return ta, out, ref
}

// TestQgemmTileAsmMatchesGo runs each assembly tile kernel and the Go twin
// on random tiles (odd depths, partial row groups, tail masks, extreme
// values) and requires the same bytes.
func TestQgemmTileAsmMatchesGo(t *testing.T) {
	skipNoAsm(t)
	t.Logf("assembly kernels: %v", qvAsmKernels())
	for _, k := range qvAsmKernels() {
		r := rand.New(rand.NewPCG(15, 1))
		for i := range 400 {
			rows, k4, nb := 1+r.IntN(4), 1+r.IntN(40), 1+r.IntN(5)
			ta, out, _ := qgemmTileCase(r, rows, k4, nb, false, k.signedRows())
			if want := tileAgainstGo(k, ta, out); !bytes.Equal(out, want) {
				t.Fatalf("%v case %d (rows %d, k4 %d, nb %d, tail %#x): asm\n%v\ngo\n%v", k, i, rows, k4, nb, ta.tail, out, want)
			}
		}
	}
}

// FuzzQvKernels runs a random tile and a random depthwise row, drawn from
// the seeds, through each assembly kernel and the Go twin, and requires
// the same bytes.
func FuzzQvKernels(f *testing.F) {
	for s := range uint64(4) {
		f.Add(s, 15+s)
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		for _, k := range qvAsmKernels() {
			r := rand.New(rand.NewPCG(s1, s2))
			ta, out, _ := qgemmTileCase(r, 1+r.IntN(4), 1+r.IntN(40), 1+r.IntN(5), false, k.signedRows())
			if want := tileAgainstGo(k, ta, out); !bytes.Equal(out, want) {
				t.Errorf("%v tile (rows %d, k4 %d, nb %d, tail %#x): asm\n%v\ngo\n%v", k, ta.rows, ta.k4, ta.nb, ta.tail, out, want)
			}
			da, dout := dwRowCase(r)
			if dwant := dwRowAgainstGo(k, da, dout); !bytes.Equal(dout, dwant) {
				t.Errorf("%v depthwise row (kh %d, kw %d, nb %d, npix %d, tail %#x): asm\n%v\ngo\n%v", k, da.kh, da.kw, da.nb, da.npix, da.tail, dout, dwant)
			}
		}
	})
}

// TestQgemmTileExactSums reads the int32 sums of every kernel back byte by
// byte (multiplier 2^30, shift 30+8i, no rounding) and compares them with
// the exact sums.
func TestQgemmTileExactSums(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 2))
	kernels := append([]qvKernel{qvGoU8, qvGoS8}, qvAsmKernels()...)
	for i := range 60 {
		rows, k4, nb := 1+r.IntN(4), 1+r.IntN(70), 1+r.IntN(3)
		for _, kern := range kernels {
			ta, out, ref := qgemmTileCase(r, rows, k4, nb, true, kern.signedRows())
			want := ref()
			got := make([]int64, len(want))
			for byteIdx := range 4 {
				for b := range nb {
					q := &unsafe.Slice(ta.qp, nb)[b]
					for j := range 16 {
						q.cst[j], q.left[j], q.mult[j] = 0, 0, 1<<30
						sh := uint64(30 + 8*byteIdx)
						if j%2 == 0 {
							q.addE[j/2], q.shE[j/2] = 0, sh
						} else {
							q.addO[j/2], q.shO[j/2] = 0, sh
						}
					}
				}
				qgemmTile(kern, &ta)
				for row := range rows {
					for c := range 16 * nb {
						got[row*16*nb+c] |= int64(out[row*ta.ldo+c]) << (8 * byteIdx)
					}
				}
			}
			for j := range got {
				if int32(got[j]) != int32(want[j]) {
					t.Fatalf("%v case %d: sum %d = %d, want %d", kern, i, j, int32(got[j]), want[j])
				}
			}
		}
	}
}

// TestDwRowAsmMatchesGo runs each assembly depthwise row kernel and the Go
// twin on random rows (filter sizes, strides, dilations, UINT8 and INT8
// inputs, partial last blocks, extreme values) and requires the same bytes.
func TestDwRowAsmMatchesGo(t *testing.T) {
	skipNoAsm(t)
	for _, k := range qvAsmKernels() {
		r := rand.New(rand.NewPCG(15, 3))
		for i := range 300 {
			ta, out := dwRowCase(r)
			if want := dwRowAgainstGo(k, ta, out); !bytes.Equal(out, want) {
				t.Fatalf("%v case %d (%dx%d, nb %d, tail %#x, signed %d): asm\n%v\ngo\n%v",
					k, i, ta.kh, ta.kw, ta.nb, ta.tail, ta.signed, out, want)
			}
		}
	}
}

// dwRowCase builds a random depthwise row call over fresh buffers; out is
// filled with a sentinel so that masked-out stores show. The filter rows
// end with the last channel the kernel may read.
func dwRowCase(r *rand.Rand) (dwRowArgs, []uint8) {
	kh, kw, nb := 1+r.IntN(3), 1+r.IntN(5), 1+r.IntN(3)
	C := 16*nb - r.IntN(16)
	dil, stride, npix := 1+r.IntN(2), 1+r.IntN(2), 1+r.IntN(6)
	rows := make([]unsafe.Pointer, kh)
	for ky := range rows {
		b := make([]uint8, ((npix-1)*stride+(kw-1)*dil+1)*C)
		randExtremeBytes(r, b)
		rows[ky] = unsafe.Pointer(&b[0])
	}
	w := make([]int32, kh*kw*16*nb)
	for i := range w {
		v := [...]int32{-255, 255, -128, 127, 0, int32(r.IntN(511) - 255)}[r.IntN(6)]
		w[i] = int32(uint16(int16(v)))
	}
	qp := make([]qvBlock, nb)
	for b := range qp {
		randQvBlock(r, &qp[b], true)
	}
	tail := tailMask(C)
	if r.IntN(3) == 0 {
		tail &= uint64(r.IntN(0xffff)) + 1
	}
	outC := C + r.IntN(3)
	out := bytes.Repeat([]uint8{0x5a}, (npix-1)*outC+16*nb)
	zp := int64(r.IntN(256) - 128)
	lo, hi := int64(-128), int64(127)
	if r.IntN(2) == 0 {
		lo, hi = int64(r.IntN(128)-128), int64(r.IntN(128))
	}
	return dwRowArgs{rows: &rows[0], kh: kh, kw: kw, tapStep: dil * C, pixStep: stride * C, npix: npix,
		nb: nb, tail: tail, w: &w[0], wstride: 64 * nb, qp: &qp[0], out: &out[0], outC: outC,
		zp: zp, lo: lo, hi: hi, signed: int64(r.IntN(2))}, out
}

// qgemmModes lists the 8-bit kernels to compare: the portable ones, the
// Go twins on both row formats and the assembly this CPU can run.
func qgemmModes() []qvKernel {
	return append([]qvKernel{qvPortable, qvGoU8, qvGoS8}, qvAsmKernels()...)
}

// TestQuantGemmModesIdentical runs CONV_2D (1x1 direct, strided, padded
// 3x3) and FULLY_CONNECTED (batch 1: matrix-vector, and more rows), UINT8
// and INT8 per-channel, with zero points at the ends of their ranges,
// through every GEMM mode and requires identical outputs.
func TestQuantGemmModesIdentical(t *testing.T) {
	type shape struct {
		h, w, inC, outC, k, stride int
		fc                         bool
	}
	shapes := []shape{
		{h: 5, w: 7, inC: 13, outC: 21, k: 1, stride: 1},
		{h: 9, w: 9, inC: 32, outC: 48, k: 1, stride: 1},
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
					for _, m := range qgemmModes() {
						got := runQuantGemmMode(t, typ, s.h, s.w, s.inC, s.outC, s.k, s.stride, s.fc, zp, threads, m)
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

// runQuantGemmMode builds and runs one random quantized CONV_2D or
// FULLY_CONNECTED in GEMM mode m and returns its output bytes. The data
// are drawn from a generator seeded by the shape, so that every mode sees
// the same.
func runQuantGemmMode(t *testing.T, typ tensor.DType, h, w, inC, outC, k, stride int, fc bool, zp [3]int64, threads int, m qvKernel) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(uint64(h*w*inC), uint64(outC*k+stride)))
	lo, hi := convTypeRange(typ)
	in := qT(typ, []int{1, h, w, inC}, 0.05, zp[0])
	convFillRand(r, in, int(lo), int(hi))
	fshape := []int{outC, k, k, inC}
	if fc {
		in.Shape = []int{h, inC}
		fshape = []int{outC, inC}
	}
	filter := constT(qT(typ, fshape, 0.02, zp[1]))
	convFillRand(r, filter, int(lo), int(hi))
	if typ == tensor.Int8 && !fc {
		sc := make([]float32, outC)
		for i := range sc {
			sc[i] = 0.002 + 0.03*r.Float32()
		}
		filter.Quant = &tensor.Quantization{Scale: sc, ZeroPoint: make([]int64, outC)}
	}
	bias := constT(qT(tensor.Int32, []int{outC}, 0.05*0.02, 0))
	convFillRand(r, bias, -30000, 30000)
	out := qT(typ, nil, 0.3, zp[2])
	var op Op
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
	n := &Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: threads}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	qg.kern = m
	repack()
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	if err := op.Eval(n); err != nil {
		t.Fatal(err)
	}
	return out.Data
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
func runDepthwiseMode(t *testing.T, typ tensor.DType, h, w, inC, k, stride, dil, mult int, pad schema.Padding, zp [3]int64, threads int, m qvKernel) []byte {
	t.Helper()
	c := inC * mult // output channels
	r := rand.New(rand.NewPCG(uint64(h*w*c), uint64(k*stride+dil)))
	lo, hi := convTypeRange(typ)
	in := qT(typ, []int{2, h, w, inC}, 0.05, zp[0])
	convFillRand(r, in, int(lo), int(hi))
	filter := constT(qT(typ, []int{1, k, k, c}, 0.02, zp[1]))
	convFillRand(r, filter, int(lo), int(hi))
	if typ == tensor.Int8 {
		sc := make([]float32, c)
		for i := range sc {
			sc[i] = 0.002 + 0.03*r.Float32()
		}
		filter.Quant = &tensor.Quantization{Scale: sc, ZeroPoint: make([]int64, c), Axis: 3}
	}
	bias := constT(qT(tensor.Int32, []int{c}, 0.05*0.02, 0))
	convFillRand(r, bias, -30000, 30000)
	out := qT(typ, nil, 0.1, zp[2])
	op := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: pad, StrideW: stride, StrideH: stride,
		DepthMultiplier: mult, DilationW: dil, DilationH: dil, Activation: schema.ActivationFunctionTypeRELU6}}
	n := &Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: threads}
	if err := op.Prepare(n); err != nil {
		if pad == schema.PaddingVALID {
			return nil // filter larger than the input
		}
		t.Fatal(err)
	}
	op.vec = m != qvPortable
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
// 1001, batch 1) and a MobileNet 1x1 conv (28x28x192 -> 64) in each GEMM
// mode: the portable kernel, the VNNI layout's Go twin and its assembly.
func BenchmarkQuantGemmModes(b *testing.B) {
	for _, c := range []struct {
		name            string
		h, w, inC, outC int
		fc              bool
	}{
		{"matvec", 1, 1, 1024, 1001, true},
		{"1x1", 28, 28, 192, 64, false},
	} {
		for _, m := range qgemmModes() {
			b.Run(c.name+"/"+m.String(), func(b *testing.B) {
				t := &testing.T{}
				n, op := benchQuantGemmNode(t, c.h, c.w, c.inC, c.outC, c.fc, m)
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

// benchQuantGemmNode prepares a UINT8 CONV_2D or FULLY_CONNECTED in mode m.
func benchQuantGemmNode(t *testing.T, h, w, inC, outC int, fc bool, m qvKernel) (*Node, Op) {
	r := rand.New(rand.NewPCG(1, 2))
	in := qT(tensor.Uint8, []int{1, h, w, inC}, 0.05, 120)
	convFillRand(r, in, 0, 255)
	fshape := []int{outC, 1, 1, inC}
	if fc {
		in.Shape, fshape = []int{h * w, inC}, []int{outC, inC}
	}
	filter := constT(qT(tensor.Uint8, fshape, 0.02, 130))
	convFillRand(r, filter, 0, 255)
	bias := constT(qT(tensor.Int32, []int{outC}, 0.05*0.02, 0))
	out := qT(tensor.Uint8, nil, 0.3, 128)
	var op Op
	var qg *qGemm
	var repack func()
	if fc {
		f := &FullyConnected{}
		op, qg = f, &f.qg
		repack = func() { f.setQuantWeights(filter); f.qg.setBias(bias.Int32s(), f.xzp, true) }
	} else {
		c := &Conv2D{Params: Conv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1, DilationW: 1, DilationH: 1}}
		op, qg = c, &c.qg
		repack = func() { c.setQuantWeights(filter); c.qg.setBias(bias.Int32s(), c.xzp, true) }
	}
	n := &Node{Inputs: []*tensor.Tensor{in, filter, bias}, Outputs: []*tensor.Tensor{out}, Threads: 1}
	if err := op.Prepare(n); err != nil {
		t.Fatal(err)
	}
	qg.kern = m
	repack()
	out.Data = tensor.NewTensor(out.Type, out.Shape...).Data
	return n, op
}

// BenchmarkDepthwiseModes times a MobileNet v2 3x3 depthwise conv over
// 56x56x144 (UINT8) with each kernel: the portable one, the Go twin and
// the assembly.
func BenchmarkDepthwiseModes(b *testing.B) {
	for _, m := range qgemmModes() {
		if m == qvGoS8 {
			continue // the same depthwise twin as qvGoU8
		}
		b.Run(m.String(), func(b *testing.B) {
			op := &DepthwiseConv2D{Params: DepthwiseConv2DParams{Padding: schema.PaddingSAME, StrideW: 1, StrideH: 1,
				DepthMultiplier: 1, DilationW: 1, DilationH: 1, Activation: schema.ActivationFunctionTypeRELU6}}
			n := convBenchNode(b, op, tensor.Uint8, []int{1, 56, 56, 144}, []int{1, 3, 3, 144}, 1)
			op.vec, op.vd.kern = m != qvPortable, m
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

// tileAgainstGo runs tile kernel k on t, which writes to out, and the Go
// twin on the same inputs into a copy of out, and returns the copy.
func tileAgainstGo(k qvKernel, t qgemmTileArgs, out []byte) []byte {
	want := bytes.Clone(out)
	tg := t
	tg.out = &want[0]
	qgemmTileGo(&tg)
	qgemmTile(k, &t)
	return want
}

// dwRowAgainstGo is tileAgainstGo for the depthwise row kernel.
func dwRowAgainstGo(k qvKernel, t dwRowArgs, out []byte) []byte {
	want := bytes.Clone(out)
	tg := t
	tg.out = &want[0]
	dwRowGo(&tg)
	dwRow(k, &t)
	return want
}
