//go:build !purego

#include "textflag.h"
#include "args.h"

// REQ_RUY requantizes the 16 int32 sums in acc (plus the row term rt) with
// the Block at P(R10) and stores them as bytes to dst under mask K2:
// x = (acc+cst+rt) << left; r = (x*mult + add) >> shift, split over the even
// and odd lanes of VPMULDQ; then zero point (Z22) and clamp (Z23, Z24).
// K1 selects the odd lanes. Clobbers Z14-Z16 and acc.
#define REQ_RUY(acc, rt, P, dst) \
	VPADDD P+QB_CST(R10), acc, acc; \
	VPADDD rt, acc, acc; \
	VPSLLVD P+QB_LEFT(R10), acc, acc; \
	VPMULDQ P+QB_MULT(R10), acc, Z14; \
	VPADDQ P+QB_ADDE(R10), Z14, Z14; \
	VPSRAVQ P+QB_SHE(R10), Z14, Z14; \
	VPSRLQ $32, acc, Z15; \
	VPSRLQ $32, P+QB_MULT(R10), Z16; \
	VPMULDQ Z16, Z15, Z15; \
	VPADDQ P+QB_ADDO(R10), Z15, Z15; \
	VPSRAVQ P+QB_SHO(R10), Z15, Z15; \
	VPSLLQ $32, Z15, Z15; \
	VMOVDQA32 Z15, K1, Z14; \
	VPADDD Z22, Z14, Z14; \
	VPMAXSD Z23, Z14, Z14; \
	VPMINSD Z24, Z14, Z14; \
	VPMOVDB Z14, X14; \
	VMOVDQU8 X14, K2, dst

// FULLMASK sets K2 to all 16 lanes.
#define FULLMASK \
	MOVQ $0xffff, CX; \
	KMOVW CX, K2

// LASTMASK sets K2 to the tail mask when R12 == n (the block is the last),
// else to all 16 lanes.
#define LASTMASK(n) \
	MOVQ $0xffff, CX; \
	CMPQ R12, $n; \
	CMOVQEQ TA_TAIL(DI), CX; \
	KMOVW CX, K2

// The steps the VNNI and AVX-512BW tile kernels share: all but their
// multiply-add loops.

// TILE_ENTRY reads the tile's arguments (DI), the zero point and clamp (Z22-Z24), the
// odd-lane mask (K1) and the weight blocks' stride (DX).
#define TILE_ENTRY \
	MOVQ t+0(FP), DI; \
	VPBROADCASTD TA_ZP(DI), Z22; \
	VPBROADCASTD TA_LO(DI), Z23; \
	VPBROADCASTD TA_HI(DI), Z24; \
	MOVQ $0xaaaa, AX; \
	KMOVW AX, K1; \
	MOVQ TA_WSTRIDE(DI), DX

// ROWS4_ENTRY sets up four rows: their row terms (Z25-Z28), their stride (R8,
// R9), the weights, requantization and output (R11, R10, R13, R14) and the
// blocks left (R12).
#define ROWS4_ENTRY \
	MOVQ TA_ROWTERM(DI), AX; \
	VPBROADCASTD 0(AX), Z25; \
	VPBROADCASTD 4(AX), Z26; \
	VPBROADCASTD 8(AX), Z27; \
	VPBROADCASTD 12(AX), Z28; \
	MOVQ TA_LDA(DI), R8; \
	LEAQ (R8)(R8*2), R9; \
	MOVQ TA_W(DI), R11; \
	MOVQ TA_QP(DI), R10; \
	MOVQ TA_OUT(DI), R13; \
	MOVQ TA_LDO(DI), R14; \
	MOVQ TA_NB(DI), R12

