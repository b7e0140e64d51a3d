//go:build !purego

#include "textflag.h"
#include "args.h"
#include "neon_arm64.h"

// CHUNK_CONSTS loads the requantization of channels off/4 to off/4+3 of
// the Block at R8 for all the rows of a pass: V0 the constant term, V1
// the left shift, V2 the multiplier, V5 the negated right shift. 4
// instructions.
#define CHUNK_CONSTS(off) \
	FMOVQ QB_CST+off(R8), F0; \
	FMOVQ QB_LEFT+off(R8), F1; \
	FMOVQ QB_MULT+off(R8), F2; \
	FMOVQ QB_NEGR+off(R8), F5

// REQ_ROW requantizes the sums of 4 channels in Va plus the row term in Vt
// with the constants of CHUNK_CONSTS and ruy's rounding, as Chan.Ruy does
// for channels of NewChan, in 32-bit lanes: x = (sum + cst + rt) << left
// (wrapping, as in Go), SQRDMULH, SRSHL, zero point (V13) and clamp (V14,
// V15). 8 instructions.
//
// Why it is exact: Ruy computes r = (t + 2^30 + [e>0]2^(30+e)) >> (31+e)
// for t = x*M and the right shift e. With h = floor((t+2^30)/2^31), the
// multiple of 2^31 moves out of the inner floor and the floors combine:
// r = floor((h + [e>0]2^(e-1))/2^e), h divided by 2^e rounding ties up.
// SQRDMULH x, M is h (it saturates only for x = M = -2^31, and M is in
// [0, 2^31)); SRSHL by -e (V5) is (h + 2^(e-1)) >> e without overflow,
// h itself for e = 0: r for e in [0, 31].
#define REQ_ROW(a, t) \
	ADD_4S(a, a, 0); \
	ADD_4S(a, a, t); \
	SSHL_4S(a, a, 1); \
	SQRDMULH_4S(a, a, 2); \
	SRSHL_4S(a, a, 5); \
	ADD_4S(a, a, 13); \
	SMAX_4S(a, a, 14); \
	SMIN_4S(a, a, 15)

// REQ_ROWS4, REQ_ROWS2 and REQ_ROWS1 requantize chunk i (channels 4i to
// 4i+3, at byte off = 16i of the Block's arrays) of the 4, 2 or 1 rows
// of a pass: row r's sums are in V16+4r+i, its row term in V9+r.
#define REQ_ROWS4(off, i) \
	CHUNK_CONSTS(off); \
	REQ_ROW(16+(i), 9); \
	REQ_ROW(20+(i), 10); \
	REQ_ROW(24+(i), 11); \
	REQ_ROW(28+(i), 12)

#define REQ_ROWS2(off, i) \
	CHUNK_CONSTS(off); \
	REQ_ROW(16+(i), 9); \
	REQ_ROW(20+(i), 10)

#define REQ_ROWS1(off, i) \
	CHUNK_CONSTS(off); \
	REQ_ROW(16+(i), 9)

// REQ_TFLR requantizes the sums of 4 channels in Va, chunk i of a
// depthwise block, which start from the constant term, with TFLite's
// rounding, as Chan.TFL does for channels of NewChan, in 32-bit lanes,
// the block's other constants in registers: the left shift in V24+i, the
// multiplier in V28+i and the negated right shift in V6+i. 9
// instructions. Clobbers V1.
//
// Why it is exact. With x = (sum + cst) << left (wrapping, as in Go),
// t = x*M and e the right shift, TFL computes r = (t + 2^30 + [e>0]2^(30+e)
// + [e>0][t+2^30<0](-2^31)) >> (31+e). Let h = floor((t+2^30)/2^31); the
// added multiples of 2^31 move out of the inner floor and the nested floors
// combine, so r = floor((h + [e>0](2^(e-1) - [h<0]))/2^e): h divided by 2^e
// rounding ties away from zero.
//   - SQRDMULH x, M is sat((2xM + 2^31) >> 32) = h; it saturates only for
//     x = M = -2^31, and M is a Q31 multiplier in [0, 2^31). So h lies in
//     [-2^31+1, 2^31-1].
//   - NegRight is -e: its sign bit is set iff e > 0, so h AND -e is
//     negative iff h < 0 and e > 0, and CMLT makes the fixup -[e>0][h<0].
//     SQADD adds it without saturating, h > -2^31.
//   - SRSHL by -e is (h' + 2^(e-1)) >> e computed without overflow (the
//     identity for e = 0), which is r for e in [0, 31].
// The sums start from cst and SMLAL adds wrapping, so they end as
// sum + cst in int32, as TFL's. The zero point is then added wrapping and
// the clamp applied in 32 bits, as TFL does, so the result is TFL's for
// every int32 sum.
#define REQ_TFLR(a, i) \
	SSHL_4S(a, a, 24+(i)); \
	SQRDMULH_4S(a, a, 28+(i)); \
	AND_16B(1, a, 6+(i)); \
	CMLT0_4S(1, 1); \
	SQADD_4S(a, a, 1); \
	SRSHL_4S(a, a, 6+(i)); \
	ADD_4S(a, a, 13); \
	SMAX_4S(a, a, 14); \
	SMIN_4S(a, a, 15)

