//go:build !purego

#include "textflag.h"
#include "args.h"

// The kernels in AVX2, for CPUs without AVX-512 VNNI: the tile kernel with
// AVX-VNNI (tileAVXVNNI), the depthwise kernel (rowAVX2) and, at the end,
// the tile kernel on the wide layout (tileAVX2). AVX2's byte multiply
// (VPMADDUBSW) saturates its pairs of u8*s8 products, so the AVX2 kernels
// multiply 16-bit values with VPMADDWD, whose int32 sums of two products
// are exact: a row value x in [0, 255] (or [-128, 127]) times a weight w in
// [-128, 127] (depthwise: [-255, 255]) gives |x0*w0 + x1*w1| <= 2*255*255,
// far from int32's limits, and VPMADDWD's one wrapping case, both pairs
// -32768 * -32768, cannot occur.
//
// The tile kernel reads rows and weights already widened to 16 bits (the
// wide layout, see TileArgs): weights once when the op is prepared, rows
// once per row block, so that its loop is loads, VPMADDWD and VPADDD alone
// (16 of each for 4 rows x 16 channels x 4 depth steps). The depthwise
// kernel interleaves the bytes of two horizontal taps, widens them to
// 16-bit pairs and multiplies them by the taps' weights paired in int32
// lanes (PairTaps): one VPMADDWD for two taps of 8 channels.
//
// The requantization runs on 8 lanes: VPMULDQ on the even and on the odd
// lanes, as with AVX-512; AVX2 has no 64-bit arithmetic right shift, so
// the sums are made non-negative first (see REQ8_RUY). Bytes are stored 16
// at a time, or one by one through the stack where the mask is partial.

// qvPackLo and qvPackHi move the low byte of each int32 of a 128-bit lane
// to bytes 0-3 and 4-7 of the lane; qvPackIdx then gathers those dwords
// of two registers of 8 channels in channel order (see PACK16).
DATA qvPackLo<>+0(SB)/8, $0x808080800c080400
DATA qvPackLo<>+8(SB)/8, $0x8080808080808080
DATA qvPackLo<>+16(SB)/8, $0x808080800c080400
DATA qvPackLo<>+24(SB)/8, $0x8080808080808080
GLOBL qvPackLo<>(SB), RODATA|NOPTR, $32

DATA qvPackHi<>+0(SB)/8, $0x0c08040080808080
DATA qvPackHi<>+8(SB)/8, $0x8080808080808080
DATA qvPackHi<>+16(SB)/8, $0x0c08040080808080
DATA qvPackHi<>+24(SB)/8, $0x8080808080808080
GLOBL qvPackHi<>(SB), RODATA|NOPTR, $32

DATA qvPackIdx<>+0(SB)/8, $0x0000000400000000
DATA qvPackIdx<>+8(SB)/8, $0x0000000500000001
DATA qvPackIdx<>+16(SB)/8, $0
DATA qvPackIdx<>+24(SB)/8, $0
GLOBL qvPackIdx<>(SB), RODATA|NOPTR, $32

// qvHalf is 2^30, the rounding term of TFLite's multiply-high.
DATA qvHalf<>+0(SB)/8, $0x40000000
GLOBL qvHalf<>(SB), RODATA|NOPTR, $8

// Registers of both kernels: Y1 zero during the requantization, Y12 the
// output zero point, Y13 and Y14 the clamp, Y15 qvPackIdx.

// CLAMP adds the zero point and clamps.
#define CLAMP(x) \
	VPADDD  Y12, x, x; \
	VPMAXSD Y13, x, x; \
	VPMINSD Y14, x, x

// The 64-bit products are shifted right logically, AVX2 having no
// arithmetic shift of 64-bit lanes: the rounding addends BADDE and BADDO
// hold the addend plus 2^63 (wrapping), which makes every sum p + add, a
// 63-bit signed value, the non-negative p + add + 2^63, and since 2^63 is
// a multiple of 2^shift, (p + add + 2^63) >>> shift is (p + add) >> shift
// plus 2^(63-shift), whose low 32 bits (CORR) come back off once the
// halves are merged. The odd lanes' multipliers are read 4 bytes on, where
// VPMULDQ finds them in its even dwords.