// PAIR4_STORE requantizes and stores two blocks of four rows (Z0-Z7) and moves on
// to the next two.
#define PAIR4_STORE \
	LEAQ (R13)(R14*2), BX; \
	FULLMASK; \
	REQ_RUY(Z0, Z25, 0, (R13)); \
	REQ_RUY(Z1, Z26, 0, (R13)(R14*1)); \
	REQ_RUY(Z2, Z27, 0, (BX)); \
	REQ_RUY(Z3, Z28, 0, (BX)(R14*1)); \
	LASTMASK(2); \
	REQ_RUY(Z4, Z25, QB_SIZE, 16(R13)); \
	REQ_RUY(Z5, Z26, QB_SIZE, 16(R13)(R14*1)); \
	REQ_RUY(Z6, Z27, QB_SIZE, 16(BX)); \
	REQ_RUY(Z7, Z28, QB_SIZE, 16(BX)(R14*1)); \
	LEAQ (R11)(DX*2), R11; \
	ADDQ $(2*QB_SIZE), R10; \
	ADDQ $32, R13; \
	SUBQ $2, R12

// SINGLE4_STORE requantizes and stores the last block of four rows (Z0-Z3) under
// the tail mask.
#define SINGLE4_STORE \
	LEAQ (R13)(R14*2), BX; \
	MOVQ TA_TAIL(DI), CX; \
	KMOVW CX, K2; \
	REQ_RUY(Z0, Z25, 0, (R13)); \
	REQ_RUY(Z1, Z26, 0, (R13)(R14*1)); \
	REQ_RUY(Z2, Z27, 0, (BX)); \
	REQ_RUY(Z3, Z28, 0, (BX)(R14*1))

// ROWS1_ENTRY sets up the rows taken one at a time: their count (R9), the first
// row, its row term and its output.
#define ROWS1_ENTRY \
	MOVQ TA_ROWS(DI), R9; \
	MOVQ TA_A(DI), R8; \
	MOVQ TA_ROWTERM(DI), AX; \
	MOVQ TA_OUT(DI), R14

// ROW1_ENTRY sets up one row: its row term (Z25), the weights, requantization and
// output, and the blocks left.
#define ROW1_ENTRY \
	VPBROADCASTD (AX), Z25; \
	MOVQ TA_W(DI), R11; \
	MOVQ TA_QP(DI), R10; \
	MOVQ R14, R13; \
	MOVQ TA_NB(DI), R12

// PAIR1_STORE requantizes and stores two blocks of one row (Z0, Z4) and moves on to
// the next two.
#define PAIR1_STORE \
	FULLMASK; \
	REQ_RUY(Z0, Z25, 0, (R13)); \
	LASTMASK(2); \
	REQ_RUY(Z4, Z25, QB_SIZE, 16(R13)); \
	LEAQ (R11)(DX*2), R11; \
	ADDQ $(2*QB_SIZE), R10; \
	ADDQ $32, R13; \
	SUBQ $2, R12

// SINGLE1_STORE requantizes and stores the last block of one row (Z0) under the
// tail mask.
#define SINGLE1_STORE \
	MOVQ TA_TAIL(DI), CX; \
	KMOVW CX, K2; \
	REQ_RUY(Z0, Z25, 0, (R13))

// ROW1_NEXT moves to the next row, counting down R9.
#define ROW1_NEXT \
	ADDQ TA_LDA(DI), R8; \
	ADDQ $4, AX; \
	ADDQ TA_LDO(DI), R14; \
	DECQ R9

// ZERO4 clears four accumulators.
#define ZERO4(a, b, c, d) \
	VPXORD a, a, a; \
	VPXORD b, b, b; \
	VPXORD c, c, c; \
	VPXORD d, d, d

// DEPTH_ENTRY points SI at the rows and BX at the blocks' weights, and
// sets CX to the depth groups, testing it for zero.
#define DEPTH_ENTRY \
	MOVQ TA_A(DI), SI; \
	MOVQ R11, BX; \
	MOVQ TA_K4(DI), CX; \
	TESTQ CX, CX

// ROWS4 is a tile kernel's four rows: pairs of blocks with PAIR_STEP, then
// a last single block with SINGLE_STEP, each step one depth group of 4
// bytes (SI the rows, BX the weights) into the accumulators Z0-Z7 (Z0-Z3
// for one block). It jumps to done when the blocks are over.
#define ROWS4(PAIR_STEP, SINGLE_STEP) \
	ROWS4_ENTRY; \