// NARROW packs the 16 clamped int32 results in Vb..Vb+3 into the bytes of
// Vb.
#define NARROW(b) \
	XTN_4H(b, b); \
	XTN2_8H(b, (b)+1); \
	XTN_4H((b)+2, (b)+2); \
	XTN2_8H((b)+2, (b)+3); \
	XTN_8B(b, b); \
	XTN2_16B(b, (b)+2)

// MAC_ROW adds the products of the int8 row bytes broadcast in Vx with the
// block's weights of one depth group (V0-V3: 4 channels of 4 bytes each)
// to the row's accumulators Va..Va+7: SMULL multiplies 8 byte pairs into
// exact int16 products (|-128*-128| < 2^15), SADALP adds neighbouring
// pairs into int32 lanes, so lane 2i+h of Va+2j+q holds the partial sum of
// depths 2h, 2h+1 of channel 4j+2q+i. 16 instructions, 64 MACs.
#define MAC_ROW(x, a) \
	SMULL_8H(6, 0, x); \
	SMULL2_8H(7, 0, x); \
	SADALP_4S(a, 6); \
	SADALP_4S((a)+1, 7); \
	SMULL_8H(8, 1, x); \
	SMULL2_8H(9, 1, x); \
	SADALP_4S((a)+2, 8); \
	SADALP_4S((a)+3, 9); \
	SMULL_8H(6, 2, x); \
	SMULL2_8H(7, 2, x); \
	SADALP_4S((a)+4, 6); \
	SADALP_4S((a)+5, 7); \
	SMULL_8H(8, 3, x); \
	SMULL2_8H(9, 3, x); \
	SADALP_4S((a)+6, 8); \
	SADALP_4S((a)+7, 9)

// REDUCE_ROW adds MAC_ROW's partial sums Va..Va+7 horizontally into the
// channel sums Vd..Vd+3 (4 channels each, in order).
#define REDUCE_ROW(d, a) \
	ADDP_4S(d, a, (a)+1); \
	ADDP_4S((d)+1, (a)+2, (a)+3); \
	ADDP_4S((d)+2, (a)+4, (a)+5); \
	ADDP_4S((d)+3, (a)+6, (a)+7)

// DOT4 adds depth group g (0-3) of the 4 rows in V4-V7 times the block's
// weights Vw..Vw+3 to the rows' accumulators V16-V31 (row r, channels
// 4i..4i+3 in V16+4r+i). 16 instructions, 256 MACs.
#define DOT4(w, g) \
	SDOT_4S(16, w, 4, g); \
	SDOT_4S(17, (w)+1, 4, g); \
	SDOT_4S(18, (w)+2, 4, g); \
	SDOT_4S(19, (w)+3, 4, g); \
	SDOT_4S(20, w, 5, g); \
	SDOT_4S(21, (w)+1, 5, g); \
	SDOT_4S(22, (w)+2, 5, g); \
	SDOT_4S(23, (w)+3, 5, g); \
	SDOT_4S(24, w, 6, g); \
	SDOT_4S(25, (w)+1, 6, g); \
	SDOT_4S(26, (w)+2, 6, g); \
	SDOT_4S(27, (w)+3, 6, g); \
	SDOT_4S(28, w, 7, g); \
	SDOT_4S(29, (w)+1, 7, g); \
	SDOT_4S(30, (w)+2, 7, g); \
	SDOT_4S(31, (w)+3, 7, g)