// REQ8_RUY requantizes the 8 sums in x (channels off/4 to off/4+7 of the
// Block at R10) plus the row term rt with ruy's rounding, as Chan.Ruy:
// x = (x+cst+rt) << left; (x*mult + add) >> shift on the even lanes (Y8)
// and the odd lanes (Y9); then CLAMP. Clobbers Y8, Y9.
#define REQ8_RUY(x, off, rt) \
	VPADDD   off+QB_CST(R10), x, x; \
	VPADDD   rt, x, x; \
	VPSLLVD  off+QB_LEFT(R10), x, x; \
	VPMULDQ  off+QB_MULT(R10), x, Y8; \
	VPADDQ   off+QB_BADDE(R10), Y8, Y8; \
	VPSRLVQ  off+QB_SHE(R10), Y8, Y8; \
	VPSRLQ   $32, x, Y9; \
	VPMULDQ  off+4+QB_MULT(R10), Y9, Y9; \
	VPADDQ   off+QB_BADDO(R10), Y9, Y9; \
	VPSRLVQ  off+QB_SHO(R10), Y9, Y9; \
	VPSLLQ   $32, Y9, Y9; \
	VPBLENDD $0xaa, Y9, Y8, x; \
	VPSUBD   off+QB_CORR(R10), x, x; \
	CLAMP(x)

// TFL_HALF is TFLite's rounding of one half's 64-bit products p, as
// Chan.TFL: p += add + ((p + 2^30 < 0) ? neg : 0); p >>>= shift (with the
// addend plus 2^63, see above). Y11 holds 2^30 in every qword, Y1 zero.
// Clobbers Y10.
#define TFL_HALF(p, BADD, NEG, SH) \
	VPADDQ   Y11, p, Y10; \
	VPCMPGTQ Y10, Y1, Y10; \
	VPAND    NEG, Y10, Y10; \
	VPADDQ   BADD, p, p; \
	VPADDQ   Y10, p, p; \
	VPSRLVQ  SH, p, p

// REQ8_TFL is REQ8_RUY with TFLite's rounding and no row term. Clobbers
// Y8-Y10.
#define REQ8_TFL(x, off) \
	VPADDD   off+QB_CST(R10), x, x; \
	VPSLLVD  off+QB_LEFT(R10), x, x; \
	VPMULDQ  off+QB_MULT(R10), x, Y8; \
	TFL_HALF(Y8, off+QB_BADDE(R10), off+QB_NEGE(R10), off+QB_SHE(R10)); \
	VPSRLQ   $32, x, Y9; \
	VPMULDQ  off+4+QB_MULT(R10), Y9, Y9; \
	TFL_HALF(Y9, off+QB_BADDO(R10), off+QB_NEGO(R10), off+QB_SHO(R10)); \
	VPSLLQ   $32, Y9, Y9; \
	VPBLENDD $0xaa, Y9, Y8, x; \
	VPSUBD   off+QB_CORR(R10), x, x; \
	CLAMP(x)

// PACK16 leaves in the low 16 bytes of a the low bytes of the int32 lanes
// of a (channels 0-7) and b (channels 8-15), in channel order.
#define PACK16(a, b) \
	VPSHUFB qvPackLo<>(SB), a, a; \
	VPSHUFB qvPackHi<>(SB), b, b; \
	VPOR    b, a, a; \
	VPERMD  a, Y15, a

// BLOCKMASK sets CX to the store mask of the block: the tail mask at
// TAIL(DI) for the last block (when the blocks left, R12, are 1), else all
// 16 lanes.
#define BLOCKMASK(TAIL) \
	MOVQ    $0xffff, CX; \
	CMPQ    R12, $1; \
	CMOVQEQ TAIL(DI), CX

// STORE16 stores the bytes of x to (SI) whose bits are set in CX: all 16
// at once, or one by one through 0(SP). Clobbers AX and BX.
#define STORE16(x, Lpart, Lloop, Lskip, Ldone) \
	CMPQ    CX, $0xffff; \
	JNE     Lpart; \
	VMOVDQU x, (SI); \
	JMP     Ldone; \
Lpart: \
	VMOVDQU x, 0(SP); \
	XORQ    BX, BX; \