pair4: \
	CMPQ R12, $2; \
	JL   single4; \
	ZERO4(Z0, Z1, Z2, Z3); \
	ZERO4(Z4, Z5, Z6, Z7); \
	DEPTH_ENTRY; \
	JZ   pair4done; \
pair4loop: \
	PAIR_STEP; \
	ADDQ $4, SI; \
	ADDQ $64, BX; \
	DECQ CX; \
	JNZ  pair4loop; \
pair4done: \
	PAIR4_STORE; \
	JMP  pair4; \
single4: \
	CMPQ R12, $1; \
	JL   done; \
	ZERO4(Z0, Z1, Z2, Z3); \
	DEPTH_ENTRY; \
	JZ   single4done; \
single4loop: \
	SINGLE_STEP; \
	ADDQ $4, SI; \
	ADDQ $64, BX; \
	DECQ CX; \
	JNZ  single4loop; \
single4done: \
	SINGLE4_STORE; \
	JMP  done

// The VNNI tile kernels multiply with VPDPBUSD, unsigned bytes times signed
// bytes: tileVNNI uint8 rows by int8 weights, tileVNNIUW (UnsignedW) int8
// rows, read as they come, by uint8 weights. Their steps take the
// multiply-add as a parameter: DOT(w, x, acc) for weights w and a row's
// broadcast bytes x in registers, DOTM for weights in memory (VPDPBUSD
// reads only its signed operand from memory, so DOTM_UW loads the
// unsigned weights into Z12 first).
#define DOT_SW(w, x, acc) VPDPBUSD w, x, acc
#define DOT_UW(w, x, acc) VPDPBUSD x, w, acc
#define DOTM_SW(w, x, acc) VPDPBUSD w, x, acc
#define DOTM_UW(w, x, acc) VMOVDQU32 w, Z12; VPDPBUSD x, Z12, acc

// VNNI_PAIR4 and VNNI_SINGLE4 are ROWS4's steps with VPDPBUSD: each row's
// 4 bytes broadcast, times one or two blocks of weights.
#define VNNI_PAIR4(DOT) \
	VMOVDQU32    (BX), Z8; \
	VMOVDQU32    (BX)(DX*1), Z9; \
	VPBROADCASTD (SI), Z10; \
	VPBROADCASTD (SI)(R8*1), Z11; \
	VPBROADCASTD (SI)(R8*2), Z12; \
	VPBROADCASTD (SI)(R9*1), Z13; \
	DOT(Z8, Z10, Z0); \
	DOT(Z9, Z10, Z4); \
	DOT(Z8, Z11, Z1); \
	DOT(Z9, Z11, Z5); \
	DOT(Z8, Z12, Z2); \
	DOT(Z9, Z12, Z6); \
	DOT(Z8, Z13, Z3); \
	DOT(Z9, Z13, Z7)

#define VNNI_SINGLE4(DOT) \
	VMOVDQU32    (BX), Z8; \
	VPBROADCASTD (SI), Z10; \
	VPBROADCASTD (SI)(R8*1), Z11; \
	VPBROADCASTD (SI)(R8*2), Z12; \
	VPBROADCASTD (SI)(R9*1), Z13; \
	DOT(Z8, Z10, Z0); \
	DOT(Z8, Z11, Z1); \
	DOT(Z8, Z12, Z2); \
	DOT(Z8, Z13, Z3)

#define VNNI_PAIR4_SW VNNI_PAIR4(DOT_SW)
#define VNNI_SINGLE4_SW VNNI_SINGLE4(DOT_SW)
#define VNNI_PAIR4_UW VNNI_PAIR4(DOT_UW)
#define VNNI_SINGLE4_UW VNNI_SINGLE4(DOT_UW)

// VNNI_ROWS1 is the VNNI tile kernels' rows taken one at a time (fewer
// than four): two blocks at a time, depth unrolled by two into two sets of
// accumulators (Z0, Z4 and Z1, Z5), the weights read by DOTM.
#define VNNI_ROWS1(DOTM) \
	ROWS1_ENTRY; \