// DOT1 adds depth group g of the row in V4 times the weights Vw..Vw+3 to
// the accumulators Va..Va+3.
#define DOT1(a, w, g) \
	SDOT_4S(a, w, 4, g); \
	SDOT_4S((a)+1, (w)+1, 4, g); \
	SDOT_4S((a)+2, (w)+2, 4, g); \
	SDOT_4S((a)+3, (w)+3, 4, g)

// PAIR_ROW adds 16 depth steps of the int8 row in Vx times those of the
// 4 channels in V0-V3 to the row's accumulators Va..Va+3 (one a channel):
// SMULL multiplies the low 8 byte pairs into int16, SMLAL2 adds the
// products of the high 8 to them, and SADALP adds neighbouring int16 lanes
// into the 4 int32 lanes. A 16-bit lane sums two products, exact while no
// weight is -128 (see PairSafe). 12 instructions, 64 MACs. Clobbers V8-V11.
// PAIR_ROW0 is PAIR_ROW for the first 16 depth steps: SADDLP sets the
// accumulators instead of adding to them.
#define PAIR_ROW0(x, a) \
	SMULL_8H(8, x, 0); \
	SMULL_8H(9, x, 1); \
	SMULL_8H(10, x, 2); \
	SMULL_8H(11, x, 3); \
	SMLAL2_8H(8, x, 0); \
	SMLAL2_8H(9, x, 1); \
	SMLAL2_8H(10, x, 2); \
	SMLAL2_8H(11, x, 3); \
	SADDLP_4S(a, 8); \
	SADDLP_4S((a)+1, 9); \
	SADDLP_4S((a)+2, 10); \
	SADDLP_4S((a)+3, 11)

#define PAIR_ROW(x, a) \
	SMULL_8H(8, x, 0); \
	SMULL_8H(9, x, 1); \
	SMULL_8H(10, x, 2); \
	SMULL_8H(11, x, 3); \
	SMLAL2_8H(8, x, 0); \
	SMLAL2_8H(9, x, 1); \
	SMLAL2_8H(10, x, 2); \
	SMLAL2_8H(11, x, 3); \
	SADALP_4S(a, 8); \
	SADALP_4S((a)+1, 9); \
	SADALP_4S((a)+2, 10); \
	SADALP_4S((a)+3, 11)

// PAIR_LOAD loads the next 16 depth steps of the 4 rows at R13-R16 into
// V4-V7 and of the 4 channels at R17 into V0-V3.
#define PAIR_LOAD \
	VLD1.P 16(R13), [V4.B16]; \
	VLD1.P 16(R14), [V5.B16]; \
	VLD1.P 16(R15), [V6.B16]; \
	VLD1.P 16(R16), [V7.B16]; \
	VLD1.P 64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]

// PAIR_SUM adds the 4 lanes of each of PAIR_ROW's accumulators Va..Va+3
// into channel sums, 4 channels in order, and stores them at off(R25).
// Clobbers V8, V9.
#define PAIR_SUM(a, off) \
	ADDP_4S(8, a, (a)+1); \
	ADDP_4S(9, (a)+2, (a)+3); \
	ADDP_4S(8, 8, 9); \
	FMOVQ F8, off(R25)

// ZERO_ACC clears the accumulators V16-V31.
#define ZERO_ACC \
	VEOR V16.B16, V16.B16, V16.B16; \
	VEOR V17.B16, V17.B16, V17.B16; \
	VEOR V18.B16, V18.B16, V18.B16; \
	VEOR V19.B16, V19.B16, V19.B16; \
	VEOR V20.B16, V20.B16, V20.B16; \
	VEOR V21.B16, V21.B16, V21.B16; \
	VEOR V22.B16, V22.B16, V22.B16; \
	VEOR V23.B16, V23.B16, V23.B16; \
	VEOR V24.B16, V24.B16, V24.B16; \
	VEOR V25.B16, V25.B16, V25.B16; \
	VEOR V26.B16, V26.B16, V26.B16; \
	VEOR V27.B16, V27.B16, V27.B16; \
	VEOR V28.B16, V28.B16, V28.B16; \
	VEOR V29.B16, V29.B16, V29.B16; \
	VEOR V30.B16, V30.B16, V30.B16; \
	VEOR V31.B16, V31.B16, V31.B16

