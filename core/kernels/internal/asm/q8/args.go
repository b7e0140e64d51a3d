package q8

import "unsafe"

// TileArgs is one call of the tile kernel: Rows (1 to 4) rows of the
// left-hand side times NB blocks of 16 channels. The weights of a block
// are [K4][16][4] signed bytes, so that one 64-byte vector holds four
// depth steps of the 16 channels; each row is read four bytes at a time,
// as uint8 or, where the kernel's SignedRows says so, as int8. With
// UnsignedW (kernels whose UnsignedWeights says so) the weights are read as
// uint8 and the rows as int8 instead. Kernels
// whose Wide says so read the wide layout instead: rows of 4*K4 int16
// (WidenRows) and blocks of [K4][2][16][2] int16 weights in [-255, 255]
// (WideIndex, WidenWeights), WStride 128*K4. Kernels whose Deep says so
// read blocks of the deep layout (DeepIndex), K4 a multiple of 4. Its
// layout is read by the assembly (see TestAsmLayout): keep the fields 8
// bytes wide and in order.
type TileArgs struct {
	A       *uint8 // first row; rows are LDA bytes apart, 4*K4 elements each
	LDA     int    //
	Rows    int    // 1 to 4
	K4      int    // depth in groups of 4
	W       *int8  // first block's weights, [K4][16][4] (wide: [K4][2][16][2] int16)
	WStride int    // bytes between blocks: 64*K4 (wide: 128*K4)
	NB      int    // number of blocks (at least 1)
	Tail    uint64 // store mask of the last block's 16 channels
	RowTerm *int32 // per-row term added to the sums
	QP      *Block // first block's requantization: channels of NewChan, ruy's rounding (NegAdj ignored)
	Out     *uint8 // row 0, first channel; rows are LDO bytes apart
	LDO     int    //
	ZP      int64  // output zero point
	Lo, Hi  int64  // clamp range
	Signed  int64  // 1: the rows are int8 (read by the Go twin only)
	Wide    int64  // 1: A and W are in the wide layout (read by the Go twin only)
	// UnsignedW is 1 when the weights are uint8 and the rows int8 (Signed
	// 1 too): VPDPBUSD's operands the other way round. Tile runs the
	// kernel's variant for it; the assembly does not read it.
	UnsignedW int64
	Deep      int64 // 1: W is in the deep layout (read by the Go twin only)
}

// RowArgs is one call of the depthwise row kernel: NPix output pixels of
// NB blocks of 16 channels. Each input byte is widened (zero-extended, or
// sign-extended when Signed) and multiplied by its tap's weight, held in
// the low 16 bits of an int32 whose high half is zero, so every sum is
// exact. Kernels whose PairedTaps says so read the weights of two
// horizontal taps in one int32 (see PairTaps) instead. Its layout is read
// by the assembly (see TestAsmLayout): keep the fields 8 bytes wide and in
// order.
type RowArgs struct {
	Rows    *unsafe.Pointer // KH filter rows, at the first pixel's first tap
	KH, KW  int             //
	TapStep int             // bytes between horizontal taps: dilation*C
	PixStep int             // bytes between output pixels' first taps: stride*C
	NPix    int             // output pixels
	NB      int             // channel blocks of 16
	Tail    uint64          // load and store mask of the last block
	W       *int32          // [KH*KW][WStride/4] weights (paired: [KH*ceil(KW/2)][WStride/4])
	WStride int             // bytes between taps' weights
	QP      *Block          // [NB] requantization: channels of NewChan (TFLite's rounding)
	Out     *uint8          // first pixel's first channel
	OutC    int             // bytes between output pixels
	ZP      int64           // output zero point
	Lo, Hi  int64           // clamp range
	Signed  int64           // 1: INT8 inputs (sign-extended)
	Paired  int64           // 1: W holds pairs of taps (read by the Go twin only)
}