Lloop: \
	BTQ     BX, CX; \
	JCC     Lskip; \
	MOVB    0(SP)(BX*1), AX; \
	MOVB    AX, (SI)(BX*1); \
Lskip: \
	INCQ    BX; \
	CMPQ    BX, $16; \
	JNE     Lloop; \
Ldone:

// ROWPTRS sets R8 to row R9 of the left-hand side and R13 to its output,
// and R11, R10, R12 to the first block's weights and requantization and
// the number of blocks.
#define ROWPTRS \
	MOVQ  R9, R8; \
	IMULQ DX, R8; \
	ADDQ  TA_A(DI), R8; \
	MOVQ  R9, R13; \
	IMULQ TA_LDO(DI), R13; \
	ADDQ  TA_OUT(DI), R13; \
	MOVQ  TA_W(DI), R11; \
	MOVQ  TA_QP(DI), R10; \
	MOVQ  TA_NB(DI), R12

// NEXTBLOCK moves the weights, requantization and output on by a block
// and counts it down (R12).
#define NEXTBLOCK \
	ADDQ TA_WSTRIDE(DI), R11; \
	ADDQ $QB_SIZE, R10; \
	ADDQ $16, R13; \
	DECQ R12

// ROWSTORE requantizes the 16 sums of row R9 in a (channels 0-7) and b
// (8-15) with its row term and stores them (x is a's low half) to the
// block's output, under the block's mask. Clobbers AX, BX, CX, SI, Y3,
// Y8, Y9.
#define ROWSTORE(a, b, x, Lpart, Lloop, Lskip, Ldone) \
	MOVQ         TA_ROWTERM(DI), AX; \
	VPBROADCASTD (AX)(R9*4), Y3; \
	REQ8_RUY(a, 0, Y3); \
	REQ8_RUY(b, 32, Y3); \
	PACK16(a, b); \
	BLOCKMASK(TA_TAIL); \
	MOVQ         R13, SI; \
	STORE16(x, Lpart, Lloop, Lskip, Ldone)

// DWTAP adds one tap of 16 channels, widened from 16 bytes at (base) by
// MOVX (VPMOVZXBD or VPMOVSXBD), times the weights at (BX) into Y0 and Y2.
// Clobbers Y4, Y5.
#define DWTAP(MOVX, base) \
	MOVX     0(base), Y4; \
	MOVX     8(base), Y5; \
	VPMADDWD (BX), Y4, Y4; \
	VPMADDWD 32(BX), Y5, Y5; \
	VPADDD   Y4, Y0, Y0; \
	VPADDD   Y5, Y2, Y2

// DWPAIR adds two horizontal taps of 16 channels, the bytes at a and b
// interleaved and widened to 16-bit pairs by MOVX (VPMOVZXBW or
// VPMOVSXBW), times the taps' paired weights at (BX) into Y0 and Y2: one
// VPMADDWD for both taps. Clobbers Y4-Y6.
#define DWPAIR(MOVX, a, b) \
	VMOVDQU    a, X4; \
	VMOVDQU    b, X5; \
	VPUNPCKHBW X5, X4, X6; \
	VPUNPCKLBW X5, X4, X4; \
	MOVX       X4, Y4; \
	MOVX       X6, Y5; \
	VPMADDWD   (BX), Y4, Y4; \
	VPMADDWD   32(BX), Y5, Y5; \
	VPADDD     Y4, Y0, Y0; \
	VPADDD     Y5, Y2, Y2

// COPYTAIL copies the bytes at (SI) under the tail mask to off(SP).
// Clobbers R13; keeps DX at 32(SP) meanwhile.
#define COPYTAIL(off, Lloop, Lnext) \
	MOVQ DX, 32(SP); \
	XORQ R13, R13; \
Lloop: \
	BTQ  R13, DA_TAIL(DI); \
	JCC  Lnext; \
	MOVB (SI)(R13*1), DX; \
	MOVB DX, off(SP)(R13*1); \
Lnext: \
	INCQ R13; \
	CMPQ R13, $16; \
	JNE  Lloop; \
	MOVQ 32(SP), DX

