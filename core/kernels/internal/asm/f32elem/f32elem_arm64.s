//go:build !purego

#include "textflag.h"
#include "args.h"
#include "neon_arm64.h"

// The element-wise kernels of f32elem.go in NEON. NEON's FMAX and FMIN
// return NaN for a NaN operand and order -0 below +0, unlike the twins'
// ternaries, so every choice is the twin's own comparison (FCMGT) and a
// bitwise select (BIT, BIF). Additions and products are never fused.
//
// V28 lo, V29 hi, V30 alpha, V31 0, V27 3, V26 6, V25 1/6. A body
// computes register x from x (and y), with t free (and y, in a unary
// body); the arguments are register numbers.

#define MAXMIN4(x, y, t) \
	FCMGT_4S(t, x, 28); \
	BIF_16B(x, 28, t); \
	FCMGT_4S(t, 29, x); \
	BIF_16B(x, 29, t)

#define CLAMP4(x, y, t) \
	FCMGT_4S(t, 28, x); \
	BIT_16B(x, 28, t); \
	FCMGT_4S(t, x, 29); \
	BIT_16B(x, 29, t)

#define LEAKY4(x, y, t) \
	FMUL_4S(y, x, 30); \
	FCMGT_4S(t, x, 31); \
	BIF_16B(x, y, t)

#define HARDSWISH4(x, y, t) \
	FADD_4S(y, x, 27); \
	FCMGT_4S(t, y, 31); \
	BIF_16B(y, 31, t); \
	FCMGT_4S(t, 26, y); \
	BIF_16B(y, 26, t); \
	FMUL_4S(x, x, y); \
	FMUL_4S(x, x, 25)

#define ADD4(x, y, t) \
	FADD_4S(x, x, y); \
	CLAMP4(x, y, t)

#define SUB4(x, y, t) \
	FSUB_4S(x, x, y); \
	CLAMP4(x, y, t)

#define MUL4(x, y, t) \
	FMUL_4S(x, x, y); \
	CLAMP4(x, y, t)

#define ADDMM4(x, y, t) \
	FADD_4S(x, x, y); \
	MAXMIN4(x, y, t)

#define SUBMM4(x, y, t) \
	FSUB_4S(x, x, y); \
	MAXMIN4(x, y, t)

#define MULMM4(x, y, t) \
	FMUL_4S(x, x, y); \
	MAXMIN4(x, y, t)

#define MAX4(x, y, t) \
	FCMGT_4S(t, x, y); \
	BIF_16B(x, y, t)

#define MIN4(x, y, t) \
	FCMGT_4S(t, y, x); \
	BIF_16B(x, y, t)

#define PRELU4(x, y, t) \
	FMUL_4S(y, x, y); \
	FCMGT_4S(t, 31, x); \
	BIT_16B(x, y, t)

// LOOP1 runs a unary BODY over R4 elements (a multiple of 8) from R1 to
// R3, 8 at a time.
#define LOOP1(BODY, loop) \
loop: \
	CBZ    R4, done; \
	VLD1.P 32(R1), [V0.S4, V1.S4]; \
	BODY(0, 2, 4); \
	BODY(1, 3, 5); \
	VST1.P [V0.S4, V1.S4], 32(R3); \
	SUB    $8, R4; \
	B      loop

// LOOP2 is LOOP1 for a binary BODY, y from R2; R5 and R6 are how far x
// and y advance per 8 elements (32 bytes, or 0 for a broadcast operand
// read from Args.Buf).
#define LOOP2(BODY, loop) \
loop: \
	CBZ    R4, done; \
	VLD1   (R1), [V0.S4, V1.S4]; \
	ADD    R5, R1; \
	VLD1   (R2), [V2.S4, V3.S4]; \
	ADD    R6, R2; \
	BODY(0, 2, 4); \
	BODY(1, 3, 5); \
	VST1.P [V0.S4, V1.S4], 32(R3); \
	SUB    $8, R4; \
	B      loop

// func runNEON(a *Args)
TEXT ·runNEON(SB), NOSPLIT, $0-8
	MOVD a+0(FP), R0
	MOVD AR_X(R0), R1
	MOVD AR_Y(R0), R2
	MOVD AR_Z(R0), R3
	MOVD AR_N(R0), R4
	MOVD AR_XSTEP(R0), R5
	LSL  $5, R5
	MOVD AR_YSTEP(R0), R6
	LSL  $5, R6
	ADD  $AR_LO, R0, R7
	VLD1R (R7), [V28.S4]
	ADD  $AR_HI, R0, R7
	VLD1R (R7), [V29.S4]
	ADD  $AR_ALPHA, R0, R7
	VLD1R (R7), [V30.S4]
	VEOR V31.B16, V31.B16, V31.B16
	MOVW $0x40400000, R7
	VDUP R7, V27.S4
	MOVW $0x40c00000, R7
	VDUP R7, V26.S4
	MOVW $0x3e2aaaab, R7 // float32(1.0/6.0)
	VDUP R7, V25.S4
	MOVW AR_OP(R0), R7
	CMP  $OP_MAXMIN, R7
	BEQ  maxmin
	CMP  $OP_CLAMP, R7
	BEQ  clamp
	CMP  $OP_LEAKY, R7
	BEQ  leaky
	CMP  $OP_HARDSWISH, R7
	BEQ  hardswish
	CMP  $OP_ADD, R7
	BEQ  add
	CMP  $OP_SUB, R7
	BEQ  sub
	CMP  $OP_MUL, R7
	BEQ  mul
	CMP  $OP_MAX, R7
	BEQ  max
	CMP  $OP_MIN, R7
	BEQ  min
	CMP  $OP_PRELU, R7
	BEQ  prelu
	CMP  $OP_ADDMAXMIN, R7
	BEQ  addmm
	CMP  $OP_SUBMAXMIN, R7
	BEQ  submm
	CMP  $OP_MULMAXMIN, R7
	BEQ  mulmm
	B    done

maxmin:
	LOOP1(MAXMIN4, mmloop)
clamp:
	LOOP1(CLAMP4, clloop)
leaky:
	LOOP1(LEAKY4, lkloop)
hardswish:
	LOOP1(HARDSWISH4, hsloop)
add:
	LOOP2(ADD4, adloop)
sub:
	LOOP2(SUB4, sbloop)
mul:
	LOOP2(MUL4, mlloop)
max:
	LOOP2(MAX4, mxloop)
min:
	LOOP2(MIN4, mnloop)
prelu:
	LOOP2(PRELU4, prloop)
addmm:
	LOOP2(ADDMM4, amloop)
submm:
	LOOP2(SUBMM4, smloop)
mulmm:
	LOOP2(MULMM4, mm2loop)

done:
	RET