row1: \
	ROW1_ENTRY; \
pair1: \
	CMPQ R12, $2; \
	JL   single1; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	MOVQ R8, SI; \
	MOVQ R11, BX; \
	MOVQ TA_K4(DI), CX; \
	SHRQ $1, CX; \
	JZ   pair1odd; \
pair1loop: \
	VPBROADCASTD (SI), Z10; \
	VPBROADCASTD 4(SI), Z11; \
	DOTM((BX), Z10, Z0); \
	DOTM((BX)(DX*1), Z10, Z4); \
	DOTM(64(BX), Z11, Z1); \
	DOTM(64(BX)(DX*1), Z11, Z5); \
	ADDQ $8, SI; \
	ADDQ $128, BX; \
	DECQ CX; \
	JNZ  pair1loop; \
pair1odd: \
	MOVQ TA_K4(DI), CX; \
	ANDQ $1, CX; \
	JZ   pair1sum; \
	VPBROADCASTD (SI), Z10; \
	DOTM((BX), Z10, Z0); \
	DOTM((BX)(DX*1), Z10, Z4); \
pair1sum: \
	VPADDD Z1, Z0, Z0; \
	VPADDD Z5, Z4, Z4; \
	PAIR1_STORE; \
	JMP  pair1; \
single1: \
	CMPQ R12, $1; \
	JL   row1next; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	MOVQ R8, SI; \
	MOVQ R11, BX; \
	MOVQ TA_K4(DI), CX; \
	SHRQ $1, CX; \
	JZ   single1odd; \
single1loop: \
	VPBROADCASTD (SI), Z10; \
	VPBROADCASTD 4(SI), Z11; \
	DOTM((BX), Z10, Z0); \
	DOTM(64(BX), Z11, Z1); \
	ADDQ $8, SI; \
	ADDQ $128, BX; \
	DECQ CX; \
	JNZ  single1loop; \
single1odd: \
	MOVQ TA_K4(DI), CX; \
	ANDQ $1, CX; \
	JZ   single1sum; \
	VPBROADCASTD (SI), Z10; \
	DOTM((BX), Z10, Z0); \
single1sum: \
	VPADDD Z1, Z0, Z0; \
	SINGLE1_STORE; \
row1next: \
	ROW1_NEXT; \
	JNZ  row1

// TILE_VNNI is a VNNI tile kernel's body: four rows two blocks at a time
// (ROWS4, 8 accumulators), fewer rows one at a time (VNNI_ROWS1).
#define TILE_VNNI(PAIR4, SINGLE4, DOTM) \
	TILE_ENTRY; \
	CMPQ TA_ROWS(DI), $4; \
	JNE  rows1; \
	ROWS4(PAIR4, SINGLE4); \
rows1: \
	VNNI_ROWS1(DOTM); \
done: \
	VZEROUPPER; \
	RET

// func tileVNNI(t *TileArgs)
TEXT ·tileVNNI(SB), NOSPLIT, $0-8
	TILE_VNNI(VNNI_PAIR4_SW, VNNI_SINGLE4_SW, DOTM_SW)

// func tileVNNIUW(t *TileArgs)
TEXT ·tileVNNIUW(SB), NOSPLIT, $0-8
	TILE_VNNI(VNNI_PAIR4_UW, VNNI_SINGLE4_UW, DOTM_UW)

// REQ_TFL_HALF finishes one half (even or odd lanes) of TFLite's rounding
// on the 64-bit products in p: p += add + ((p + 2^30 < 0) ? neg : 0);
// p >>= shift. Z26 holds 2^30 in every qword. Clobbers Z17.
#define REQ_TFL_HALF(p, ADD, NEG, SH) \
	VPADDQ Z26, p, Z17; \
	VPSRAQ $63, Z17, Z17; \
	VPANDQ NEG(R10), Z17, Z17; \
	VPADDQ ADD(R10), p, p; \
	VPADDQ Z17, p, p; \
	VPSRAVQ SH(R10), p, p