// func rowAVX2(t *RowArgs)
//
// The depthwise kernel on paired weights (PairTaps): two horizontal taps
// of a filter row at a time, an odd row's last tap alone.
TEXT ·rowAVX2(SB), NOSPLIT, $40-8
	MOVQ         t+0(FP), DI
	VPBROADCASTD DA_ZP(DI), Y12
	VPBROADCASTD DA_LO(DI), Y13
	VPBROADCASTD DA_HI(DI), Y14
	VMOVDQU      qvPackIdx<>(SB), Y15
	VPBROADCASTQ qvHalf<>(SB), Y11
	VPXOR        Y1, Y1, Y1
	MOVQ         DA_NPIX(DI), R9
	XORQ         R8, R8                // byte offset of the pixel's first tap
	MOVQ         DA_OUT(DI), R14

dwpix:
	TESTQ R9, R9
	JZ    dwdone
	MOVQ  DA_NB(DI), R12
	MOVQ  DA_QP(DI), R10
	XORQ  R11, R11                     // channel offset

dwblk:
	VPXOR Y0, Y0, Y0
	VPXOR Y2, Y2, Y2
	MOVQ  DA_ROWS(DI), AX
	MOVQ  DA_W(DI), BX
	LEAQ  (BX)(R11*4), BX              // this block's weights of tap 0
	MOVQ  DA_KH(DI), CX
	CMPQ  R12, $1
	JNE   dwfull
	CMPQ  DA_TAIL(DI), $0xffff
	JNE   dwpky

dwfull:
	MOVQ DA_TAPSTEP(DI), R13
	CMPQ DA_SIGNED(DI), $0
	JNE  dwsky

dwuky:
	MOVQ (AX), SI
	ADDQ R8, SI
	ADDQ R11, SI
	MOVQ DA_KW(DI), DX

dwukx:
	CMPQ DX, $2
	JLT  dwukx1
	DWPAIR(VPMOVZXBW, (SI), (SI)(R13*1))
	LEAQ (SI)(R13*2), SI
	ADDQ DA_WSTRIDE(DI), BX
	SUBQ $2, DX
	JMP  dwukx

dwukx1:
	TESTQ DX, DX
	JZ    dwunext
	DWTAP(VPMOVZXBD, SI)
	ADDQ  DA_WSTRIDE(DI), BX

dwunext:
	ADDQ $8, AX
	DECQ CX
	JNZ  dwuky
	JMP  dwreq

dwsky:
	MOVQ (AX), SI
	ADDQ R8, SI
	ADDQ R11, SI
	MOVQ DA_KW(DI), DX

dwskx:
	CMPQ DX, $2
	JLT  dwskx1
	DWPAIR(VPMOVSXBW, (SI), (SI)(R13*1))
	LEAQ (SI)(R13*2), SI
	ADDQ DA_WSTRIDE(DI), BX
	SUBQ $2, DX
	JMP  dwskx

dwskx1:
	TESTQ DX, DX
	JZ    dwsnext
	DWTAP(VPMOVSXBD, SI)
	ADDQ  DA_WSTRIDE(DI), BX

dwsnext:
	ADDQ $8, AX
	DECQ CX
	JNZ  dwsky
	JMP  dwreq

	// A partial last block: each tap's channels under the tail mask are
	// copied to 0(SP), or a pair's to 0(SP) and 16(SP), first, so that no
	// byte past them is read.
dwpky:
	MOVQ (AX), SI
	ADDQ R8, SI
	ADDQ R11, SI
	MOVQ DA_KW(DI), DX

dwpkx:
	CMPQ DX, $2
	JLT  dwpkx1
	COPYTAIL(0, dwpa, dwpanext)
	ADDQ DA_TAPSTEP(DI), SI
	COPYTAIL(16, dwpb, dwpbnext)
	ADDQ DA_TAPSTEP(DI), SI
	CMPQ DA_SIGNED(DI), $0
	JNE  dwpps
	DWPAIR(VPMOVZXBW, 0(SP), 16(SP))
	JMP  dwppd

dwpps:
	DWPAIR(VPMOVSXBW, 0(SP), 16(SP))

dwppd:
	ADDQ DA_WSTRIDE(DI), BX
	SUBQ $2, DX
	JMP  dwpkx

dwpkx1:
	TESTQ DX, DX
	JZ    dwpnext
	COPYTAIL(0, dwpc, dwpcnext)
	CMPQ  DA_SIGNED(DI), $0
	JNE   dwp1s
	DWTAP(VPMOVZXBD, SP)
	JMP   dwp1d

