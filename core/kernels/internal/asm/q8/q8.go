package q8

import "bytes"

// Kernel names an implementation of the byte-dot-product kernels: the
// GEMM tile kernel (Tile) and the depthwise row kernel (Row). An op fixes
// it when it is prepared; Best is the one this CPU and build run fastest.
type Kernel uint8

// The kernels. Portable is none: the caller's portable layouts.
const (
	Portable Kernel = iota // none: the caller's portable layouts
	GoU8                   // the pure-Go twins, on uint8 rows (int8 rows for INT8 inputs, see UnsignedWeights)
	GoS8                   // the pure-Go twins, on int8 rows
	VNNI                   // amd64 AVX-512 VNNI (VPDPBUSD, VPDPWSSD), uint8 rows (int8 rows for INT8 inputs)
	AVXVNNI                // amd64 AVX2 with AVX-VNNI's 256-bit VPDPBUSD, uint8 rows (int8 rows for INT8 inputs)
	AVX2                   // amd64 AVX2 (VPMADDWD), the wide layout: uint8 rows and int8 weights widened to 16 bits
	NEON                   // arm64 NEON (SMULL, SADALP, SMLAL), int8 rows
	NEONDot                // arm64 NEON with SDOT (FEAT_DotProd), int8 rows
	AVX512BW               // amd64 AVX-512BW without VNNI (VPMADDWD on widened bytes), uint8 rows (int8 rows for INT8 inputs)
	NEONPair               // arm64 NEON without SDOT, 16 depth steps a load (SMULL, SMLAL2, SADALP), the deep layout, int8 rows
	GoDeep                 // the pure-Go twins, on int8 rows and the deep layout
)

// String names k in test output.
func (k Kernel) String() string {
	return [...]string{"portable", "go-u8", "go-s8", "vnni", "avxvnni", "avx2", "neon", "neon-dot", "avx512bw", "neon-pair", "go-deep"}[k]
}

// SignedRows says whether k's tile kernel reads the rows of the left-hand
// side as int8 (SDOT and SMULL multiply bytes of one signedness) rather
// than as uint8 (VPDPBUSD multiplies unsigned by signed bytes).
func (k Kernel) SignedRows() bool {
	return k == GoS8 || k == NEON || k == NEONDot || k == NEONPair || k == GoDeep
}

// Deep says whether k's tile kernel reads the deep layout of TileArgs:
// depth padded to a multiple of 16 (K4 a multiple of 4) and each block's
// weights as [4][K4/4][4][16]: four quarters of 4 channels, each holding 16
// depth steps of a channel in a row (DeepIndex), so that a row's 16 bytes
// meet a channel's 16 weights in one SMULL and one SMLAL2. The kernel adds
// two products in 16 bits before widening, exact only while no weight is
// -128 (PairSafe); Fallback names the kernel for the others.
func (k Kernel) Deep() bool {
	return k == NEONPair || k == GoDeep
}

// Fallback is the kernel that runs what k cannot: NEON for NEONPair (and
// GoS8 for its twin GoDeep), on weights that are not PairSafe; k itself
// for the others.
func (k Kernel) Fallback() Kernel {
	switch k {
	case NEONPair:
		return NEON
	case GoDeep:
		return GoS8
	}
	return k
}

// Groups returns the depth groups of 4 (TileArgs.K4) of depth K in k's
// layout: ceil(K/4), or for the deep layout ceil(K/16)*4.
func (k Kernel) Groups(K int) int {
	if k.Deep() {
		return (K + 15) / 16 * 4
	}
	return (K + 3) / 4
}

// DeepIndex is the index in deep weights of channel c's depth step k, for
// depth groups k4 (a multiple of 4).
func DeepIndex(k4, c, k int) int {
	return (c/16)*k4*64 + (c%16/4)*k4*16 + (k/16)*64 + 16*(c%4) + k%16
}

// PairSafe says whether the NEONPair kernel sums weights w exactly: w are
// 8-bit weights (INT8 when signed, else UINT8, which the kernels store
// shifted by -128) of which none is stored as -128. Proof: the kernel
// adds two products x1*w1 + x2*w2 of int8 values in an int16 lane. With
// |w| <= 127 and |x| <= 128 each product lies in [-16256, 16256] and the
// sum in [-32512, 32512], inside int16's [-32768, 32767]; with w = x = -128
// in both, the sum is 32768, which wraps. The rows may hold any byte.
func PairSafe(w []byte, signed bool) bool {
	bad := byte(0) // UINT8 0 is stored as -128
	if signed {
		bad = 0x80
	}
	return bytes.IndexByte(w, bad) < 0
}

