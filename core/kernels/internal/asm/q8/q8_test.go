package q8

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"
)

// skipNoAsm skips tests of the assembly on a CPU (or build) without it.
func skipNoAsm(t *testing.T) {
	t.Helper()
	if len(AsmKernels()) == 0 {
		t.Skip("no 8-bit assembly kernel on this CPU or build")
	}
}

// randBlock gives b random but valid requantization parameters, with
// TFLite's rounding when tfl is set, else ruy's.
func randBlock(r *rand.Rand, b *Block, tfl bool) {
	for j := range 16 {
		m := 1<<30 + r.Int64N(1<<30)
		left, right := uint8(0), uint8(r.IntN(12))
		if r.IntN(4) == 0 {
			left, right = uint8(r.IntN(3)), 0
		}
		q := NewChan(m, left, right, int32(r.IntN(20001)-10000))
		if !tfl {
			q.NegAdj = 0
		}
		b.Set(j, q)
	}
}

// randBytes fills b with random bytes, often the extremes.
func randBytes(r *rand.Rand, b []uint8) {
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

// tileOps is the signedness of a tile's operands: int8 rows
// (TileArgs.Signed) and uint8 weights (TileArgs.UnsignedW).
type tileOps struct{ signedRows, unsignedW bool }

// kernelOps lists the operands kernel k reads: int8 rows alone for the
// kernels of int8 rows; uint8 or int8 rows for those of the wide layout;
// uint8 rows by int8 weights, and int8 rows by uint8 weights for those
// whose UnsignedWeights says so; else uint8 rows alone.
func kernelOps(k Kernel) []tileOps {
	switch {
	case k.SignedRows():
		return []tileOps{{signedRows: true}}
	case k.Wide():
		return []tileOps{{}, {signedRows: true}}
	case k.UnsignedWeights():
		return []tileOps{{}, {signedRows: true, unsignedW: true}}
	}
	return []tileOps{{}}
}

// opsFor draws one of the operands kernel k reads.
func opsFor(r *rand.Rand, k Kernel) tileOps {
	ops := kernelOps(k)
	return ops[r.IntN(len(ops))]
}

// value is the value of an operand's byte b, read as int8 when signed.
func value(b uint8, signed bool) int64 {
	if signed {
		return int64(int8(b))
	}
	return int64(b)
}

// tileCase builds a random tile call for kernel k over fresh buffers, on
// the operands ops; out is filled with a sentinel so that masked-out
// stores show. ref returns the exact sums of the tile's rows and channels.
// The weights of a Deep kernel are never -128 (PairSafe).
func tileCase(r *rand.Rand, k Kernel, rows, k4, nb int, exact bool, ops tileOps) (ta TileArgs, out []uint8, ref func() []int64) {
	lda := 4*k4 + r.IntN(3)*4
	a := make([]uint8, (rows-1)*lda+4*k4)
	randBytes(r, a)
	w := make([]int8, nb*64*k4)
	randBytes(r, unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(w))), len(w)))
	if k.Deep() {
		for i, v := range w {
			w[i] = max(v, -127)
		}
	}
	rowterm := make([]int32, 4)
	qp := make([]Block, nb)
	for b := range qp {
		randBlock(r, &qp[b], false)
	}
	if !exact {
		for i := range rowterm {
			rowterm[i] = int32(r.IntN(200001) - 100000)
			if r.IntN(4) == 0 { // sums at int32's ends: the largest products of the requantization
				rowterm[i] = [...]int32{math.MinInt32, math.MaxInt32, -1 << 30, 1<<30 - 1}[r.IntN(4)]
			}
		}
	}
	ldo := 16*nb + r.IntN(5)
	out = bytes.Repeat([]uint8{0x5a}, (rows-1)*ldo+16*nb)
	tail := uint64(r.IntN(0xffff)) + 1
	zp := int64(r.IntN(256) - 128)
	lo, hi := int64(-128), int64(127)
	if r.IntN(2) == 0 {
		lo, hi = int64(r.IntN(128)-128), int64(r.IntN(128))
	}
	if exact {
		zp, lo, hi, tail = 0, -1<<31, 1<<31-1, 0xffff
	}
	ta = TileArgs{A: &a[0], LDA: lda, Rows: rows, K4: k4, W: &w[0], WStride: 64 * k4, NB: nb,
		Tail: tail, RowTerm: &rowterm[0], QP: &qp[0], Out: &out[0], LDO: ldo, ZP: zp, Lo: lo, Hi: hi}
	if ops.signedRows {
		ta.Signed = 1
	}
	if ops.unsignedW {
		ta.UnsignedW = 1
	}
	ref = func() []int64 {
		var s []int64
		for row := range rows {
			for c := range 16 * nb {
				var acc int64
				for k := range 4 * k4 {
					wb := uint8(w[(c/16)*64*k4+(k/4)*64+4*(c%16)+k%4])
					acc += value(a[row*lda+k], ops.signedRows) * value(wb, !ops.unsignedW)
				}
				s = append(s, acc)
			}
		}
		return s
	}
	return ta, out, ref
}