dwp1s:
	DWTAP(VPMOVSXBD, SP)

dwp1d:
	ADDQ DA_WSTRIDE(DI), BX

dwpnext:
	ADDQ $8, AX
	DECQ CX
	JNZ  dwpky

dwreq:
	REQ8_TFL(Y0, 0)
	REQ8_TFL(Y2, 32)
	PACK16(Y0, Y2)
	BLOCKMASK(DA_TAIL)
	LEAQ (R14)(R11*1), SI
	STORE16(X0, dwpart, dwloop, dwskip, dwstored)
	ADDQ $16, R11
	ADDQ $QB_SIZE, R10
	DECQ R12
	JNZ  dwblk
	ADDQ DA_PIXSTEP(DI), R8
	ADDQ DA_OUTC(DI), R14
	DECQ R9
	JMP  dwpix

dwdone:
	VZEROUPPER
	RET

// VPDPBUSD_Y(w, x, acc) is AVX-VNNI's VEX-encoded VPDPBUSD Y<acc>, Y<x>,
// Y<w> (registers by number): each int32 lane of acc gains the dot product
// of its four unsigned bytes of x with its four signed bytes of w, exactly.
// The Go assembler encodes VPDPBUSD only as AVX-512 VNNI (EVEX).
#define VPDPBUSD_Y(w, x, acc) \
	BYTE $0xc4; \
	BYTE $(0xe2 ^ (((acc)>>3)<<7) ^ (((w)>>3)<<5)); \
	BYTE $(0x7d ^ ((x)<<3)); \
	BYTE $0x50; \
	BYTE $(0xc0 | (((acc)&7)<<3) | ((w)&7))

// EPICONST loads the registers of the requantization: Y1 (zero) and
// Y12-Y15.
#define EPICONST \
	VPXOR        Y1, Y1, Y1; \
	VPBROADCASTD TA_ZP(DI), Y12; \
	VPBROADCASTD TA_LO(DI), Y13; \
	VPBROADCASTD TA_HI(DI), Y14; \
	VMOVDQU      qvPackIdx<>(SB), Y15

// QUADROW requantizes and stores row r of the four rows' sums saved at
// 16(SP) (two registers a row) to (SI). Clobbers AX, BX, Y0, Y2, Y3, Y8, Y9.
#define QUADROW(r, Lpart, Lloop, Lskip, Ldone) \
	VMOVDQU      16+64*r(SP), Y0; \
	VMOVDQU      48+64*r(SP), Y2; \
	MOVQ         TA_ROWTERM(DI), AX; \
	VPBROADCASTD 4*r(AX), Y3; \
	REQ8_RUY(Y0, 0, Y3); \
	REQ8_RUY(Y2, 32, Y3); \
	PACK16(Y0, Y2); \
	STORE16(X0, Lpart, Lloop, Lskip, Ldone)

// TILE_AVXVNNI is the body of the AVX-VNNI tile kernels, with DOT(w, x,
// acc) their VPDPBUSD_Y on weights w and a row's broadcast bytes x: four
// rows, one block at a time, 8 accumulators (rows 0-3 in Y0-Y7, channels
// 0-7, then 8-15); fewer rows one row and one block at a time, depth
// groups two at a time into two sets of accumulators (Y4, Y5 and Y6, Y7).
#define TILE_AVXVNNI(DOT) \
	MOVQ         t+0(FP), DI; \
	MOVQ         TA_LDA(DI), DX; \
	CMPQ         TA_ROWS(DI), $4; \
	JNE          vsingle; \
	LEAQ         (DX)(DX*2), R9; \
	MOVQ         TA_W(DI), R11; \
	MOVQ         TA_QP(DI), R10; \
	MOVQ         TA_OUT(DI), R13; \
	MOVQ         TA_NB(DI), R12; \
vquadblk: \
	VPXOR        Y0, Y0, Y0; \
	VPXOR        Y1, Y1, Y1; \
	VPXOR        Y2, Y2, Y2; \
	VPXOR        Y3, Y3, Y3; \
	VPXOR        Y4, Y4, Y4; \
	VPXOR        Y5, Y5, Y5; \
	VPXOR        Y6, Y6, Y6; \
	VPXOR        Y7, Y7, Y7; \
	MOVQ         TA_A(DI), SI; \
	MOVQ         R11, BX; \
	MOVQ         TA_K4(DI), CX; \
	TESTQ        CX, CX; \
	JZ           vquadreq; \