// STORE_MASKED stores the bytes of V16 to (addr) whose bits are set in the
// mask R22: all 16 at once, or byte by byte. Clobbers R13-R16.
#define STORE_MASKED(addr, Lpart, Lbyte, Lskip, Ldone) \
	CMP  $0xffff, R22; \
	BNE  Lpart; \
	VST1 [V16.B16], (addr); \
	B    Ldone; \
Lpart: \
	VMOV V16.D[0], R13; \
	VMOV V16.D[1], R14; \
	MOVD R22, R15; \
	MOVD addr, R16; \
Lbyte: \
	TBZ  $0, R15, Lskip; \
	MOVB R13, (R16); \
Lskip: \
	ADD  $1, R16; \
	LSR  $8, R13; \
	ORR  R14<<56, R13; \
	LSR  $8, R14; \
	LSR  $1, R15; \
	CBNZ R15, Lbyte; \
Ldone:

// func tileNEON(t *TileArgs, mode uint8)
//
// The tile is done in passes of rows (mode 0, plain NEON: 2 rows; 1, SDOT:
// 4 rows; 1 row for what is left; 2, pairs: up to 4 rows), each pass over
// all the blocks. Inner loops, one depth group of 4 bytes (all operands in
// registers), or for pairs 16 depth steps of 4 channels:
//
//	plain, 2 rows: 1 weight load, 2 row loads, 32 SMULL/SADALP, 2 loop:
//	               37 instructions, 128 MACs (3.5 MACs per instruction)
//	plain, 1 row:  20 instructions, 64 MACs (3.2)
//	SDOT, 4 rows, 4 groups unrolled: 4 row loads, 4 weight loads,
//	               64 SDOT, 3 loop: 75 instructions, 1024 MACs (13.7)
//	SDOT, 1 row, 4 groups unrolled: 24 instructions, 256 MACs (10.7)
//	pairs, 4 rows x 4 channels: 4 row loads, 1 weight load, 16 SMULL,
//	               16 SMLAL2, 16 SADALP, 2 loop: 55 instructions, 256
//	               MACs (4.65); 2 or 3 rows repeat the last one.
//	pairs, 1 row x 4 channels: 16 instructions, 64 MACs (4.0)
//
// Pairs start each quarter's accumulators with SADDLP in place of SADALP
// (no clearing), add them up (12 ADDP per 4 rows) and keep the sums in
// the frame, from which the block's 16 channels are loaded for the
// epilogue in 4 instructions.
//
// The epilogue of a block, per 4 channels: 4 instructions to load the
// requantization, 8 per row to apply it; per row 6 to narrow to bytes
// and 4 to store 16 of them (more for a partial block).
//
// Registers: R0 t, R1 the pass's first row, R2 lda, R3 rows left, R4 k4,
// R5 the block's weights, R6 wstride, R7 blocks left, R8 the block's
// Block, R9 the pass's output, R10 ldo, R11 rows in the pass, R12 the
// block's output, R13-R16 row pointers, R17 weight pointer, R19 depth
// groups left, R20 the pass's row terms, R21 mode, R22 store mask, R25
// the pairs' sums in the frame, R26 quarters left.
// V0-V11 operands and temporaries (in the epilogue V9-V12 the row terms),
// V13-V15 zero point and clamp range, V16-V31 accumulators.
TEXT ·tileNEON(SB), NOSPLIT, $256-9
	MOVD  t+0(FP), R0
	MOVBU mode+8(FP), R21
	MOVD  TA_ZP(R0), R14
	VDUP  R14, V13.S4
	MOVD  TA_LO(R0), R14
	VDUP  R14, V14.S4
	MOVD  TA_HI(R0), R14
	VDUP  R14, V15.S4
	MOVD  TA_A(R0), R1
	MOVD  TA_LDA(R0), R2
	MOVD  TA_ROWS(R0), R3
	MOVD  TA_K4(R0), R4
	MOVD  TA_WSTRIDE(R0), R6
	MOVD  TA_OUT(R0), R9
	MOVD  TA_LDO(R0), R10
	MOVD  TA_ROWTERM(R0), R20

pass:
	MOVD $1, R11
	CBZ  R21, passplain
	CMP  $4, R3
	BLT  passfew
	MOVD $4, R11
	B    passset

passfew:
	CMP  $2, R21 // pairs: the rows left in one pass
	BNE  passset
	MOVD R3, R11
	B    passset

passplain:
	CMP  $2, R3
	BLT  passset
	MOVD $2, R11