// TestTileAsmMatchesGo runs each assembly tile kernel and the Go twin on
// random tiles (odd depths, partial row groups, tail masks, extreme
// values) and requires the same bytes.
func TestTileAsmMatchesGo(t *testing.T) {
	skipNoAsm(t)
	t.Logf("assembly kernels: %v", AsmKernels())
	for _, k := range AsmKernels() {
		r := rand.New(rand.NewPCG(15, 1))
		for i := range 400 {
			rows, k4, nb := 1+r.IntN(4), 1+r.IntN(40), 1+r.IntN(5)
			ta, out, _ := tileCase(r, k, rows, k4, nb, false, opsFor(r, k))
			if want := tileAgainstGo(k, ta, out); !bytes.Equal(out, want) {
				t.Fatalf("%v case %d (rows %d, k4 %d, nb %d, tail %#x): asm\n%v\ngo\n%v", k, i, rows, k4, nb, ta.Tail, out, want)
			}
		}
	}
}

// FuzzKernels runs a random tile and a random depthwise row, drawn from
// the seeds, through each assembly kernel and the Go twin, and requires
// the same bytes.
func FuzzKernels(f *testing.F) {
	for s := range uint64(4) {
		f.Add(s, 15+s)
	}
	f.Fuzz(func(t *testing.T, s1, s2 uint64) {
		for _, k := range AsmKernels() {
			r := rand.New(rand.NewPCG(s1, s2))
			ta, out, _ := tileCase(r, k, 1+r.IntN(4), 1+r.IntN(40), 1+r.IntN(5), false, opsFor(r, k))
			if want := tileAgainstGo(k, ta, out); !bytes.Equal(out, want) {
				t.Errorf("%v tile (rows %d, k4 %d, nb %d, tail %#x): asm\n%v\ngo\n%v", k, ta.Rows, ta.K4, ta.NB, ta.Tail, out, want)
			}
			da, dout := rowCase(r)
			if dwant := rowAgainstGo(k, da, dout); !bytes.Equal(dout, dwant) {
				t.Errorf("%v depthwise row (kh %d, kw %d, nb %d, npix %d, tail %#x): asm\n%v\ngo\n%v", k, da.KH, da.KW, da.NB, da.NPix, da.Tail, dout, dwant)
			}
		}
	})
}

// TestTileExactSums reads the int32 sums of every kernel, the Go twins
// included, back byte by byte and compares them with the exact sums.
func TestTileExactSums(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 2))
	kernels := append([]Kernel{GoU8, GoS8}, AsmKernels()...)
	for i := range 60 {
		rows, k4, nb := 1+r.IntN(4), 1+r.IntN(70), 1+r.IntN(3)
		for _, kern := range kernels {
			ta, out, ref := tileCase(r, kern, rows, k4, nb, true, opsFor(r, kern))
			want := ref()
			got := exactSums(kern, ta, out, rows, nb)
			for j := range got {
				if int32(got[j]) != int32(want[j]) {
					t.Fatalf("%v case %d: sum %d = %d, want %d", kern, i, j, int32(got[j]), want[j])
				}
			}
		}
	}
}

