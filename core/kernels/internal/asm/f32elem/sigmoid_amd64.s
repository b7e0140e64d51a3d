//go:build !purego

#include "textflag.h"
#include "args.h"
#include "sigmoid.h"

// Logistic and Tanh of sigmoid.go in AVX-512F and AVX2: the same
// operations as the twins, in the same order, each rounded on its own
// (no FMA), with the twins' branches as selects. A lane whose x is NaN
// takes x at the end, whatever was computed for it.

// C16 puts the 32-bit value v 16 times at off in sigm<>.
#define C4(off, v) \
	DATA sigm<>+(off)(SB)/4, $v; \
	DATA sigm<>+(off+4)(SB)/4, $v; \
	DATA sigm<>+(off+8)(SB)/4, $v; \
	DATA sigm<>+(off+12)(SB)/4, $v
#define C16(off, v) C4(off, v); C4(off+16, v); C4(off+32, v); C4(off+48, v)

C16(SO_SIGN, SC_SIGN)
C16(SO_EXPMIN, SC_EXPMIN)
C16(SO_LOG2E, SC_LOG2E)
C16(SO_MAGIC, SC_MAGIC)
C16(SO_LN2HI, SC_LN2HI)
C16(SO_LN2LO, SC_LN2LO)
C16(SO_EXP0, SC_EXP0)
C16(SO_EXP1, SC_EXP1)
C16(SO_EXP2, SC_EXP2)
C16(SO_EXP3, SC_EXP3)
C16(SO_EXP4, SC_EXP4)
C16(SO_EXP5, SC_EXP5)
C16(SO_ONE, SC_ONE)
C16(SO_BIAS, SC_BIAS)
C16(SO_NSMALL, SC_NSMALL)
C16(SO_TANH0, SC_TANH0)
C16(SO_TANH1, SC_TANH1)
C16(SO_TANH2, SC_TANH2)
C16(SO_TANH3, SC_TANH3)
C16(SO_TANH4, SC_TANH4)
GLOBL sigm<>(SB), RODATA|NOPTR, $SO_SIZE

#define K(o) sigm<>+o(SB)

// EXPNEG is expNeg: p = e^a for a in [expMin, 0], with k, n, r, t
// free; the registers are all Z or all Y.
#define EXPNEG(a, k, n, r, t, p) \
	VMULPS K(SO_LOG2E), a, k; \
	VADDPS K(SO_MAGIC), k, k; \
	VSUBPS K(SO_MAGIC), k, n; \
	VMULPS K(SO_LN2HI), n, t; \
	VSUBPS t, a, r; \
	VMULPS K(SO_LN2LO), n, t; \
	VSUBPS t, r, r; \
	VMULPS K(SO_EXP0), r, p; \
	VADDPS K(SO_EXP1), p, p; \
	VMULPS r, p, p; \
	VADDPS K(SO_EXP2), p, p; \
	VMULPS r, p, p; \
	VADDPS K(SO_EXP3), p, p; \
	VMULPS r, p, p; \
	VADDPS K(SO_EXP4), p, p; \
	VMULPS r, p, p; \
	VADDPS K(SO_EXP5), p, p; \
	VMULPS r, r, t; \
	VMULPS t, p, p; \
	VADDPS r, p, p; \
	VADDPS K(SO_ONE), p, p; \
	VPSUBD K(SO_MAGIC), k, k; \
	VPSRAD $1, k, n; \
	VPSUBD n, k, k; \
	VPADDD K(SO_BIAS), n, n; \
	VPSLLD $23, n, n; \
	VPADDD K(SO_BIAS), k, k; \
	VPSLLD $23, k, k; \
	VMULPS n, p, p; \
	VMULPS k, p, p

// TANHPOLY is the odd polynomial of tanh: s from x, with z and p free.
#define TANHPOLY(x, z, p, s) \
	VMULPS x, x, z; \
	VMULPS K(SO_TANH0), z, p; \
	VADDPS K(SO_TANH1), p, p; \
	VMULPS z, p, p; \
	VADDPS K(SO_TANH2), p, p; \
	VMULPS z, p, p; \
	VADDPS K(SO_TANH3), p, p; \
	VMULPS z, p, p; \
	VADDPS K(SO_TANH4), p, p; \
	VMULPS z, p, p; \
	VMULPS x, p, p; \
	VADDPS x, p, s

// ---------------------------------------------------------------- AVX-512
//
// A body computes Z7 from x in Z0, with Z1-Z6 and K2, K3 free.

#define LOGISTIC512 \
	VPORD          K(SO_SIGN), Z0, Z1; \
	VMAXPS         K(SO_EXPMIN), Z1, Z1; \
	EXPNEG(Z1, Z2, Z3, Z4, Z5, Z6); \
	VADDPS         K(SO_ONE), Z6, Z5; \
	VBROADCASTSS   K(SO_ONE), Z7; \
	VPXORD         Z1, Z1, Z1; \
	VCMPPS         $0x01, Z1, Z0, K2; \
	VMOVAPS        Z6, K2, Z7; \
	VDIVPS         Z5, Z7, Z7; \
	VCMPPS         $0x03, Z0, Z0, K3; \
	VMOVAPS        Z0, K3, Z7