// UnsignedWeights says whether k's tile kernel also runs with VPDPBUSD's
// operands the other way round: the weights as its unsigned bytes (INT8
// weights stored as w+128) and the rows as its signed ones, so that INT8
// inputs are read as they come (TileArgs.UnsignedW), the +128 taken back
// by the row term. The kernels of uint8 rows that multiply bytes by bytes
// do (VNNI, AVX-VNNI, AVX-512BW and their twin GoU8).
func (k Kernel) UnsignedWeights() bool {
	return k == GoU8 || k == VNNI || k == AVXVNNI || k == AVX512BW
}

// Wide says whether k's tile kernel reads the wide layout of TileArgs:
// rows widened to int16 from uint8 or int8 (WidenRows), whichever the
// input is (SignedRows does not apply), and weights as int16 in [-255, 255]
// (WidenWeights, WideIndex), so that the AVX2 kernel multiplies them with
// VPMADDWD as they come.
func (k Kernel) Wide() bool {
	return k == AVX2
}

// WidenRows writes the bytes of src, zero-extended or, when signed,
// sign-extended (int8 rows), to dst, which must be at least as long: rows
// of the wide layout, which its kernels read as int16.
func WidenRows(dst []uint16, src []uint8, signed bool) {
	if len(src) == 0 {
		return
	}
	widen(dst[:len(src)], src, signed)
}

// WideIndex is the index in wide weights of channel c's depth step k,
// for depth groups k4.
func WideIndex(k4, c, k int) int {
	return (c/16)*k4*64 + (k/4)*64 + 32*(k%4/2) + 2*(c%16) + k%2
}

// WidenWeights converts weights from the [K4][16][4] int8 blocks of
// TileArgs into the wide layout's [K4][2][16][2] int16 blocks in dst
// (as long as src): the first 16 pairs of a depth group hold its depth
// steps 0 and 1 of each channel, the next 16 steps 2 and 3, so that a
// row's two steps broadcast to every channel meet them in one VPMADDWD.
func WidenWeights(dst []int16, src []int8) {
	dst = dst[:len(src)]
	for g := 0; g < len(src); g += 64 {
		for c := range 16 {
			for s := range 4 {
				dst[g+32*(s/2)+2*c+s%2] = int16(src[g+4*c+s])
			}
		}
	}
}

// PairedTaps says whether k's depthwise row kernel reads the weights of
// two horizontal taps in one int32 (PairTaps), multiplying both taps'
// inputs with one VPMADDWD: AVX2's, which AVX-VNNI runs too.
func (k Kernel) PairedTaps() bool {
	return k == AVX2 || k == AVXVNNI
}

// PairTaps converts depthwise weights w, [kh*kw][nc] int32 each holding
// its weight in the low 16 bits (RowArgs.W), into dst, [kh*ceil(kw/2)][nc]:
// the weights of taps 2j and 2j+1 of a filter row in the low and the high
// half of one int32, and an odd row's last tap alone in the low half.
// dst may be w itself: no pair is written before the taps it holds are read.
func PairTaps(dst, w []int32, kh, kw, nc int) {
	slots := (kw + 1) / 2
	for ky := range kh {
		for kx := range kw {
			src := w[(ky*kw+kx)*nc : (ky*kw+kx+1)*nc]
			d := dst[(ky*slots+kx/2)*nc : (ky*slots+kx/2+1)*nc]
			for c, v := range src {
				if kx%2 == 0 {
					d[c] = int32(uint16(v))
				} else {
					d[c] |= int32(uint32(uint16(v)) << 16)
				}
			}
		}
	}
}

// twin says whether k is one of the pure-Go twins.
func (k Kernel) twin() bool {
	return k == GoU8 || k == GoS8 || k == GoDeep
}

// Tile runs tile kernel k (not Portable) on t.
func Tile(k Kernel, t *TileArgs) {
	if k.twin() {
		tileGo(t)
		return
	}
	tileAsm(k, t)
}

// Row runs depthwise row kernel k (not Portable) on t.
func Row(k Kernel, t *RowArgs) {
	if k.twin() {
		rowGo(t)
		return
	}
	rowAsm(k, t)
}

// TailMask is the store mask of the last of the blocks of 16 channels
// covering n channels (TileArgs.Tail, RowArgs.Tail).
func TailMask(n int) uint64 {
	if r := n % 16; r != 0 {
		return 1<<r - 1
	}
	return 0xffff
}
