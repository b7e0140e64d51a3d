//go:build !purego

#include "textflag.h"
#include "args.h"

// TERM broadcasts the Term at off: mul, mask and half to zm, zk and zh,
// the right shift to the low quadword of xs, the offset to zo.
#define TERM(off, zo, zm, zk, zh, xs) \
	VPBROADCASTD off+T_OFF(DI), zo; \
	VPBROADCASTD off+T_MUL(DI), zm; \
	VPBROADCASTD off+T_MASK(DI), zk; \
	VPBROADCASTD off+T_HALF(DI), zh; \
	MOVL         off+T_RS(DI), AX; \
	VMOVQ        AX, xs

// MULSHIFT is mulShift on the 16 lanes of x, in place, with the term's
// multiplier zm, mask zk, half mask zh and right shift xs: the rounding
// doubling high multiply (ab + 2^30) >> 31 in 64 bits for the even lanes
// and the odd ones, then the rounding right shift, plus one where the
// remainder exceeds half the divisor (and one more than half, for a
// negative value). Clobbers Z5, Z6 and K2.
#define MULSHIFT(x, zm, zk, zh, xs) \
	VPMULDQ   zm, x, Z5; \
	VPADDQ    Z28, Z5, Z5; \
	VPSLLQ    $1, Z5, Z5; \
	VPSRLQ    $32, Z5, Z5; \
	VPSRLQ    $32, x, Z6; \
	VPMULDQ   zm, Z6, Z6; \
	VPADDQ    Z28, Z6, Z6; \
	VPSLLQ    $1, Z6, Z6; \
	VMOVDQA32 Z6, K3, Z5; \
	VPANDD    zk, Z5, Z6; \
	VPSRAD    $31, Z5, x; \
	VPSUBD    x, zh, x; \
	VPCMPGTD  x, Z6, K2; \
	VPSRAD    xs, Z5, x; \
	VPSUBD    Z15, x, K2, x

// BLOCK computes the 16 (or, under mask K1, fewer) elements at byte offset
// CX, with MOVX (VPMOVZXBD.Z or VPMOVSXBD.Z) widening the inputs.
#define BLOCK(MOVX) \
	MOVX      (SI)(CX*1), K1, Z0; \
	MOVX      (DX)(CX*1), K1, Z1; \
	VPADDD    Z17, Z0, Z0; \
	VPSLLD    X11, Z0, Z0; \
	MULSHIFT(Z0, Z16, Z18, Z19, X8); \
	VPADDD    Z21, Z1, Z1; \
	VPSLLD    X11, Z1, Z1; \
	MULSHIFT(Z1, Z20, Z22, Z23, X9); \
	VPXORD    Z29, Z1, Z1; \
	VPSUBD    Z29, Z1, Z1; \
	VPADDD    Z1, Z0, Z0; \
	MULSHIFT(Z0, Z24, Z26, Z27, X10); \
	VPADDD    Z25, Z0, Z0; \
	VPMAXSD   Z30, Z0, Z0; \
	VPMINSD   Z31, Z0, Z0; \
	VPMOVDB   Z0, X0; \
	VMOVDQU8  X0, K1, (R8)(CX*1)

// MULBLOCK is BLOCK for MUL: the product of the offset inputs, shifted
// left by X11, rescaled to the output (the third term) and clamped.
#define MULBLOCK(MOVX) \
	MOVX      (SI)(CX*1), K1, Z0; \
	MOVX      (DX)(CX*1), K1, Z1; \
	VPADDD    Z17, Z0, Z0; \
	VPADDD    Z21, Z1, Z1; \
	VPMULLD   Z1, Z0, Z0; \
	VPSLLD    X11, Z0, Z0; \
	MULSHIFT(Z0, Z24, Z26, Z27, X10); \
	VPADDD    Z25, Z0, Z0; \
	VPMAXSD   Z30, Z0, Z0; \
	VPMINSD   Z31, Z0, Z0; \
	VPMOVDB   Z0, X0; \
	VMOVDQU8  X0, K1, (R8)(CX*1)

// ROW runs B (BLOCK or MULBLOCK) over the row: whole blocks, then the
// tail under a mask, then jumps to done.
#define ROW(B, MOVX, loop, tail, done) \
loop: \
	CMPQ BX, $16; \
	JLT  tail; \
	B(MOVX); \
	ADDQ $16, CX; \
	SUBQ $16, BX; \
	JMP  loop; \
tail: \
	TESTQ BX, BX; \
	JZ    done; \
	MOVQ  $1, AX; \
	SHLXQ BX, AX, AX; \
	DECQ  AX; \
	KMOVW AX, K1; \
	B(MOVX); \
	JMP   done