// REQ_TFL is REQ_RUY with TFLite's MultiplyByQuantizedMultiplier rounding
// and no row term, for the Block at (R10), storing under mask K3.
#define REQ_TFL(acc, dst) \
	VPADDD QB_CST(R10), acc, acc; \
	VPSLLVD QB_LEFT(R10), acc, acc; \
	VPMULDQ QB_MULT(R10), acc, Z14; \
	REQ_TFL_HALF(Z14, QB_ADDE, QB_NEGE, QB_SHE); \
	VPSRLQ $32, acc, Z15; \
	VPSRLQ $32, QB_MULT(R10), Z16; \
	VPMULDQ Z16, Z15, Z15; \
	REQ_TFL_HALF(Z15, QB_ADDO, QB_NEGO, QB_SHO); \
	VPSLLQ $32, Z15, Z15; \
	VMOVDQA32 Z15, K1, Z14; \
	VPADDD Z22, Z14, Z14; \
	VPMAXSD Z23, Z14, Z14; \
	VPMINSD Z24, Z14, Z14; \
	VPMOVDB Z14, X14; \
	VMOVDQU8 X14, K3, dst

// DWTAPS is DWROW's loop over a block's taps, for inputs widened by MOVX
// (VPMOVZXBD.Z or VPMOVSXBD.Z), with labels ky, kx and kynext: two
// accumulators, Z0 and Z1, take alternate taps.
#define DWTAPS(MOVX, ky, kx, kynext, MAC) \
ky: \
	MOVQ (AX), SI; \
	ADDQ R8, SI; \
	ADDQ R11, SI; \
	MOVQ DA_KW(DI), DX; \
kx: \
	MOVX (SI), K3, Z2; \
	MAC((BX), Z2, Z0); \
	ADDQ DA_TAPSTEP(DI), SI; \
	ADDQ DA_WSTRIDE(DI), BX; \
	DECQ DX; \
	JZ   kynext; \
	MOVX (SI), K3, Z3; \
	MAC((BX), Z3, Z1); \
	ADDQ DA_TAPSTEP(DI), SI; \
	ADDQ DA_WSTRIDE(DI), BX; \
	DECQ DX; \
	JNZ  kx; \
kynext: \
	ADDQ $8, AX; \
	DECQ CX; \
	JNZ  ky

// DW3ROW adds the three taps of one filter row, inputs at (row),
// (row)(CX*1) and (row)(CX*2) widened by MOVX and weights at (BX),
// (BX)(DX*1) and (BX)(DX*2), to the accumulators Z0, Z1 and Z8 (three, so
// that the multiply-adds do not wait on each other), and moves BX to the
// next filter row's weights.
#define DW3ROW(MOVX, MAC, row) \
	MOVX (row), K3, Z2; \
	MOVX (row)(CX*1), K3, Z3; \
	MOVX (row)(CX*2), K3, Z9; \
	MAC((BX), Z2, Z0); \
	MAC((BX)(DX*1), Z3, Z1); \
	MAC((BX)(DX*2), Z9, Z8); \
	LEAQ (BX)(DX*2), BX; \
	ADDQ DX, BX

// DW3X3 is DWROW's loop for a 3x3 filter, unrolled: per pixel, the three
// filter rows' pointers (AX, SI, R15) at the pixel's first tap, moved 16
// channels a block; R11 the block's weights; CX the tap step, DX the
// weights' stride. It returns when the pixels are done.
#define DW3X3(MOVX, MAC, pix, blk) \
pix: \
	TESTQ R9, R9; \
	JZ    dwdone; \
	MOVQ  DA_ROWS(DI), AX; \
	MOVQ  8(AX), SI; \
	MOVQ  16(AX), R15; \
	MOVQ  (AX), AX; \
	ADDQ  R8, AX; \
	ADDQ  R8, SI; \
	ADDQ  R8, R15; \
	MOVQ  DA_NB(DI), R12; \
	MOVQ  DA_QP(DI), R10; \
	MOVQ  R14, R13; \
	MOVQ  DA_W(DI), R11; \
