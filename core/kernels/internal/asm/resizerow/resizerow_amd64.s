//go:build !purego

#include "textflag.h"
#include "args.h"

// CORNERS interpolates 16 channels at byte offset DX of the four corners
// (SI, R15 on the top row; AX, BX on the bottom one) with the weights in
// Z16-Z19, in TFLite's order: ((p0*w0 + p1*w1) + p2*w2) + p3*w3, then
// +0.5 (Z31), truncated to an int32 and to its low byte, and stores the
// bytes under mask K. Zeroing-masked loads read no byte past the mask.
#define CORNERS(K) \
	VPMOVZXBD.Z (SI)(DX*1), K, Z0; \
	VPMOVZXBD.Z (R15)(DX*1), K, Z1; \
	VPMOVZXBD.Z (AX)(DX*1), K, Z2; \
	VPMOVZXBD.Z (BX)(DX*1), K, Z3; \
	VCVTDQ2PS   Z0, Z0; \
	VCVTDQ2PS   Z1, Z1; \
	VCVTDQ2PS   Z2, Z2; \
	VCVTDQ2PS   Z3, Z3; \
	VMULPS      Z16, Z0, Z0; \
	VMULPS      Z17, Z1, Z1; \
	VADDPS      Z1, Z0, Z0; \
	VMULPS      Z18, Z2, Z2; \
	VADDPS      Z2, Z0, Z0; \
	VMULPS      Z19, Z3, Z3; \
	VADDPS      Z3, Z0, Z0; \
	VADDPS      Z31, Z0, Z0; \
	VCVTTPS2DQ  Z0, Z0; \
	VPMOVDB     Z0, X0; \
	VMOVDQU8    X0, K, (R14)(DX*1)