passset:
	MOVD TA_W(R0), R5
	MOVD TA_QP(R0), R8
	MOVD TA_NB(R0), R7
	MOVD R9, R12

block:
	CMP  $2, R21
	BEQ  pair
	ZERO_ACC
	MOVD R1, R13
	ADD  R2, R13, R14
	ADD  R2, R14, R15
	ADD  R2, R15, R16
	MOVD R5, R17
	MOVD R4, R19
	CBZ  R21, plain
	CMP  $4, R11
	BEQ  dot4
	B    dot1

plain:
	CMP $2, R11
	BEQ plain2
	CBZ R19, plain1done

plain1:
	VLD1.P  64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	VLD1R.P 4(R13), [V4.S4]
	MAC_ROW(4, 16)
	SUBS    $1, R19
	BNE     plain1

plain1done:
	REDUCE_ROW(16, 16)
	B epilogue

plain2:
	CBZ R19, plain2done

plain2loop:
	VLD1.P  64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	VLD1R.P 4(R13), [V4.S4]
	VLD1R.P 4(R14), [V5.S4]
	MAC_ROW(4, 16)
	MAC_ROW(5, 24)
	SUBS    $1, R19
	BNE     plain2loop

plain2done:
	REDUCE_ROW(16, 16)
	REDUCE_ROW(20, 24)
	B epilogue

dot4:
	CMP    $4, R19
	BLT    dot4rest
	VLD1.P 16(R13), [V4.B16]
	VLD1.P 16(R14), [V5.B16]
	VLD1.P 16(R15), [V6.B16]
	VLD1.P 16(R16), [V7.B16]
	VLD1.P 64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	DOT4(0, 0)
	VLD1.P 64(R17), [V8.B16, V9.B16, V10.B16, V11.B16]
	DOT4(8, 1)
	VLD1.P 64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	DOT4(0, 2)
	VLD1.P 64(R17), [V8.B16, V9.B16, V10.B16, V11.B16]
	DOT4(8, 3)
	SUB    $4, R19
	B      dot4

dot4rest:
	CBZ     R19, epilogue
	VLD1R.P 4(R13), [V4.S4]
	VLD1R.P 4(R14), [V5.S4]
	VLD1R.P 4(R15), [V6.S4]
	VLD1R.P 4(R16), [V7.S4]
	VLD1.P  64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	DOT4(0, 0)
	SUB     $1, R19
	B       dot4rest

	// One row: even depth groups into V16-V19, odd ones into V20-V23.
dot1:
	CMP    $4, R19
	BLT    dot1rest
	VLD1.P 16(R13), [V4.B16]
	VLD1.P 64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	DOT1(16, 0, 0)
	VLD1.P 64(R17), [V8.B16, V9.B16, V10.B16, V11.B16]
	DOT1(20, 8, 1)
	VLD1.P 64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	DOT1(16, 0, 2)
	VLD1.P 64(R17), [V8.B16, V9.B16, V10.B16, V11.B16]
	DOT1(20, 8, 3)
	SUB    $4, R19
	B      dot1

dot1rest:
	CBZ     R19, dot1done
	VLD1R.P 4(R13), [V4.S4]
	VLD1.P  64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	DOT1(16, 0, 0)
	SUB     $1, R19
	B       dot1rest

dot1done:
	ADD_4S(16, 16, 20)
	ADD_4S(17, 17, 21)
	ADD_4S(18, 18, 22)
	ADD_4S(19, 19, 23)
	B epilogue

	// Pairs: the rows (the last repeated for 2 or 3) times each
	// quarter of the block's channels in turn, the quarter's sums of row
	// r stored at 64r+16q(R25).
pair:
	MOVD  R1, R13
	MOVD  R5, R17
	MOVD  $sums-256(SP), R25
	MOVD  $4, R26
	CMP   $1, R11
	BEQ   pair1q
	ADD   R2, R13, R14
	ADD   R2, R14, R15
	CMP   $3, R11
	CSEL  LT, R14, R15, R15
	ADD   R2, R15, R16
	CMP   $4, R11
	CSEL  LT, R15, R16, R16

pairq:
	LSR    $2, R4, R19
	PAIR_LOAD
	PAIR_ROW0(4, 16)
	PAIR_ROW0(5, 20)
	PAIR_ROW0(6, 24)
	PAIR_ROW0(7, 28)
	SUBS   $1, R19
	BEQ    pairsum