blk: \
	MOVQ    $0xffff, BX; \
	CMPQ    R12, $1; \
	CMOVQEQ DA_TAIL(DI), BX; \
	KMOVW   BX, K3; \
	MOVQ    R11, BX; \
	VPXORD  Z0, Z0, Z0; \
	VPXORD  Z1, Z1, Z1; \
	VPXORD  Z8, Z8, Z8; \
	DW3ROW(MOVX, MAC, AX); \
	DW3ROW(MOVX, MAC, SI); \
	DW3ROW(MOVX, MAC, R15); \
	VPADDD  Z1, Z0, Z0; \
	VPADDD  Z8, Z0, Z0; \
	REQ_TFL(Z0, (R13)); \
	ADDQ    $16, AX; \
	ADDQ    $16, SI; \
	ADDQ    $16, R15; \
	ADDQ    $64, R11; \
	ADDQ    $QB_SIZE, R10; \
	ADDQ    $16, R13; \
	DECQ    R12; \
	JNZ     blk; \
	ADDQ    DA_PIXSTEP(DI), R8; \
	ADDQ    DA_OUTC(DI), R14; \
	DECQ    R9; \
	JMP     pix

// DWROW is the body of the depthwise row kernels, with MAC(w, x, acc)
// adding to acc the products of the 16 widened inputs x with the tap's
// weights at w. A 3x3 filter runs DW3X3; other filters the loop below, in
// which R8 is the byte offset of the pixel's first tap, R11 the channel
// offset, R13 and R14 the block's and the pixel's output, R10 the block's
// Block, K3 the block's store mask.
#define DWROW(MAC) \
	MOVQ t+0(FP), DI; \
	VPBROADCASTD DA_ZP(DI), Z22; \
	VPBROADCASTD DA_LO(DI), Z23; \
	VPBROADCASTD DA_HI(DI), Z24; \
	MOVQ $0x40000000, AX; \
	VPBROADCASTQ AX, Z26; \
	MOVQ $0xaaaa, AX; \
	KMOVW AX, K1; \
	MOVQ DA_NPIX(DI), R9; \
	XORQ R8, R8; \
	MOVQ DA_OUT(DI), R14; \
	MOVQ DA_TAPSTEP(DI), CX; \
	MOVQ DA_WSTRIDE(DI), DX; \
	CMPQ DA_KH(DI), $3; \
	JNE  dwpix; \
	CMPQ DA_KW(DI), $3; \
	JNE  dwpix; \
	CMPQ DA_SIGNED(DI), $0; \
	JNE  dw3s; \
	DW3X3(VPMOVZXBD.Z, MAC, dw3upix, dw3ublk); \
dw3s: \
	DW3X3(VPMOVSXBD.Z, MAC, dw3spix, dw3sblk); \
dwpix: \
	TESTQ R9, R9; \
	JZ    dwdone; \
	MOVQ  DA_NB(DI), R12; \
	MOVQ  DA_QP(DI), R10; \
	MOVQ  R14, R13; \
	XORQ  R11, R11; \
dwblk: \
	MOVQ    $0xffff, CX; \
	CMPQ    R12, $1; \
	CMOVQEQ DA_TAIL(DI), CX; \
	KMOVW   CX, K3; \
	VPXORD  Z0, Z0, Z0; \
	VPXORD  Z1, Z1, Z1; \
	MOVQ    DA_ROWS(DI), AX; \
	MOVQ    DA_W(DI), BX; \
	LEAQ    (BX)(R11*4), BX; \
	MOVQ    DA_KH(DI), CX; \
	CMPQ    DA_SIGNED(DI), $0; \
	JNE     dwsky; \
	DWTAPS(VPMOVZXBD.Z, dwuky, dwukx, dwukynext, MAC); \
	JMP  dwreq; \
	DWTAPS(VPMOVSXBD.Z, dwsky, dwskx, dwskynext, MAC); \