// exactSums runs kernel kern on ta, an exact tileCase writing to out, four
// times, each with the requantization set to pass one byte of the int32
// sums through, and returns the sums, row by row, as int32 values. A
// left shift of 1 and the multiplier 2^30 give the sum s itself, as long
// as |s| < 2^30; the constant term -2^(8i-1) makes the rounding right
// shift by 8i a floor, whose low byte is byte i of s.
func exactSums(kern Kernel, ta TileArgs, out []uint8, rows, nb int) []int64 {
	ta = layoutFor(kern, ta)
	got := make([]int64, rows*16*nb)
	for byteIdx := range 4 {
		for b := range nb {
			for j := range 16 {
				right := uint8(8 * byteIdx)
				unsafe.Slice(ta.QP, nb)[b].Set(j, NewChan(1<<30, 1, right, -(1<<right)/2))
			}
		}
		Tile(kern, &ta)
		for row := range rows {
			for c := range 16 * nb {
				got[row*16*nb+c] |= int64(out[row*ta.LDO+c]) << (8 * byteIdx)
			}
		}
	}
	for j := range got {
		got[j] = int64(int32(got[j]))
	}
	return got
}

// TestRowAsmMatchesGo runs each assembly depthwise row kernel and the Go
// twin on random rows (filter sizes, strides, dilations, UINT8 and INT8
// inputs, partial last blocks, extreme values) and requires the same bytes.
func TestRowAsmMatchesGo(t *testing.T) {
	skipNoAsm(t)
	for _, k := range AsmKernels() {
		r := rand.New(rand.NewPCG(15, 3))
		for i := range 300 {
			ta, out := rowCase(r)
			if want := rowAgainstGo(k, ta, out); !bytes.Equal(out, want) {
				t.Fatalf("%v case %d (%dx%d, nb %d, tail %#x, signed %d): asm\n%v\ngo\n%v",
					k, i, ta.KH, ta.KW, ta.NB, ta.Tail, ta.Signed, out, want)
			}
		}
	}
}

// rowCase builds a random depthwise row call over fresh buffers; out is
// filled with a sentinel so that masked-out stores show. The filter rows
// end with the last channel the kernel may read.
func rowCase(r *rand.Rand) (RowArgs, []uint8) {
	kh, kw, nb := 1+r.IntN(3), 1+r.IntN(5), 1+r.IntN(3)
	C := 16*nb - r.IntN(16)
	dil, stride, npix := 1+r.IntN(2), 1+r.IntN(2), 1+r.IntN(6)
	rows := make([]unsafe.Pointer, kh)
	for ky := range rows {
		b := make([]uint8, ((npix-1)*stride+(kw-1)*dil+1)*C)
		randBytes(r, b)
		rows[ky] = unsafe.Pointer(&b[0])
	}
	w := make([]int32, kh*kw*16*nb)
	for i := range w {
		v := [...]int32{-255, 255, -128, 127, 0, int32(r.IntN(511) - 255)}[r.IntN(6)]
		w[i] = int32(uint16(int16(v)))
	}
	qp := make([]Block, nb)
	for b := range qp {
		randBlock(r, &qp[b], true)
	}
	tail := TailMask(C)
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
	return RowArgs{Rows: &rows[0], KH: kh, KW: kw, TapStep: dil * C, PixStep: stride * C, NPix: npix,
		NB: nb, Tail: tail, W: &w[0], WStride: 64 * nb, QP: &qp[0], Out: &out[0], OutC: outC,
		ZP: zp, Lo: lo, Hi: hi, Signed: int64(r.IntN(2))}, out
}

// tileAgainstGo runs tile kernel k on t, which writes to out, and the Go
// twin on the same inputs into a copy of out, and returns the copy. A
// kernel of the wide layout gets t widened, the twin t as it is.
func tileAgainstGo(k Kernel, t TileArgs, out []byte) []byte {
	want := bytes.Clone(out)
	tg := t
	tg.Out = &want[0]
	tileGo(&tg)
	t = layoutFor(k, t)
	Tile(k, &t)
	return want
}