// Block is the requantization of 16 output channels, laid out for the
// vector epilogue: 32-bit values per channel, and 64-bit values split into
// the even and the odd channels (the two halves of a 32x32->64 multiply).
// Its layout is read by the assembly (see TestAsmLayout).
type Block struct {
	Cst        [16]int32  // constant term added to the sum
	Left       [16]uint32 // left shift before the multiply
	Mult       [16]int32  // Q31 multiplier
	AddE, AddO [8]int64   // rounding addend of the 64-bit product
	ShE, ShO   [8]uint64  // right shift of the 64-bit product
	NegE, NegO [8]int64   // TFLite's rounding: added when the product is negative
	// AVX2, which shifts 64-bit lanes right only logically, adds the
	// rounding addend plus 2^63 (wrapping), making every sum non-negative,
	// and takes the excess 2^(63-shift) back off the 32-bit result.
	BAddE, BAddO [8]uint64  // rounding addend + 2^63
	Corr         [16]uint32 // low 32 bits of 2^(63-shift)
	// NEON's epilogues round in 32-bit lanes (SQRDMULH, then SRSHL),
	// which takes the right shift negated.
	NegRight [16]int32 // 31-shift: minus the rounding right shift after the multiply
}

// Set fills lane j of b from q.
func (b *Block) Set(j int, q Chan) {
	b.Cst[j], b.Left[j], b.Mult[j] = q.Cst, uint32(q.Left), int32(q.M)
	badd := uint64(q.Add) + 1<<63
	b.Corr[j] = uint32(uint64(1) << (63 - q.Shift))
	b.NegRight[j] = 31 - int32(q.Shift)
	if j%2 == 0 {
		b.AddE[j/2], b.ShE[j/2], b.NegE[j/2], b.BAddE[j/2] = q.Add, uint64(q.Shift), q.NegAdj, badd
	} else {
		b.AddO[j/2], b.ShO[j/2], b.NegO[j/2], b.BAddO[j/2] = q.Add, uint64(q.Shift), q.NegAdj, badd
	}
}

// Lane returns lane j of b.
func (b *Block) Lane(j int) Chan {
	q := Chan{Cst: b.Cst[j], Left: uint8(b.Left[j]), M: int64(b.Mult[j])}
	if j%2 == 0 {
		q.Add, q.Shift, q.NegAdj = b.AddE[j/2], uint8(b.ShE[j/2]), b.NegE[j/2]
	} else {
		q.Add, q.Shift, q.NegAdj = b.AddO[j/2], uint8(b.ShO[j/2]), b.NegO[j/2]
	}
	return q
}

// Chan is one output channel's constant term and ruy-style multiplier.
type Chan struct {
	M      int64 // Q31 multiplier
	Add    int64 // 2^30 + (right > 0 ? 2^(30+right) : 0)
	NegAdj int64 // -2^31 when right > 0: TFLite's ties away from zero; 0 for ruy's rounding
	Cst    int32 // constant term of the sums
	Left   uint8 // left shift before the multiply
	Shift  uint8 // 31 + right
}

// NewChan returns the channel of Q31 multiplier m, left shift left before
// it and rounding right shift right after it, with constant term cst.
//
// Both roundings are "multiply, add 2^30, shift right 31, then add half and
// shift right by right". Nested floor divisions combine,
// floor(floor(a/2^31)/2^e) = floor(a/2^(31+e)), and an integer added inside
// the inner one moves in as a multiple of 2^31, so each becomes one add and
// one shift of the 64-bit product.
func NewChan(m int64, left, right uint8, cst int32) Chan {
	q := Chan{M: m, Cst: cst, Left: left, Shift: 31 + right, Add: 1 << 30}
	if right > 0 {
		q.Add += 1 << (30 + right)
		q.NegAdj = -1 << 31
	}
	return q
}

// TFL is Ruy's counterpart with TFLite's MultiplyByQuantizedMultiplier
// rounding: the final shift rounds ties away from zero, i.e. a negative
// intermediate (x*m + 2^30 < 0) gets one less 2^31.
func (q *Chan) TFL(acc int32, zp, lo, hi int32) int32 {
	x := int64((acc + q.Cst) << q.Left)
	t := x * q.M
	r := (t + q.Add + ((t+(1<<30))>>63)&q.NegAdj) >> q.Shift
	return min(max(int32(r)+zp, lo), hi)
}

// Ruy maps a sum of this channel (without its constant term) to the
// output value with ruy's rounding.
func (q *Chan) Ruy(acc int32, zp, lo, hi int32) int32 {
	x := int64((acc + q.Cst) << q.Left)
	r := (x*q.M + q.Add) >> q.Shift
	return min(max(int32(r)+zp, lo), hi)
}