pairk:
	PAIR_LOAD
	PAIR_ROW(4, 16)
	PAIR_ROW(5, 20)
	PAIR_ROW(6, 24)
	PAIR_ROW(7, 28)
	SUBS   $1, R19
	BNE    pairk

pairsum:
	PAIR_SUM(16, 0)
	PAIR_SUM(20, 64)
	PAIR_SUM(24, 128)
	PAIR_SUM(28, 192)
	ADD    $16, R25
	SUB    R4<<2, R13
	SUB    R4<<2, R14
	SUB    R4<<2, R15
	SUB    R4<<2, R16
	SUBS   $1, R26
	BNE    pairq
	SUB    $64, R25
	VLD1.P 64(R25), [V16.B16, V17.B16, V18.B16, V19.B16]
	VLD1.P 64(R25), [V20.B16, V21.B16, V22.B16, V23.B16]
	VLD1.P 64(R25), [V24.B16, V25.B16, V26.B16, V27.B16]
	VLD1   (R25), [V28.B16, V29.B16, V30.B16, V31.B16]
	B      epilogue

	// One row: each quarter's sums at 16q(R25).
pair1q:
	LSR    $2, R4, R19
	VLD1.P 16(R13), [V4.B16]
	VLD1.P 64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	PAIR_ROW0(4, 16)
	SUBS   $1, R19
	BEQ    pair1sum

pair1k:
	VLD1.P 16(R13), [V4.B16]
	VLD1.P 64(R17), [V0.B16, V1.B16, V2.B16, V3.B16]
	PAIR_ROW(4, 16)
	SUBS   $1, R19
	BNE    pair1k

pair1sum:
	PAIR_SUM(16, 0)
	ADD    $16, R25
	SUB    R4<<2, R13
	SUBS   $1, R26
	BNE    pair1q
	SUB    $64, R25
	VLD1   (R25), [V16.B16, V17.B16, V18.B16, V19.B16]

	// Row r of the pass has its channel sums in V16+4r..V19+4r and its
	// row term in V9+r. Requantized chunk by chunk, for all the rows at
	// once, and narrowed into V16+4r, the rows are stored from V16, the
	// next moving down.
epilogue:
	VLD1R (R20), [V9.S4]
	CMP   $1, R11
	BEQ   req1
	ADD   $4, R20, R14
	VLD1R (R14), [V10.S4]
	CMP   $2, R11
	BEQ   req2
	ADD   $8, R20, R14
	VLD1R (R14), [V11.S4]
	ADD   $12, R20, R14
	VLD1R (R14), [V12.S4]
	REQ_ROWS4(0, 0)
	REQ_ROWS4(16, 1)
	REQ_ROWS4(32, 2)
	REQ_ROWS4(48, 3)
	NARROW(28)
	NARROW(24)
	B     req2narrow

req2:
	REQ_ROWS2(0, 0)
	REQ_ROWS2(16, 1)
	REQ_ROWS2(32, 2)
	REQ_ROWS2(48, 3)

req2narrow:
	NARROW(20)
	B req1narrow

req1:
	REQ_ROWS1(0, 0)
	REQ_ROWS1(16, 1)
	REQ_ROWS1(32, 2)
	REQ_ROWS1(48, 3)

req1narrow:
	NARROW(16)
	MOVD $0xffff, R22
	CMP  $1, R7
	BNE  maskset
	MOVD TA_TAIL(R0), R22

maskset:
	MOVD R11, R23
	MOVD R12, R24

erow:
	STORE_MASKED(R24, partial, pbyte, pskip, stored)
	VMOV V20.B16, V16.B16
	VMOV V24.B16, V20.B16
	VMOV V28.B16, V24.B16
	ADD  R10, R24
	SUBS $1, R23
	BNE  erow

	ADD  R6, R5
	ADD  $QB_SIZE, R8
	ADD  $16, R12
	SUBS $1, R7
	BNE  block

	MUL  R11, R2, R14
	ADD  R14, R1
	MUL  R11, R10, R14
	ADD  R14, R9
	ADD  R11<<2, R20
	SUBS R11, R3
	BNE  pass
	RET