// layoutFor returns t in the layout kernel k reads: t itself, t's rows
// and [K4][16][4] weights widened into fresh buffers, or for a Deep
// kernel deepened (deepen).
func layoutFor(k Kernel, t TileArgs) TileArgs {
	if k.Deep() && t.Deep == 0 {
		return deepen(t)
	}
	if !k.Wide() || t.Wide != 0 {
		return t
	}
	a := unsafe.Slice(t.A, (t.Rows-1)*t.LDA+4*t.K4)
	a16 := make([]uint16, len(a))
	WidenRows(a16, a, t.Signed != 0)
	w := unsafe.Slice(t.W, t.NB*t.WStride)
	w16 := make([]int16, len(w))
	WidenWeights(w16, w)
	t.A, t.LDA = (*uint8)(unsafe.Pointer(&a16[0])), 2*t.LDA
	t.W, t.WStride, t.Wide = (*int8)(unsafe.Pointer(&w16[0])), 2*t.WStride, 1
	return t
}

// deepen returns t with its [K4][16][4] weights in the deep layout
// (DeepIndex) and its rows copied, both in fresh buffers, the depth padded
// to a multiple of 16 with zero weights and rows of -128 (what the rows
// hold there must not matter).
func deepen(t TileArgs) TileArgs {
	k4 := (t.K4 + 3) / 4 * 4
	lda := t.LDA + 4*(k4-t.K4)
	a := unsafe.Slice(t.A, (t.Rows-1)*t.LDA+4*t.K4)
	ad := bytes.Repeat([]uint8{0x80}, (t.Rows-1)*lda+4*k4)
	for r := range t.Rows {
		copy(ad[r*lda:], a[r*t.LDA:r*t.LDA+4*t.K4])
	}
	w := unsafe.Slice(t.W, (t.NB-1)*t.WStride+64*t.K4)
	wd := make([]int8, t.NB*64*k4)
	for c := range 16 * t.NB {
		for k := range 4 * t.K4 {
			wd[DeepIndex(k4, c, k)] = w[(c/16)*t.WStride+(k/4)*64+4*(c%16)+k%4]
		}
	}
	t.A, t.LDA, t.K4, t.W, t.WStride, t.Deep = &ad[0], lda, k4, &wd[0], 64*k4, 1
	return t
}

// TestTileDeepTwin runs the Go twin on random tiles in the 4-byte and the
// deep layouts and requires the same bytes: the deep layout holds the same
// products, and the padding adds none.
func TestTileDeepTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 10))
	for i := range 200 {
		rows, k4, nb := 1+r.IntN(4), 1+r.IntN(40), 1+r.IntN(5)
		ta, out, _ := tileCase(r, GoS8, rows, k4, nb, false, tileOps{signedRows: r.IntN(2) == 0})
		want := bytes.Clone(out)
		tn := ta
		tn.Out = &want[0]
		tileGo(&tn)
		td := layoutFor(NEONPair, ta)
		tileGo(&td)
		if !bytes.Equal(out, want) {
			t.Fatalf("case %d (rows %d, k4 %d, nb %d): deep\n%v\n4-byte\n%v", i, rows, k4, nb, out, want)
		}
	}
}

// TestPairSafe checks the bound the pair kernel relies on, over every
// pair of int8 products, and PairSafe's word on weights: two products
// x1*w1 + x2*w2 of int8 values, none of the weights -128, always fit
// int16, and only w = x = -128 in both overflows; PairSafe refuses
// exactly the weights stored as -128 (UINT8 0, INT8 -128).
func TestPairSafe(t *testing.T) {
	lo, hi := 0, 0
	for w := -127; w <= 127; w++ {
		for x := -128; x <= 127; x++ {
			lo, hi = min(lo, x*w), max(hi, x*w)
		}
	}
	if 2*lo < math.MinInt16 || 2*hi > math.MaxInt16 {
		t.Fatalf("two products of weights in [-127, 127] reach [%d, %d], outside int16", 2*lo, 2*hi)
	}
	if s := 2 * (-128) * (-128); s <= math.MaxInt16 {
		t.Fatalf("2*(-128)*(-128) = %d fits int16: the bound is wrong", s)
	}
	for b := range 256 {
		for _, signed := range []bool{false, true} {
			stored := int8(b ^ 0x80)
			if signed {
				stored = int8(b)
			}
			if got, want := PairSafe([]byte{7, byte(b), 200}, signed), stored != -128; got != want {
				t.Errorf("PairSafe(weight %d, signed %v) = %v, want %v", b, signed, got, want)
			}
		}
	}
}