dwreq: \
	VPADDD Z1, Z0, Z0; \
	REQ_TFL(Z0, (R13)); \
	ADDQ   $16, R11; \
	ADDQ   $QB_SIZE, R10; \
	ADDQ   $16, R13; \
	DECQ   R12; \
	JNZ    dwblk; \
	ADDQ   DA_PIXSTEP(DI), R8; \
	ADDQ   DA_OUTC(DI), R14; \
	DECQ   R9; \
	JMP    dwpix; \
dwdone: \
	VZEROUPPER; \
	RET

// VPDPWSSD_MAC is AVX-512 VNNI's multiply-add of word pairs, with the
// weights at w.
#define VPDPWSSD_MAC(w, x, acc) VPDPWSSD w, x, acc

// MADDWD_MAC is the same with AVX-512BW alone: VPMADDWD, then VPADDD.
// Clobbers Z4.
#define MADDWD_MAC(w, x, acc) VPMADDWD w, x, Z4; VPADDD Z4, acc, acc

// func rowVNNI(t *RowArgs)
TEXT ·rowVNNI(SB), NOSPLIT, $0-8
	DWROW(VPDPWSSD_MAC)

// func rowAVX512BW(t *RowArgs)
TEXT ·rowAVX512BW(SB), NOSPLIT, $0-8
	DWROW(MADDWD_MAC)

// The tile kernels for AVX-512BW without VNNI (Skylake-SP and -X; their
// depthwise kernel is rowAVX512BW, above). VPDPBUSD's four u8*s8 products
// per lane become two VPMADDWD: the even bytes (0 and 2 of each lane) and
// the odd ones (1 and 3), each widened to words, the unsigned operand's
// with zeros and the signed one's with their sign: tileAVX512BW's uint8
// rows by int8 weights, tileAVX512BWUW's int8 rows by uint8 weights
// (UnsignedW). Every sum of two products fits its int32 lane, so the sums
// are exact, as VPDPBUSD's.

// SPLITS leaves in x the even bytes of x and in xo its odd bytes, as
// sign-extended words.
#define SPLITS(x, xo) \
	VPSRAW $8, x, xo; \
	VPSLLW $8, x, x; \
	VPSRAW $8, x, x

// SPLITU leaves in x the even bytes of x and in xo its odd bytes, as
// zero-extended words. Z29 holds 0x00ff in every word.
#define SPLITU(x, xo) \
	VPSRLW $8, x, xo; \
	VPANDD Z29, x, x

// DOTBW adds to acc the four products of each lane of the split row
// (a, ao) and split weights (w, wo). Clobbers t.
#define DOTBW(a, ao, w, wo, acc, t) \
	VPMADDWD a, w, t; \
	VPADDD   t, acc, acc; \
	VPMADDWD ao, wo, t; \
	VPADDD   t, acc, acc

// ROWBW broadcasts the 4 bytes at src, splits them with ASPLIT and adds
// their products with both split weight blocks (Z8, Z16 and Z9, Z17) to
// accA and accB. Clobbers Z10-Z12.
#define ROWBW(ASPLIT, src, accA, accB) \
	VPBROADCASTD src, Z10; \
	ASPLIT(Z10, Z11); \
	DOTBW(Z10, Z11, Z8, Z16, accA, Z12); \
	DOTBW(Z10, Z11, Z9, Z17, accB, Z12)

// ROW1BW is ROWBW for the first weight block alone.
#define ROW1BW(ASPLIT, src, acc) \
	VPBROADCASTD src, Z10; \
	ASPLIT(Z10, Z11); \
	DOTBW(Z10, Z11, Z8, Z16, acc, Z12)

// BW_PAIR4 and BW_SINGLE4 are ROWS4's steps without VNNI: the weight
// blocks split by WSPLIT into their even and odd bytes, each row's 4 bytes
// likewise by ASPLIT (ROWBW, ROW1BW).
#define BW_PAIR4(WSPLIT, ASPLIT) \
	VMOVDQU32 (BX), Z8; \
	VMOVDQU32 (BX)(DX*1), Z9; \
	WSPLIT(Z8, Z16); \
	WSPLIT(Z9, Z17); \
	ROWBW(ASPLIT, (SI), Z0, Z4); \
	ROWBW(ASPLIT, (SI)(R8*1), Z1, Z5); \
	ROWBW(ASPLIT, (SI)(R8*2), Z2, Z6); \
	ROWBW(ASPLIT, (SI)(R9*1), Z3, Z7)