// SETUP512 loads the arguments of a *Args at a+0(FP) into the registers
// BLOCK and MULBLOCK read, and compares a.Signed with 0.
#define SETUP512 \
	MOVQ a+0(FP), DI; \
	MOVQ AR_X(DI), SI; \
	MOVQ AR_Y(DI), DX; \
	MOVQ AR_Z(DI), R8; \
	MOVQ AR_N(DI), BX; \
	TERM(AR_T1, Z17, Z16, Z18, Z19, X8); \
	TERM(AR_T2, Z21, Z20, Z22, Z23, X9); \
	TERM(AR_TO, Z25, Z24, Z26, Z27, X10); \
	MOVL AR_LS(DI), AX; \
	VMOVQ AX, X11; \
	MOVQ $0x40000000, AX; \
	VPBROADCASTQ AX, Z28; \
	VPBROADCASTD AR_NEG(DI), Z29; \
	VPBROADCASTD AR_LO(DI), Z30; \
	VPBROADCASTD AR_HI(DI), Z31; \
	VPTERNLOGD $0xff, Z15, Z15, Z15; \
	MOVQ $0xaaaa, AX; \
	KMOVW AX, K3; \
	MOVQ $0xffff, AX; \
	KMOVW AX, K1; \
	XORQ CX, CX; \
	CMPL AR_SIGNED(DI), $0

// func addRowAVX512(a *Args)
TEXT ·addRowAVX512(SB), NOSPLIT, $0-8
	SETUP512
	JNE  signed
	ROW(BLOCK, VPMOVZXBD.Z, uloop, utail, done)
signed:
	ROW(BLOCK, VPMOVSXBD.Z, sloop, stail, done)

done:
	VZEROUPPER
	RET

// func mulRowAVX512(a *Args)
TEXT ·mulRowAVX512(SB), NOSPLIT, $0-8
	SETUP512
	JNE  msigned
	ROW(MULBLOCK, VPMOVZXBD.Z, muloop, mutail, mdone)
msigned:
	ROW(MULBLOCK, VPMOVSXBD.Z, msloop, mstail, mdone)

mdone:
	VZEROUPPER
	RET

// The AVX2 kernel keeps its broadcast constants in its frame, as AVX2
// has 16 registers: offsets of each vector.
#define F_T1 0
#define F_T2 128
#define F_TO 256
#define F_MUL 0
#define F_OFF 32
#define F_MASK 64
#define F_HALF 96
#define F_NUDGE 384
#define F_NEG 416
#define F_LO 448
#define F_HI 480

// TERM2 broadcasts the Term at off into the frame at f, and its right
// shift to the low quadword of xs.
#define TERM2(off, f, xs) \
	VPBROADCASTD off+T_OFF(DI), Y0; \
	VMOVDQU      Y0, f+F_OFF(SP); \
	VPBROADCASTD off+T_MUL(DI), Y0; \
	VMOVDQU      Y0, f+F_MUL(SP); \
	VPBROADCASTD off+T_MASK(DI), Y0; \
	VMOVDQU      Y0, f+F_MASK(SP); \
	VPBROADCASTD off+T_HALF(DI), Y0; \
	VMOVDQU      Y0, f+F_HALF(SP); \
	MOVL         off+T_RS(DI), AX; \
	VMOVQ        AX, xs

// MULSHIFT2 is MULSHIFT on the 8 lanes of y with the term in the frame at
// f and its right shift in xs. Clobbers Y5-Y7.
#define MULSHIFT2(y, f, xs) \
	VPMULDQ  f+F_MUL(SP), y, Y5; \
	VPADDQ   F_NUDGE(SP), Y5, Y5; \
	VPSLLQ   $1, Y5, Y5; \
	VPSRLQ   $32, Y5, Y5; \
	VPSRLQ   $32, y, Y6; \
	VPMULDQ  f+F_MUL(SP), Y6, Y6; \
	VPADDQ   F_NUDGE(SP), Y6, Y6; \
	VPSLLQ   $1, Y6, Y6; \
	VPBLENDD $0xaa, Y6, Y5, Y5; \
	VPAND    f+F_MASK(SP), Y5, Y6; \
	VPSRAD   $31, Y5, y; \
	VMOVDQU  f+F_HALF(SP), Y7; \
	VPSUBD   y, Y7, y; \
	VPCMPGTD y, Y6, Y7; \
	VPSRAD   xs, Y5, y; \
	VPSUBD   Y7, y, y