// TestTileWideTwin runs the Go twin on random tiles in both layouts and
// requires the same bytes: the wide layout holds the same products.
func TestTileWideTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 4))
	for i := range 200 {
		rows, k4, nb := 1+r.IntN(4), 1+r.IntN(40), 1+r.IntN(5)
		ta, out, _ := tileCase(r, GoU8, rows, k4, nb, false, tileOps{})
		want := bytes.Clone(out)
		tn := ta
		tn.Out = &want[0]
		tileGo(&tn)
		tw := layoutFor(AVX2, ta)
		tileGo(&tw)
		if !bytes.Equal(out, want) {
			t.Fatalf("case %d (rows %d, k4 %d, nb %d): wide\n%v\nnarrow\n%v", i, rows, k4, nb, out, want)
		}
	}
}

// TestWidenRows checks WidenRows (AVX2 assembly on amd64), zero- and
// sign-extending, against the bytes, on every length up to 100 and at
// every start within a vector.
func TestWidenRows(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 5))
	src := make([]uint8, 140)
	randBytes(r, src)
	for _, signed := range []bool{false, true} {
		for off := range 32 {
			for n := range 101 {
				dst := make([]uint16, n+1)
				dst[n] = 0x5a5a
				WidenRows(dst, src[off:off+n], signed)
				for i, b := range src[off : off+n] {
					want := uint16(b)
					if signed {
						want = uint16(int8(b))
					}
					if dst[i] != want {
						t.Fatalf("signed %v, offset %d, length %d: element %d is %#x, want %#x", signed, off, n, i, dst[i], want)
					}
				}
				if dst[n] != 0x5a5a {
					t.Fatalf("signed %v, offset %d, length %d: wrote past the end", signed, off, n)
				}
			}
		}
	}
}

// TestTileBounds runs every kernel, on each of the operands it reads, on
// their extremes, every row byte and every weight byte one of 0x7f, 0x80
// and 0xff (127, -128 and 255 or -1, as the operand is signed or not; and,
// in the wide layout, weights -255 and 255; the pair kernel's weights take
// 0x81 for 0x80, since it takes no -128), over the deepest tiles of the
// tests, and requires the exact sums: no pair of 16-bit products and no
// int32 sum may saturate.
func TestTileBounds(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 6))
	extremes := []uint8{0x7f, 0x80, 0xff}
	for _, kern := range append([]Kernel{GoU8, GoS8}, AsmKernels()...) {
		for _, ops := range kernelOps(kern) {
			for _, row := range extremes {
				for _, wv := range extremes {
					rows, k4, nb := 4, 70, 2
					if kern.Deep() && wv == 0x80 {
						wv = 0x81 // -127: the pair kernel takes no -128 (PairSafe)
					}
					ta, out, _ := tileCase(r, kern, rows, k4, nb, true, ops)
					a := unsafe.Slice(ta.A, (rows-1)*ta.LDA+4*k4)
					for i := range a {
						a[i] = row
					}
					w := unsafe.Slice(ta.W, nb*64*k4)
					for i := range w {
						w[i] = int8(wv)
					}
					want := value(row, ops.signedRows) * value(wv, !ops.unsignedW) * 4 * int64(k4)
					if got := exactSums(kern, ta, out, rows, nb); !allEqual(got, want) {
						t.Errorf("%v %+v, rows %#x, weights %#x: sums %v, want %d", kern, ops, row, wv, got[:4], want)
					}
				}
			}
		}
		if !kern.Wide() {
			continue
		}
		// The wide layout's weights reach 255 in magnitude (w - wzp).
		for _, wv := range []int16{-255, 255} {
			rows, k4, nb := 4, 70, 2
			ta, out, _ := tileCase(r, kern, rows, k4, nb, true, tileOps{})
			ta = layoutFor(kern, ta)
			a := unsafe.Slice((*uint16)(unsafe.Pointer(ta.A)), ((rows-1)*ta.LDA)/2+4*k4)
			for i := range a {
				a[i] = 255
			}
			w := unsafe.Slice((*int16)(unsafe.Pointer(ta.W)), nb*64*k4)
			for i := range w {
				w[i] = wv
			}
			want := 255 * int64(wv) * 4 * int64(k4)
			if got := exactSums(kern, ta, out, rows, nb); !allEqual(got, want) {
				t.Errorf("%v, wide weights %d: sums %v, want %d", kern, wv, got[:4], want)
			}
		}
	}
}