// DW_MAC adds the products of the 16 inputs widened to int16 in V0-V1
// with the tap's weights at R25 to the sums V16-V19, and moves R25 to the
// next tap's weights (R26: wstride-32 after the first 32 bytes): LD2
// picks the weights' low halves out of their int32 lanes. Clobbers V2-V5.
#define DW_MAC \
	VLD2.P 32(R25), [V2.H8, V3.H8]; \
	VLD2.P (R25)(R26), [V4.H8, V5.H8]; \
	SMLAL_4S(16, 0, 2); \
	SMLAL2_4S(17, 0, 2); \
	SMLAL_4S(18, 1, 4); \
	SMLAL2_4S(19, 1, 4)

// DW_TAPU and DW_TAPS load the tap's 16 inputs at R13, moving R13 to the
// next tap, widen them from uint8 (U) or int8 (S) and add their products
// (DW_MAC): 9 instructions for 16 MACs.
#define DW_TAPU \
	VLD1.P (R13)(R4), [V0.B16]; \
	UXTL2_8H(1, 0); \
	UXTL_8H(0, 0); \
	DW_MAC

#define DW_TAPS \
	VLD1.P (R13)(R4), [V0.B16]; \
	SXTL2_8H(1, 0); \
	SXTL_8H(0, 0); \
	DW_MAC

// DW_ROW3U adds the 3 taps of the next filter row (at R24) on UINT8
// inputs: 29 instructions.
#define DW_ROW3U \
	MOVD.P 8(R24), R13; \
	ADD    R7, R13; \
	DW_TAPU; \
	DW_TAPU; \
	DW_TAPU

// func rowNEON(t *RowArgs)
//
// For each block of 16 channels, whose requantization stays in registers,
// and each pixel, each tap: 16 input bytes
// widened to int16 (UXTL or SXTL), the weights' low halves picked out of
// their int32 lanes by two LD2, 4 SMLAL/SMLAL2 into int32 sums, all
// addressing in post-increments: 9 instructions for 16 MACs, 11 with the
// loop, which filter rows of 3 taps unroll (a partial block gathers its
// bytes one by one). The sums start from the constant term; the epilogue
// takes 9 instructions per 4 channels.
//
// Registers: R0 t, R1 the filter row pointers, R4 tapStep, R5 pixStep,
// R6 pixels left, R7 the pixel's and the block's offset in the filter
// rows, R8 the block's Block, R9 the pixel's output, R10 blocks left,
// R11 the block's first channel, R12 the block's weights of tap 0, R13
// the tap's input, R17 wstride, R19 signed, R21 and R23 filter rows and
// taps left, R22 the block's load and store mask, R24 the next filter
// row pointer, R25 the tap's weights, R26 wstride-32. V0-V5 operands and
// temporaries, V6-V9 the negated right shifts, V13-V15 zero point and
// clamp range, V16-V19 sums, V20-V23 constant terms, V24-V27 left
// shifts, V28-V31 multipliers.
TEXT ·rowNEON(SB), NOSPLIT, $0-8
	MOVD t+0(FP), R0
	MOVD DA_ZP(R0), R14
	VDUP R14, V13.S4
	MOVD DA_LO(R0), R14
	VDUP R14, V14.S4
	MOVD DA_HI(R0), R14
	VDUP R14, V15.S4
	MOVD DA_ROWS(R0), R1
	MOVD DA_TAPSTEP(R0), R4
	MOVD DA_PIXSTEP(R0), R5
	MOVD DA_WSTRIDE(R0), R17
	SUB  $32, R17, R26
	MOVD DA_SIGNED(R0), R19
	MOVD DA_NB(R0), R10
	MOVD DA_QP(R0), R8
	MOVD ZR, R11
	MOVD DA_W(R0), R12
	MOVD DA_NPIX(R0), R6
	CBZ  R6, dwdone

dwblk:
	MOVD   $0xffff, R22
	CMP    $1, R10
	BNE    dwmask
	MOVD   DA_TAIL(R0), R22