// func resizeRowU8AVX512(a *Args)
TEXT ·resizeRowU8AVX512(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ RA_N(DI), CX
	TESTQ CX, CX
	JZ   done
	MOVQ RA_TOP(DI), R8
	MOVQ RA_BOT(DI), R9
	MOVQ RA_X0(DI), R10
	MOVQ RA_X1(DI), R11
	MOVQ RA_OMX(DI), R12
	MOVQ RA_DX(DI), R13
	MOVQ RA_DST(DI), R14
	VMOVSS RA_WY(DI), X4   // 1-dy
	VMOVSS RA_WY+4(DI), X5 // dy
	MOVL $0x3f000000, AX   // 0.5
	VPBROADCASTD AX, Z31
	MOVQ $0xffff, AX
	KMOVW AX, K1
	MOVQ RA_TAIL(DI), AX
	KMOVW AX, K2

col:
	VMOVSS (R12), X6       // 1-dx
	VMOVSS (R13), X7       // dx
	VMULSS X6, X4, X0      // w0 = (1-dy)(1-dx)
	VMULSS X7, X4, X1      // w1 = (1-dy)dx
	VMULSS X6, X5, X2      // w2 = dy(1-dx)
	VMULSS X7, X5, X3      // w3 = dy dx
	VBROADCASTSS X0, Z16
	VBROADCASTSS X1, Z17
	VBROADCASTSS X2, Z18
	VBROADCASTSS X3, Z19
	MOVLQSX (R10), AX
	MOVLQSX (R11), BX
	LEAQ (R8)(AX*1), SI
	LEAQ (R8)(BX*1), R15
	ADDQ R9, AX
	ADDQ R9, BX
	XORQ DX, DX

full:
	CMPQ DX, RA_FULL(DI)
	JGE  tail
	CORNERS(K1)
	ADDQ $16, DX
	JMP  full

tail:
	CMPQ RA_TAIL(DI), $0
	JEQ  next
	CORNERS(K2)

next:
	ADDQ RA_C(DI), R14
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ CX
	JNZ  col

done:
	VZEROUPPER
	RET

// CORNERSF interpolates 16 float channels at float offset DX of the four
// corners (SI, R15 on the top row; AX, BX on the bottom one) with the
// weights in Z16-Z19, in TFLite's order ((p0*w0 + p1*w1) + p2*w2) + p3*w3,
// and stores them under mask K. Zeroing-masked loads read nothing past
// the mask.
#define CORNERSF(K) \
	VMOVUPS.Z (SI)(DX*4), K, Z0; \
	VMOVUPS.Z (R15)(DX*4), K, Z1; \
	VMOVUPS.Z (AX)(DX*4), K, Z2; \
	VMOVUPS.Z (BX)(DX*4), K, Z3; \
	VMULPS    Z16, Z0, Z0; \
	VMULPS    Z17, Z1, Z1; \
	VADDPS    Z1, Z0, Z0; \
	VMULPS    Z18, Z2, Z2; \
	VADDPS    Z2, Z0, Z0; \
	VMULPS    Z19, Z3, Z3; \
	VADDPS    Z3, Z0, Z0; \
	VMOVUPS   Z0, K, (R14)(DX*4)

// func resizeRowF32AVX512(a *ArgsF32)
TEXT ·resizeRowF32AVX512(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ RA_N(DI), CX
	TESTQ CX, CX
	JZ   fdone
	MOVQ RA_TOP(DI), R8
	MOVQ RA_BOT(DI), R9
	MOVQ RA_X0(DI), R10
	MOVQ RA_X1(DI), R11
	MOVQ RA_OMX(DI), R12
	MOVQ RA_DX(DI), R13
	MOVQ RA_DST(DI), R14
	VMOVSS RA_WY(DI), X4   // 1-dy
	VMOVSS RA_WY+4(DI), X5 // dy
	MOVQ $0xffff, AX
	KMOVW AX, K1
	MOVQ RA_TAIL(DI), AX
	KMOVW AX, K2

fcol:
	VMOVSS (R12), X6       // 1-dx
	VMOVSS (R13), X7       // dx
	VMULSS X6, X4, X0      // w0 = (1-dy)(1-dx)
	VMULSS X7, X4, X1      // w1 = (1-dy)dx
	VMULSS X6, X5, X2      // w2 = dy(1-dx)
	VMULSS X7, X5, X3      // w3 = dy dx
	VBROADCASTSS X0, Z16
	VBROADCASTSS X1, Z17
	VBROADCASTSS X2, Z18
	VBROADCASTSS X3, Z19
	MOVLQSX (R10), AX
	MOVLQSX (R11), BX
	LEAQ (R8)(AX*4), SI
	LEAQ (R8)(BX*4), R15
	LEAQ (R9)(AX*4), AX
	LEAQ (R9)(BX*4), BX
	XORQ DX, DX

ffull:
	CMPQ DX, RA_FULL(DI)
	JGE  ftail
	CORNERSF(K1)
	ADDQ $16, DX
	JMP  ffull

ftail:
	CMPQ RA_TAIL(DI), $0
	JEQ  fnext
	CORNERSF(K2)

fnext:
	MOVQ RA_C(DI), DX
	LEAQ (R14)(DX*4), R14
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ CX
	JNZ  fcol

fdone:
	VZEROUPPER
	RET

// CORNERSF8 is CORNERSF for the 8 channels at float offset DX in Y
// registers, the weights in Y8-Y11.
#define CORNERSF8 \
	VMOVUPS (SI)(DX*4), Y0; \
	VMOVUPS (R15)(DX*4), Y1; \
	VMOVUPS (AX)(DX*4), Y2; \
	VMOVUPS (BX)(DX*4), Y3; \
	VMULPS  Y8, Y0, Y0; \
	VMULPS  Y9, Y1, Y1; \
	VADDPS  Y1, Y0, Y0; \
	VMULPS  Y10, Y2, Y2; \
	VADDPS  Y2, Y0, Y0; \
	VMULPS  Y11, Y3, Y3; \
	VADDPS  Y3, Y0, Y0; \
	VMOVUPS Y0, (R14)(DX*4)

// CORNERSF1 is CORNERSF8 for the one channel at float offset DX.
#define CORNERSF1 \
	VMOVSS (SI)(DX*4), X0; \
	VMOVSS (R15)(DX*4), X1; \
	VMOVSS (AX)(DX*4), X2; \
	VMOVSS (BX)(DX*4), X3; \
	VMULSS X8, X0, X0; \
	VMULSS X9, X1, X1; \
	VADDSS X1, X0, X0; \
	VMULSS X10, X2, X2; \
	VADDSS X2, X0, X0; \
	VMULSS X11, X3, X3; \
	VADDSS X3, X0, X0; \
	VMOVSS X0, (R14)(DX*4)

// func resizeRowF32AVX2(a *ArgsF32)
TEXT ·resizeRowF32AVX2(SB), NOSPLIT, $0-8
	MOVQ a+0(FP), DI
	MOVQ RA_N(DI), CX
	TESTQ CX, CX
	JZ   gdone
	MOVQ RA_TOP(DI), R8
	MOVQ RA_BOT(DI), R9
	MOVQ RA_X0(DI), R10
	MOVQ RA_X1(DI), R11
	MOVQ RA_OMX(DI), R12
	MOVQ RA_DX(DI), R13
	MOVQ RA_DST(DI), R14
	VMOVSS RA_WY(DI), X4   // 1-dy
	VMOVSS RA_WY+4(DI), X5 // dy

gcol:
	VMOVSS (R12), X6       // 1-dx
	VMOVSS (R13), X7       // dx
	VMULSS X6, X4, X8      // w0 = (1-dy)(1-dx)
	VMULSS X7, X4, X9      // w1 = (1-dy)dx
	VMULSS X6, X5, X10     // w2 = dy(1-dx)
	VMULSS X7, X5, X11     // w3 = dy dx
	MOVLQSX (R10), AX
	MOVLQSX (R11), BX
	LEAQ (R8)(AX*4), SI
	LEAQ (R8)(BX*4), R15
	LEAQ (R9)(AX*4), AX
	LEAQ (R9)(BX*4), BX
	XORQ DX, DX
	CMPQ DX, RA_FULL8(DI)
	JGE  gone
	VBROADCASTSS X8, Y8
	VBROADCASTSS X9, Y9
	VBROADCASTSS X10, Y10
	VBROADCASTSS X11, Y11

gfull:
	CORNERSF8
	ADDQ $8, DX
	CMPQ DX, RA_FULL8(DI)
	JLT  gfull

gone:
	CMPQ DX, RA_C(DI)
	JGE  gnext
	CORNERSF1
	INCQ DX
	JMP  gone

gnext:
	MOVQ RA_C(DI), DX
	LEAQ (R14)(DX*4), R14
	ADDQ $4, R10
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ CX
	JNZ  gcol

gdone:
	VZEROUPPER
	RET