#define BW_SINGLE4(WSPLIT, ASPLIT) \
	VMOVDQU32 (BX), Z8; \
	WSPLIT(Z8, Z16); \
	ROW1BW(ASPLIT, (SI), Z0); \
	ROW1BW(ASPLIT, (SI)(R8*1), Z1); \
	ROW1BW(ASPLIT, (SI)(R8*2), Z2); \
	ROW1BW(ASPLIT, (SI)(R9*1), Z3)

#define BW_PAIR4_SW BW_PAIR4(SPLITS, SPLITU)
#define BW_SINGLE4_SW BW_SINGLE4(SPLITS, SPLITU)
#define BW_PAIR4_UW BW_PAIR4(SPLITU, SPLITS)
#define BW_SINGLE4_UW BW_SINGLE4(SPLITU, SPLITS)

// TILE_BW is an AVX-512BW tile kernel's body: four rows two blocks at a
// time (ROWS4, 8 accumulators), fewer rows one at a time, two blocks at a
// time, the weights split by WSPLIT and the rows by ASPLIT.
#define TILE_BW(PAIR4, SINGLE4, WSPLIT, ASPLIT) \
	TILE_ENTRY; \
	MOVL $0x00ff00ff, AX; \
	VPBROADCASTD AX, Z29; \
	CMPQ TA_ROWS(DI), $4; \
	JNE  rows1; \
	ROWS4(PAIR4, SINGLE4); \
rows1: \
	ROWS1_ENTRY; \
row1: \
	ROW1_ENTRY; \
pair1: \
	CMPQ R12, $2; \
	JL   single1; \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z4, Z4, Z4; \
	MOVQ R8, SI; \
	MOVQ R11, BX; \
	MOVQ TA_K4(DI), CX; \
	TESTQ CX, CX; \
	JZ   pair1sum; \
pair1loop: \
	VMOVDQU32 (BX), Z8; \
	VMOVDQU32 (BX)(DX*1), Z9; \
	WSPLIT(Z8, Z16); \
	WSPLIT(Z9, Z17); \
	ROWBW(ASPLIT, (SI), Z0, Z4); \
	ADDQ $4, SI; \
	ADDQ $64, BX; \
	DECQ CX; \
	JNZ  pair1loop; \
pair1sum: \
	PAIR1_STORE; \
	JMP  pair1; \
single1: \
	CMPQ R12, $1; \
	JL   row1next; \
	VPXORD Z0, Z0, Z0; \
	MOVQ R8, SI; \
	MOVQ R11, BX; \
	MOVQ TA_K4(DI), CX; \
	TESTQ CX, CX; \
	JZ   single1sum; \
single1loop: \
	VMOVDQU32 (BX), Z8; \
	WSPLIT(Z8, Z16); \
	ROW1BW(ASPLIT, (SI), Z0); \
	ADDQ $4, SI; \
	ADDQ $64, BX; \
	DECQ CX; \
	JNZ  single1loop; \
single1sum: \
	SINGLE1_STORE; \
row1next: \
	ROW1_NEXT; \
	JNZ  row1; \
done: \
	VZEROUPPER; \
	RET

// func tileAVX512BW(t *TileArgs)
TEXT ·tileAVX512BW(SB), NOSPLIT, $0-8
	TILE_BW(BW_PAIR4_SW, BW_SINGLE4_SW, SPLITS, SPLITU)

// func tileAVX512BWUW(t *TileArgs)
TEXT ·tileAVX512BWUW(SB), NOSPLIT, $0-8
	TILE_BW(BW_PAIR4_UW, BW_SINGLE4_UW, SPLITU, SPLITS)