dwmask:
	MOVD   R8, R14 // Cst, Left and Mult follow each other (QB_CST = 0)
	VLD1.P 64(R14), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R14), [V24.S4, V25.S4, V26.S4, V27.S4]
	VLD1   (R14), [V28.S4, V29.S4, V30.S4, V31.S4]
	ADD    $(QB_NEGR-QB_CST), R8, R14
	VLD1   (R14), [V6.S4, V7.S4, V8.S4, V9.S4]
	MOVD   DA_NPIX(R0), R6
	MOVD   R11, R7
	MOVD   DA_OUT(R0), R9
	ADD    R11, R9
	CMP    $0xffff, R22
	BNE    dwpix
	CBNZ   R19, dwpix
	MOVD   DA_KH(R0), R14
	CMP    $3, R14
	BNE    dwpix
	MOVD   DA_KW(R0), R14
	CMP    $3, R14
	BNE    dwpix
	MOVD   DA_OUTC(R0), R2

	// The common case, a full block of 3x3 taps on UINT8 inputs, in a
	// loop of its own: 3 instructions per filter row besides the taps,
	// and a store of all 16 bytes.
dwpix3:
	VMOV   V20.B16, V16.B16
	VMOV   V21.B16, V17.B16
	VMOV   V22.B16, V18.B16
	VMOV   V23.B16, V19.B16
	MOVD   R1, R24
	MOVD   R12, R25
	DW_ROW3U
	DW_ROW3U
	DW_ROW3U
	REQ_TFLR(16, 0)
	REQ_TFLR(17, 1)
	REQ_TFLR(18, 2)
	REQ_TFLR(19, 3)
	NARROW(16)
	VST1   [V16.B16], (R9)
	ADD    R5, R7
	ADD    R2, R9
	SUBS   $1, R6
	BNE    dwpix3
	B      dwblkdone

dwpix:
	VMOV V20.B16, V16.B16
	VMOV V21.B16, V17.B16
	VMOV V22.B16, V18.B16
	VMOV V23.B16, V19.B16
	MOVD R1, R24
	MOVD R12, R25
	MOVD DA_KH(R0), R21

dwky:
	MOVD.P 8(R24), R13
	ADD    R7, R13
	MOVD   DA_KW(R0), R23
	CMP    $0xffff, R22
	BNE    dwkxany
	CBNZ   R19, dwkxs

	CMP    $3, R23
	BEQ    dwk3u

dwkxu:
	DW_TAPU
	SUBS $1, R23
	BNE  dwkxu
	B    dwkydone

dwk3u:
	DW_TAPU
	DW_TAPU
	DW_TAPU
	B dwkydone

dwkxs:
	CMP $3, R23
	BEQ dwk3s

dwkxs1:
	DW_TAPS
	SUBS $1, R23
	BNE  dwkxs1
	B    dwkydone

dwk3s:
	DW_TAPS
	DW_TAPS
	DW_TAPS
	B dwkydone

	// A partial block: its input bytes gathered one by one.
dwkxany:
	B dwgather

dwloaded:
	CBNZ R19, dwanys
	UXTL2_8H(1, 0)
	UXTL_8H(0, 0)
	B    dwanytap

dwanys:
	SXTL2_8H(1, 0)
	SXTL_8H(0, 0)

dwanytap:
	DW_MAC
	ADD  R4, R13
	SUBS $1, R23
	BNE  dwkxany

dwkydone:
	SUBS $1, R21
	BNE  dwky

	REQ_TFLR(16, 0)
	REQ_TFLR(17, 1)
	REQ_TFLR(18, 2)
	REQ_TFLR(19, 3)
	NARROW(16)
	STORE_MASKED(R9, dwpartial, dwpbyte, dwpskip, dwstored)
	ADD  R5, R7
	MOVD DA_OUTC(R0), R14
	ADD  R14, R9
	SUBS $1, R6
	BNE  dwpix

dwblkdone:
	ADD  $16, R11
	ADD  $64, R12
	ADD  $QB_SIZE, R8
	SUBS $1, R10
	BNE  dwblk

dwdone:
	RET

	// Load byte j of the tap's input (R13) into byte j of V0 where bit j
	// of the mask is set, reading nothing else.
dwgather:
	MOVD ZR, R2
	MOVD ZR, R3
	MOVD ZR, R14
	MOVD R22, R15
	MOVD R13, R16

dwgbyte:
	TBZ   $0, R15, dwgskip
	MOVBU (R16), R20
	LSL   R14, R20, R20
	CMP   $64, R14
	BGE   dwghigh
	ORR   R20, R2
	B     dwgskip

dwghigh:
	ORR R20, R3

dwgskip:
	ADD  $1, R16
	ADD  $8, R14
	LSR  $1, R15
	CBNZ R15, dwgbyte
	VMOV R2, V0.D[0]
	VMOV R3, V0.D[1]
	B    dwloaded