#define TANH512 \
	VPORD          K(SO_SIGN), Z0, Z1; \
	VCMPPS         $0x0e, K(SO_NSMALL), Z1, K2; \
	VADDPS         Z1, Z1, Z1; \
	VMAXPS         K(SO_EXPMIN), Z1, Z1; \
	EXPNEG(Z1, Z2, Z3, Z4, Z5, Z6); \
	VBROADCASTSS   K(SO_ONE), Z7; \
	VSUBPS         Z6, Z7, Z7; \
	VADDPS         K(SO_ONE), Z6, Z6; \
	VDIVPS         Z6, Z7, Z7; \
	VPANDD         K(SO_SIGN), Z0, Z1; \
	VPORD          Z1, Z7, Z7; \
	TANHPOLY(Z0, Z2, Z3, Z4); \
	VMOVAPS        Z4, K2, Z7; \
	VCMPPS         $0x03, Z0, Z0, K3; \
	VMOVAPS        Z0, K3, Z7

// SIGMLOOP512 runs BODY over BX elements from SI to R8: 16 at a time,
// then the rest under the mask K1.
#define SIGMLOOP512(BODY, l16, tail) \
l16: \
	CMPQ    BX, $16; \
	JLT     tail; \
	VMOVUPS (SI), Z0; \
	BODY; \
	VMOVUPS Z7, (R8); \
	ADDQ    $64, SI; \
	ADDQ    $64, R8; \
	SUBQ    $16, BX; \
	JMP     l16; \
tail: \
	TESTQ     BX, BX; \
	JZ        done; \
	MOVQ      BX, CX; \
	MOVL      $1, AX; \
	SHLL      CX, AX; \
	DECL      AX; \
	KMOVW     AX, K1; \
	VMOVUPS.Z (SI), K1, Z0; \
	BODY; \
	VMOVUPS   Z7, K1, (R8); \
	JMP       done

// func sigmoidAVX512(a *Args)
TEXT ·sigmoidAVX512(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ AR_X(DI), SI
	MOVQ AR_Z(DI), R8
	MOVQ AR_N(DI), BX
	MOVL AR_OP(DI), AX
	CMPL AX, $OP_TANH
	JEQ  tanh
	SIGMLOOP512(LOGISTIC512, lg16, lgtail)
tanh:
	SIGMLOOP512(TANH512, th16, thtail)
done:
	VZEROUPPER
	RET

// ---------------------------------------------------------------- AVX2
//
// A body computes Y7 from x in Y0, with Y1-Y6 and Y8 free.

#define LOGISTIC256 \
	VORPS     K(SO_SIGN), Y0, Y1; \
	VMAXPS    K(SO_EXPMIN), Y1, Y1; \
	EXPNEG(Y1, Y2, Y3, Y4, Y5, Y6); \
	VADDPS    K(SO_ONE), Y6, Y5; \
	VXORPS    Y1, Y1, Y1; \
	VCMPPS    $0x01, Y1, Y0, Y8; \
	VMOVUPS   K(SO_ONE), Y7; \
	VBLENDVPS Y8, Y6, Y7, Y7; \
	VDIVPS    Y5, Y7, Y7; \
	VCMPPS    $0x03, Y0, Y0, Y8; \
	VBLENDVPS Y8, Y0, Y7, Y7

#define TANH256 \
	VORPS     K(SO_SIGN), Y0, Y1; \
	VCMPPS    $0x0e, K(SO_NSMALL), Y1, Y8; \
	VADDPS    Y1, Y1, Y1; \
	VMAXPS    K(SO_EXPMIN), Y1, Y1; \
	EXPNEG(Y1, Y2, Y3, Y4, Y5, Y6); \
	VMOVUPS   K(SO_ONE), Y7; \
	VSUBPS    Y6, Y7, Y7; \
	VADDPS    K(SO_ONE), Y6, Y6; \
	VDIVPS    Y6, Y7, Y7; \
	VANDPS    K(SO_SIGN), Y0, Y1; \
	VORPS     Y1, Y7, Y7; \
	TANHPOLY(Y0, Y2, Y3, Y4); \
	VBLENDVPS Y8, Y4, Y7, Y7; \
	VCMPPS    $0x03, Y0, Y0, Y8; \
	VBLENDVPS Y8, Y0, Y7, Y7

// SIGMLOOP256 runs BODY over BX elements (a multiple of 8) from SI to
// R8, 8 at a time.
#define SIGMLOOP256(BODY, l8) \
l8: \
	TESTQ   BX, BX; \
	JZ      done2; \
	VMOVUPS (SI), Y0; \
	BODY; \
	VMOVUPS Y7, (R8); \
	ADDQ    $32, SI; \
	ADDQ    $32, R8; \
	SUBQ    $8, BX; \
	JMP     l8

// func sigmoidAVX2(a *Args)
TEXT ·sigmoidAVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ AR_X(DI), SI
	MOVQ AR_Z(DI), R8
	MOVQ AR_N(DI), BX
	MOVL AR_OP(DI), AX
	CMPL AX, $OP_TANH
	JEQ  tanh
	SIGMLOOP256(LOGISTIC256, lg8)
tanh:
	SIGMLOOP256(TANH256, th8)
done2:
	VZEROUPPER
	RET