vquadloop: \
	VMOVDQU      (BX), Y8; \
	VMOVDQU      32(BX), Y9; \
	VPBROADCASTD (SI), Y10; \
	VPBROADCASTD (SI)(DX*1), Y11; \
	VPBROADCASTD (SI)(DX*2), Y12; \
	VPBROADCASTD (SI)(R9*1), Y13; \
	DOT(8, 10, 0); \
	DOT(9, 10, 1); \
	DOT(8, 11, 2); \
	DOT(9, 11, 3); \
	DOT(8, 12, 4); \
	DOT(9, 12, 5); \
	DOT(8, 13, 6); \
	DOT(9, 13, 7); \
	ADDQ         $4, SI; \
	ADDQ         $64, BX; \
	DECQ         CX; \
	JNZ          vquadloop; \
vquadreq: \
	VMOVDQU      Y0, 16(SP); \
	VMOVDQU      Y1, 48(SP); \
	VMOVDQU      Y2, 80(SP); \
	VMOVDQU      Y3, 112(SP); \
	VMOVDQU      Y4, 144(SP); \
	VMOVDQU      Y5, 176(SP); \
	VMOVDQU      Y6, 208(SP); \
	VMOVDQU      Y7, 240(SP); \
	EPICONST; \
	BLOCKMASK(TA_TAIL); \
	MOVQ         R13, SI; \
	QUADROW(0, vq0part, vq0loop, vq0skip, vq0done); \
	ADDQ         TA_LDO(DI), SI; \
	QUADROW(1, vq1part, vq1loop, vq1skip, vq1done); \
	ADDQ         TA_LDO(DI), SI; \
	QUADROW(2, vq2part, vq2loop, vq2skip, vq2done); \
	ADDQ         TA_LDO(DI), SI; \
	QUADROW(3, vq3part, vq3loop, vq3skip, vq3done); \
	NEXTBLOCK; \
	JNZ          vquadblk; \
	JMP          vdone; \
vsingle: \
	EPICONST; \
	XORQ         R9, R9; \
vrow: \
	CMPQ         R9, TA_ROWS(DI); \
	JGE          vdone; \
	ROWPTRS; \
vsingleblk: \
	VPXOR        Y4, Y4, Y4; \
	VPXOR        Y5, Y5, Y5; \
	VPXOR        Y6, Y6, Y6; \
	VPXOR        Y7, Y7, Y7; \
	MOVQ         R8, SI; \
	MOVQ         R11, BX; \
	MOVQ         TA_K4(DI), CX; \
	SHRQ         $1, CX; \
	JZ           vsingleodd; \
vsingleloop: \
	VMOVDQU      (BX), Y8; \
	VMOVDQU      32(BX), Y9; \
	VMOVDQU      64(BX), Y10; \
	VMOVDQU      96(BX), Y11; \
	VPBROADCASTD (SI), Y2; \
	VPBROADCASTD 4(SI), Y3; \
	DOT(8, 2, 4); \
	DOT(9, 2, 5); \
	DOT(10, 3, 6); \
	DOT(11, 3, 7); \
	ADDQ         $8, SI; \
	ADDQ         $128, BX; \
	DECQ         CX; \
	JNZ          vsingleloop; \
vsingleodd: \
	TESTQ        $1, TA_K4(DI); \
	JZ           vsinglereq; \
	VMOVDQU      (BX), Y8; \
	VMOVDQU      32(BX), Y9; \
	VPBROADCASTD (SI), Y2; \
	DOT(8, 2, 4); \
	DOT(9, 2, 5); \
vsinglereq: \
	VPADDD       Y6, Y4, Y4; \
	VPADDD       Y7, Y5, Y5; \
	ROWSTORE(Y4, Y5, X4, vs0part, vs0loop, vs0skip, vs0done); \
	NEXTBLOCK; \
	JNZ          vsingleblk; \
	INCQ         R9; \
	JMP          vrow; \
vdone: \
	VZEROUPPER; \
	RET