// allEqual says whether every element of s is v.
func allEqual(s []int64, v int64) bool {
	for _, x := range s {
		if x != v {
			return false
		}
	}
	return true
}

// rowAgainstGo is tileAgainstGo for the depthwise row kernel: a kernel
// of paired taps gets t's weights paired, the twin t as it is.
func rowAgainstGo(k Kernel, t RowArgs, out []byte) []byte {
	want := bytes.Clone(out)
	tg := t
	tg.Out = &want[0]
	rowGo(&tg)
	t = pairedFor(k, t)
	Row(k, &t)
	return want
}

// pairedFor returns t in the weight layout kernel k reads: t itself, or
// with its weights paired (PairTaps) in a fresh buffer.
func pairedFor(k Kernel, t RowArgs) RowArgs {
	if !k.PairedTaps() || t.Paired != 0 {
		return t
	}
	nc := t.WStride / 4
	w := unsafe.Slice(t.W, t.KH*t.KW*nc)
	p := make([]int32, t.KH*((t.KW+1)/2)*nc)
	PairTaps(p, w, t.KH, t.KW, nc)
	t.W, t.Paired = &p[0], 1
	return t
}

// TestRowPairedTwin runs the Go twin on random depthwise rows with their
// weights as they are and paired, and requires the same bytes.
func TestRowPairedTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 7))
	for i := range 300 {
		ta, out := rowCase(r)
		want := bytes.Clone(out)
		tg := ta
		tg.Out = &want[0]
		rowGo(&tg)
		tp := pairedFor(AVX2, ta)
		rowGo(&tp)
		if !bytes.Equal(out, want) {
			t.Fatalf("case %d (%dx%d, nb %d): paired\n%v\nunpaired\n%v", i, ta.KH, ta.KW, ta.NB, out, want)
		}
	}
}

// TestRowRoundingEdges runs the Go twin and each assembly depthwise row
// kernel on the requantization's edges and requires TFLite's bytes, from a
// transcription of its MultiplyByQuantizedMultiplier (tflRequant): every
// right shift 0 to 31 with exact ties of both signs, left shifts 0 to 31
// (wrapping, as TFLite's int32 arithmetic does on the CPUs it runs on),
// sums at int32's ends and multipliers from 0 to 2^31-1. Each call is one
// 1x1 tap of weight 1 over 256 pixels whose 16 channels all hold the
// pixel's index, so that channel c of pixel p sums p + Cst.
func TestRowRoundingEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 8))
	in := make([]uint8, 256*16)
	for i := range in {
		in[i] = uint8(i / 16)
	}
	row := unsafe.Pointer(&in[0])
	w := make([]int32, 16)
	for i := range w {
		w[i] = 1
	}
	for i := range 400 {
		var qp Block
		chans := make([]Chan, 16)
		for j := range chans {
			chans[j] = edgeChan(r)
			qp.Set(j, chans[j])
		}
		zp := int64(r.IntN(21) - 10)
		for _, k := range append([]Kernel{GoU8}, AsmKernels()...) {
			out := make([]uint8, 256*16)
			ta := pairedFor(k, RowArgs{Rows: &row, KH: 1, KW: 1, TapStep: 16, PixStep: 16, NPix: 256,
				NB: 1, Tail: 0xffff, W: &w[0], WStride: 64, QP: &qp, Out: &out[0], OutC: 16,
				ZP: zp, Lo: -128, Hi: 127})
			Row(k, &ta)
			for p := range 256 {
				for j, q := range chans {
					x := int32(p) + q.Cst
					want := min(max(tflRequant(x, int32(q.M), int(q.Left), int(q.Shift)-31)+int32(zp), -128), 127)
					if got := int8(out[16*p+j]); int32(got) != want {
						t.Fatalf("%v case %d: sum %d, multiplier %d, left %d, right %d, zero point %d: got %d, want %d",
							k, i, x, q.M, q.Left, int(q.Shift)-31, zp, got, want)
					}
				}
			}
		}
	}
}

