//go:build !purego

#include "textflag.h"

// ARGS loads z (DI), x (SI), y (DX) and n (CX), and jumps by op to the
// labels of the four loops.
#define ARGS(lmaxs, lminu, lmins) \
	MOVQ z+8(FP), DI; \
	MOVQ x+16(FP), SI; \
	MOVQ y+24(FP), DX; \
	MOVQ n+32(FP), CX; \
	MOVQ op+0(FP), AX; \
	CMPQ AX, $1; \
	JEQ  lmaxs; \
	CMPQ AX, $2; \
	JEQ  lminu; \
	CMPQ AX, $3; \
	JEQ  lmins

// ROW512 runs OP over the row, 64 bytes at a time, the last block under
// the mask of the bytes left.
#define ROW512(OP, loop) \
loop: \
	MOVQ    $64, R8; \
	CMPQ    CX, R8; \
	CMOVQLT CX, R8; \
	MOVQ    $-1, AX; \
	BZHIQ   R8, AX, AX; \
	KMOVQ   AX, K1; \
	VMOVDQU8.Z (SI), K1, Z0; \
	VMOVDQU8.Z (DX), K1, Z1; \
	OP      Z1, Z0, Z0; \
	VMOVDQU8 Z0, K1, (DI); \
	ADDQ    $64, SI; \
	ADDQ    $64, DX; \
	ADDQ    $64, DI; \
	SUBQ    $64, CX; \
	JG      loop; \
	VZEROUPPER; \
	RET

// func rowAVX512(op Op, z, x, y *byte, n int)
TEXT ·rowAVX512(SB), NOSPLIT, $0-40
	ARGS(maxs512, minu512, mins512)
	ROW512(VPMAXUB, maxu512)
maxs512:
	ROW512(VPMAXSB, maxs512loop)
minu512:
	ROW512(VPMINUB, minu512loop)
mins512:
	ROW512(VPMINSB, mins512loop)

// ROW256 runs OP over the row, 32 bytes at a time.
#define ROW256(OP, loop) \
loop: \
	VMOVDQU (SI), Y0; \
	OP      (DX), Y0, Y0; \
	VMOVDQU Y0, (DI); \
	ADDQ    $32, SI; \
	ADDQ    $32, DX; \
	ADDQ    $32, DI; \
	SUBQ    $32, CX; \
	JNZ     loop; \
	VZEROUPPER; \
	RET

// func rowAVX2(op Op, z, x, y *byte, n int)
TEXT ·rowAVX2(SB), NOSPLIT, $0-40
	ARGS(maxs256, minu256, mins256)
	ROW256(VPMAXUB, maxu256)
maxs256:
	ROW256(VPMAXSB, maxs256loop)
minu256:
	ROW256(VPMINUB, minu256loop)
mins256:
	ROW256(VPMINSB, mins256loop)
