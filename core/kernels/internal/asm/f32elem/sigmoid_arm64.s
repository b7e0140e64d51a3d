//go:build !purego

#include "textflag.h"
#include "args.h"
#include "neon_arm64.h"
#include "sigmoid.h"

// Logistic and Tanh of sigmoid.go in NEON: the same operations as the
// twins, in the same order, each rounded on its own (no FMLA), with the
// twins' branches as comparisons and bitwise selects. A lane whose x is
// NaN takes x at the end, whatever was computed for it.
//
// V8 sign, V9 expMin, V10 log2e, V11 roundMagic, V12 ln2Hi, V13 ln2Lo,
// V14-V19 exp0-exp5, V20 1, V21 127 (integer), V22 -tanhSmall,
// V23-V27 tanh0-tanh4, V28 0. A body computes V2 from x in V0, with
// V3-V7 and V29, V30 free.

#define CONST(v, r) \
	MOVW $v, R7; \
	VDUP R7, r

// EXPNEG4 is expNeg: p = e^a for a in [expMin, 0], with k, n, r, t
// free.
#define EXPNEG4(a, k, n, r, t, p) \
	FMUL_4S(k, a, 10); \
	FADD_4S(k, k, 11); \
	FSUB_4S(n, k, 11); \
	FMUL_4S(t, n, 12); \
	FSUB_4S(r, a, t); \
	FMUL_4S(t, n, 13); \
	FSUB_4S(r, r, t); \
	FMUL_4S(p, r, 14); \
	FADD_4S(p, p, 15); \
	FMUL_4S(p, p, r); \
	FADD_4S(p, p, 16); \
	FMUL_4S(p, p, r); \
	FADD_4S(p, p, 17); \
	FMUL_4S(p, p, r); \
	FADD_4S(p, p, 18); \
	FMUL_4S(p, p, r); \
	FADD_4S(p, p, 19); \
	FMUL_4S(t, r, r); \
	FMUL_4S(p, p, t); \
	FADD_4S(p, p, r); \
	FADD_4S(p, p, 20); \
	SUB_4S(k, k, 11); \
	SSHR_4S(n, k, 1); \
	SUB_4S(k, k, n); \
	ADD_4S(n, n, 21); \
	SHL_4S(n, n, 23); \
	ADD_4S(k, k, 21); \
	SHL_4S(k, k, 23); \
	FMUL_4S(p, p, n); \
	FMUL_4S(p, p, k)

// CLAMPMIN sets a to expMin where it is below, with t free.
#define CLAMPMIN(a, t) \
	FCMGT_4S(t, 9, a); \
	BIT_16B(a, 9, t)

// KEEPNAN sets V2 to x where x is NaN, with t free.
#define KEEPNAN(t) \
	FCMEQ_4S(t, 0, 0); \
	BIF_16B(2, 0, t)

#define LOGISTIC4 \
	ORR_16B(3, 0, 8); \
	CLAMPMIN(3, 7); \
	EXPNEG4(3, 4, 5, 6, 7, 29); \
	FADD_4S(7, 29, 20); \
	FCMGT_4S(4, 28, 0); \
	ORR_16B(2, 20, 20); \
	BIT_16B(2, 29, 4); \
	FDIV_4S(2, 2, 7); \
	KEEPNAN(4)

#define TANH4 \
	ORR_16B(3, 0, 8); \
	FCMGT_4S(30, 3, 22); \
	FADD_4S(3, 3, 3); \
	CLAMPMIN(3, 7); \
	EXPNEG4(3, 4, 5, 6, 7, 29); \
	FSUB_4S(2, 20, 29); \
	FADD_4S(29, 29, 20); \
	FDIV_4S(2, 2, 29); \
	AND_16B(7, 0, 8); \
	ORR_16B(2, 2, 7); \
	FMUL_4S(4, 0, 0); \
	FMUL_4S(5, 4, 23); \
	FADD_4S(5, 5, 24); \
	FMUL_4S(5, 5, 4); \
	FADD_4S(5, 5, 25); \
	FMUL_4S(5, 5, 4); \
	FADD_4S(5, 5, 26); \
	FMUL_4S(5, 5, 4); \
	FADD_4S(5, 5, 27); \
	FMUL_4S(5, 5, 4); \
	FMUL_4S(5, 5, 0); \
	FADD_4S(6, 5, 0); \
	BIT_16B(2, 6, 30); \
	KEEPNAN(4)

// SIGMLOOP runs BODY over R4 elements (a multiple of 4) from R1 to R3,
// 4 at a time.
#define SIGMLOOP(BODY, loop) \
loop: \
	CBZ    R4, done; \
	VLD1.P 16(R1), [V0.S4]; \
	BODY; \
	VST1.P [V2.S4], 16(R3); \
	SUB    $4, R4; \
	B      loop

// func sigmoidNEON(a *Args)
TEXT ·sigmoidNEON(SB), NOSPLIT, $0-8
	MOVD a+0(FP), R0
	MOVD AR_X(R0), R1
	MOVD AR_Z(R0), R3
	MOVD AR_N(R0), R4
	CONST(SC_SIGN, V8.S4)
	CONST(SC_EXPMIN, V9.S4)
	CONST(SC_LOG2E, V10.S4)
	CONST(SC_MAGIC, V11.S4)
	CONST(SC_LN2HI, V12.S4)
	CONST(SC_LN2LO, V13.S4)
	CONST(SC_EXP0, V14.S4)
	CONST(SC_EXP1, V15.S4)
	CONST(SC_EXP2, V16.S4)
	CONST(SC_EXP3, V17.S4)
	CONST(SC_EXP4, V18.S4)
	CONST(SC_EXP5, V19.S4)
	CONST(SC_ONE, V20.S4)
	CONST(SC_BIAS, V21.S4)
	CONST(SC_NSMALL, V22.S4)
	CONST(SC_TANH0, V23.S4)
	CONST(SC_TANH1, V24.S4)
	CONST(SC_TANH2, V25.S4)
	CONST(SC_TANH3, V26.S4)
	CONST(SC_TANH4, V27.S4)
	VEOR V28.B16, V28.B16, V28.B16
	MOVW AR_OP(R0), R7
	CMP  $OP_TANH, R7
	BEQ  tanh
	SIGMLOOP(LOGISTIC4, lgloop)
tanh:
	SIGMLOOP(TANH4, thloop)
done:
	RET