// edgeChan draws a channel of NewChan at the requantization's edges. Its
// constant term puts the sums 0 to 255 around an exact tie of the final
// rounding, or at int32's ends, or anywhere.
func edgeChan(r *rand.Rand) Chan {
	m := [...]int64{0, 1, 1 << 30, 1<<30 + 1, 1<<31 - 1, 1<<31 - 2, 1<<30 + r.Int64N(1<<30), r.Int64N(1 << 31)}[r.IntN(8)]
	left, right := uint8(0), uint8(r.IntN(32))
	if r.IntN(4) == 0 {
		left, right = uint8(r.IntN(32)), 0
	}
	var cst int64
	switch r.IntN(4) {
	case 0, 1:
		// With m = 2^30 the high product of x is floor((x+1)/2): x = 2*tie
		// reaches tie = k*2^right + 2^(right-1), halfway between two results.
		m, left = 1<<30, 0
		k := r.Int64N(201) - 100
		tie := k<<right + (1<<right)/2
		cst = 2*tie - r.Int64N(256)
	case 2:
		cst = [...]int64{math.MinInt32, math.MaxInt32 - 255, math.MaxInt32, math.MinInt32 + 255}[r.IntN(4)]
	default:
		cst = int64(int32(r.Uint32()))
	}
	return NewChan(m, left, right, int32(cst))
}

// tflRequant is TFLite's MultiplyByQuantizedMultiplier with a left shift
// left and a right shift right (one of them 0 in TFLite's own use): the
// saturating rounding doubling high multiply, then the division by
// 2^right rounding ties away from zero.
func tflRequant(x, m int32, left, right int) int32 {
	x <<= left
	var h int32
	if x == math.MinInt32 && m == math.MinInt32 {
		h = math.MaxInt32
	} else {
		ab := int64(x) * int64(m)
		nudge := int64(1 << 30)
		if ab < 0 {
			nudge = 1 - 1<<30
		}
		h = int32((ab + nudge) / (1 << 31))
	}
	mask := int32(1)<<right - 1
	threshold := mask >> 1
	if h < 0 {
		threshold++
	}
	q := h >> right
	if h&mask > threshold {
		q++
	}
	return q
}

// TestTileRoundingEdges runs each assembly tile kernel and the Go twin on
// the requantization's edges (edgeChan: every right shift 0 to 31 with
// exact ties, left shifts to 31, sums at int32's ends, multipliers up to
// 2^31-1) and requires the same bytes. Each row holds one value v in
// [0, 127] and each channel's weights are 1, 0, 0, 0, so every channel of
// the row sums v.
func TestTileRoundingEdges(t *testing.T) {
	skipNoAsm(t)
	r := rand.New(rand.NewPCG(15, 9))
	w := make([]int8, 64)
	for j := range 16 {
		w[4*j] = 1
	}
	rowterm := make([]int32, 4)
	for _, k := range AsmKernels() {
		for i := range 400 {
			rows := 1 + r.IntN(4)
			a := make([]uint8, 4*rows)
			for row := range rows {
				a[4*row] = uint8(r.IntN(128))
			}
			var qp Block
			for j := range 16 {
				qp.Set(j, edgeChan(r))
			}
			out := make([]uint8, 16*rows)
			ta := TileArgs{A: &a[0], LDA: 4, Rows: rows, K4: 1, W: &w[0], WStride: 64, NB: 1, Tail: 0xffff,
				RowTerm: &rowterm[0], QP: &qp, Out: &out[0], LDO: 16, ZP: int64(r.IntN(21) - 10), Lo: -128, Hi: 127}
			if ops := opsFor(r, k); ops.signedRows {
				ta.Signed = 1
				if ops.unsignedW {
					ta.UnsignedW = 1
				}
			}
			if want := tileAgainstGo(k, ta, out); !bytes.Equal(out, want) {
				t.Fatalf("%v case %d (rows %d): asm\n%v\ngo\n%v\nchannels %+v", k, i, rows, out, want, qp)
			}
		}
	}
}