// SUM2 is the ADD/SUB of the 8 lanes of Y0 and Y1 before the output's
// rescaling: each input offset, shifted left by X11 and rescaled, the
// second negated for SUB, into Y0.
#define SUM2 \
	VPADDD    F_T1+F_OFF(SP), Y0, Y0; \
	VPSLLD    X11, Y0, Y0; \
	MULSHIFT2(Y0, F_T1, X8); \
	VPADDD    F_T2+F_OFF(SP), Y1, Y1; \
	VPSLLD    X11, Y1, Y1; \
	MULSHIFT2(Y1, F_T2, X9); \
	VPXOR     F_NEG(SP), Y1, Y1; \
	VPSUBD    F_NEG(SP), Y1, Y1; \
	VPADDD    Y1, Y0, Y0

// PRODUCT2 is SUM2 for MUL: the product of the offset inputs, shifted
// left by X11, into Y0.
#define PRODUCT2 \
	VPADDD    F_T1+F_OFF(SP), Y0, Y0; \
	VPADDD    F_T2+F_OFF(SP), Y1, Y1; \
	VPMULLD   Y1, Y0, Y0; \
	VPSLLD    X11, Y0, Y0

// ROW2 runs the row, 8 elements a round, then jumps to done: MOVX
// (VPMOVZXBD or VPMOVSXBD) widens the inputs, COMBINE (SUM2 or PRODUCT2)
// joins them, PACK (VPACKUSWB or VPACKSSWB) narrows the result.
#define ROW2(COMBINE, MOVX, PACK, loop, done) \
loop: \
	MOVX      (SI)(CX*1), Y0; \
	MOVX      (DX)(CX*1), Y1; \
	COMBINE; \
	MULSHIFT2(Y0, F_TO, X10); \
	VPADDD    F_TO+F_OFF(SP), Y0, Y0; \
	VPMAXSD   F_LO(SP), Y0, Y0; \
	VPMINSD   F_HI(SP), Y0, Y0; \
	VEXTRACTI128 $1, Y0, X1; \
	VPACKSSDW X1, X0, X0; \
	PACK      X0, X0, X0; \
	VMOVQ     X0, (R8)(CX*1); \
	ADDQ      $8, CX; \
	SUBQ      $8, BX; \
	JNZ       loop; \
	JMP       done

// SETUP2 loads the arguments of a *Args at a+0(FP) into the registers
// and the frame ROW2 reads, and compares a.Signed with 0.
#define SETUP2 \
	MOVQ a+0(FP), DI; \
	MOVQ AR_X(DI), SI; \
	MOVQ AR_Y(DI), DX; \
	MOVQ AR_Z(DI), R8; \
	MOVQ AR_N(DI), BX; \
	TERM2(AR_T1, F_T1, X8); \
	TERM2(AR_T2, F_T2, X9); \
	TERM2(AR_TO, F_TO, X10); \
	MOVL AR_LS(DI), AX; \
	VMOVQ AX, X11; \
	MOVQ $0x40000000, AX; \
	VMOVQ AX, X0; \
	VPBROADCASTQ X0, Y0; \
	VMOVDQU Y0, F_NUDGE(SP); \
	VPBROADCASTD AR_NEG(DI), Y0; \
	VMOVDQU Y0, F_NEG(SP); \
	VPBROADCASTD AR_LO(DI), Y0; \
	VMOVDQU Y0, F_LO(SP); \
	VPBROADCASTD AR_HI(DI), Y0; \
	VMOVDQU Y0, F_HI(SP); \
	XORQ CX, CX; \
	CMPL AR_SIGNED(DI), $0

// func addRowAVX2(a *Args)
// a.n is a multiple of 8.
TEXT ·addRowAVX2(SB), $512-8
	MOVQ a+0(FP), DI
	CMPQ AR_N(DI), $0
	JE   done2
	SETUP2
	JNE  signed2
	ROW2(SUM2, VPMOVZXBD, VPACKUSWB, uloop2, done2)
signed2:
	ROW2(SUM2, VPMOVSXBD, VPACKSSWB, sloop2, done2)

done2:
	VZEROUPPER
	RET

// func mulRowAVX2(a *Args)
// a.n is a multiple of 8.
TEXT ·mulRowAVX2(SB), $512-8
	MOVQ a+0(FP), DI
	CMPQ AR_N(DI), $0
	JE   mdone2
	SETUP2
	JNE  msigned2
	ROW2(PRODUCT2, VPMOVZXBD, VPACKUSWB, muloop2, mdone2)
msigned2:
	ROW2(PRODUCT2, VPMOVSXBD, VPACKSSWB, msloop2, mdone2)

mdone2:
	VZEROUPPER
	RET