// DOT_SW_Y and DOT_UW_Y are the AVX-VNNI kernels' multiply-adds: the
// weights as VPDPBUSD's signed operand (uint8 rows), or as its unsigned
// one (UnsignedW: int8 rows).
#define DOT_SW_Y(w, x, acc) VPDPBUSD_Y(w, x, acc)
#define DOT_UW_Y(w, x, acc) VPDPBUSD_Y(x, w, acc)

// func tileAVXVNNI(t *TileArgs)
//
// The tile kernel with AVX-VNNI's 256-bit VPDPBUSD, for CPUs that have it
// without AVX-512 VNNI: the VNNI kernel's loop on two 8-lane halves of a
// block, and the AVX2 kernel's requantization.
TEXT ·tileAVXVNNI(SB), NOSPLIT, $272-8
	TILE_AVXVNNI(DOT_SW_Y)

// func tileAVXVNNIUW(t *TileArgs)
//
// tileAVXVNNI on int8 rows and uint8 weights (UnsignedW).
TEXT ·tileAVXVNNIUW(SB), NOSPLIT, $272-8
	TILE_AVXVNNI(DOT_UW_Y)

// WPAIR multiplies the rows' pair of depth steps at aoff(SI) (rows DX bytes
// apart, row 3 at R9) by the 16 channels' pairs of weights at woff(BX),
// adding into Y0-Y7 (row r's channels 0-7 in Y(2r), 8-15 in Y(2r+1)).
// Clobbers Y8-Y15.
#define WPAIR(woff, aoff) \
	VMOVDQU      woff(BX), Y8; \
	VMOVDQU      woff+32(BX), Y9; \
	VPBROADCASTD aoff(SI), Y10; \
	VPBROADCASTD aoff(SI)(DX*1), Y11; \
	VPBROADCASTD aoff(SI)(DX*2), Y12; \
	VPBROADCASTD aoff(SI)(R9*1), Y13; \
	VPMADDWD     Y8, Y10, Y14; \
	VPMADDWD     Y9, Y10, Y15; \
	VPADDD       Y14, Y0, Y0; \
	VPADDD       Y15, Y1, Y1; \
	VPMADDWD     Y8, Y11, Y14; \
	VPMADDWD     Y9, Y11, Y15; \
	VPADDD       Y14, Y2, Y2; \
	VPADDD       Y15, Y3, Y3; \
	VPMADDWD     Y8, Y12, Y14; \
	VPMADDWD     Y9, Y12, Y15; \
	VPADDD       Y14, Y4, Y4; \
	VPADDD       Y15, Y5, Y5; \
	VPMADDWD     Y8, Y13, Y14; \
	VPMADDWD     Y9, Y13, Y15; \
	VPADDD       Y14, Y6, Y6; \
	VPADDD       Y15, Y7, Y7

// func tileAVX2(t *TileArgs)
//
// The tile kernel on the wide layout: four rows at a time as the AVX-VNNI
// kernel, VPMADDWD and VPADDD in place of VPDPBUSD, a pair of depth steps
// (two 16-bit values of a row, broadcast) per step.
TEXT ·tileAVX2(SB), NOSPLIT, $272-8
	MOVQ t+0(FP), DI
	MOVQ TA_LDA(DI), DX
	CMPQ TA_ROWS(DI), $4
	JNE  wsingle

	// Four rows, one block at a time: 8 accumulators, rows 0-3 in Y0-Y7
	// (channels 0-7, then 8-15).
	LEAQ (DX)(DX*2), R9
	MOVQ TA_W(DI), R11
	MOVQ TA_QP(DI), R10
	MOVQ TA_OUT(DI), R13
	MOVQ TA_NB(DI), R12

wquadblk:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ  TA_A(DI), SI
	MOVQ  R11, BX
	MOVQ  TA_K4(DI), CX
	TESTQ CX, CX
	JZ    wquadreq

wquadloop:
	WPAIR(0, 0)
	WPAIR(64, 4)
	ADDQ $8, SI
	ADDQ $128, BX
	DECQ CX
	JNZ  wquadloop

wquadreq:
	VMOVDQU Y0, 16(SP)
	VMOVDQU Y1, 48(SP)
	VMOVDQU Y2, 80(SP)
	VMOVDQU Y3, 112(SP)
	VMOVDQU Y4, 144(SP)
	VMOVDQU Y5, 176(SP)
	VMOVDQU Y6, 208(SP)
	VMOVDQU Y7, 240(SP)
	EPICONST
	BLOCKMASK(TA_TAIL)
	MOVQ    R13, SI
	QUADROW(0, wq0part, wq0loop, wq0skip, wq0done)
	ADDQ    TA_LDO(DI), SI
	QUADROW(1, wq1part, wq1loop, wq1skip, wq1done)
	ADDQ    TA_LDO(DI), SI
	QUADROW(2, wq2part, wq2loop, wq2skip, wq2done)
	ADDQ    TA_LDO(DI), SI
	QUADROW(3, wq3part, wq3loop, wq3skip, wq3done)
	NEXTBLOCK
	JNZ     wquadblk
	JMP     wdone

	// Fewer rows: one row and one block at a time, the two pairs of a
	// depth group into two sets of accumulators (Y4, Y5 and Y6, Y7).
wsingle:
	EPICONST
	XORQ R9, R9                        // row

wrow:
	CMPQ R9, TA_ROWS(DI)
	JGE  wdone
	ROWPTRS

wsingleblk:
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	MOVQ  R8, SI
	MOVQ  R11, BX
	MOVQ  TA_K4(DI), CX
	TESTQ CX, CX
	JZ    wsinglereq

wsingleloop:
	VPBROADCASTD (SI), Y2
	VPBROADCASTD 4(SI), Y3
	VPMADDWD     (BX), Y2, Y8
	VPMADDWD     32(BX), Y2, Y9
	VPMADDWD     64(BX), Y3, Y10
	VPMADDWD     96(BX), Y3, Y11
	VPADDD       Y8, Y4, Y4
	VPADDD       Y9, Y5, Y5
	VPADDD       Y10, Y6, Y6
	VPADDD       Y11, Y7, Y7
	ADDQ         $8, SI
	ADDQ         $128, BX
	DECQ         CX
	JNZ          wsingleloop

wsinglereq:
	VPADDD       Y6, Y4, Y4
	VPADDD       Y7, Y5, Y5
	ROWSTORE(Y4, Y5, X4, ws0part, ws0loop, ws0skip, ws0done)
	NEXTBLOCK
	JNZ          wsingleblk
	INCQ         R9
	JMP          wrow

wdone:
	VZEROUPPER
	RET

// WIDEN is WidenRows' body: the n bytes at src (CX, SI) widened by MOVX
// (VPMOVZXBW, or VPMOVSXBW for int8) to dst (DI), 32 bytes a step, then
// 16, then one at a time by MOVB (MOVBLZX or MOVBLSX).
#define WIDEN(MOVX, MOVB, L32, L16, L1, Ldone) \
L32: \
	CMPQ    CX, $32; \
	JLT     L16; \
	MOVX    (SI), Y0; \
	MOVX    16(SI), Y1; \
	VMOVDQU Y0, (DI); \
	VMOVDQU Y1, 32(DI); \
	ADDQ    $32, SI; \
	ADDQ    $64, DI; \
	SUBQ    $32, CX; \
	JMP     L32; \
L16: \
	CMPQ    CX, $16; \
	JLT     L1; \
	MOVX    (SI), Y0; \
	VMOVDQU Y0, (DI); \
	ADDQ    $16, SI; \
	ADDQ    $32, DI; \
	SUBQ    $16, CX; \
L1: \
	TESTQ   CX, CX; \
	JZ      Ldone; \
	MOVB    (SI), AX; \
	MOVW    AX, (DI); \
	INCQ    SI; \
	ADDQ    $2, DI; \
	DECQ    CX; \
	JMP     L1; \
Ldone: \
	VZEROUPPER; \
	RET

// func widenAVX2(dst *uint16, src *uint8, n int, signed bool)
TEXT ·widenAVX2(SB), NOSPLIT, $0-25
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	CMPB signed+24(FP), $0
	JNE  sx
	WIDEN(VPMOVZXBW, MOVBLZX, zx32, zx16, zx1, zxdone)

sx:
	WIDEN(VPMOVSXBW, MOVBLSX, sx32, sx16, sx1, sxdone)
