//go:build !purego

#include "textflag.h"

// LOOKUP64 maps the 64 bytes of Z4 through the table in Z0-Z3 into Z5:
// the low seven bits index Z0:Z1 and Z2:Z3, the top bit picks which.
#define LOOKUP64 \
	VMOVDQA64 Z0, Z5; \
	VPERMT2B  Z1, Z4, Z5; \
	VMOVDQA64 Z2, Z6; \
	VPERMT2B  Z3, Z4, Z6; \
	VPMOVB2M  Z4, K1; \
	VMOVDQU8  Z6, K1, Z5

// func lookupVBMI(table *[256]byte, src, dst *byte, n int)
TEXT ·lookupVBMI(SB), NOSPLIT, $0-32
	MOVQ table+0(FP), AX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	MOVQ n+24(FP), CX
	VMOVDQU64 0(AX), Z0
	VMOVDQU64 64(AX), Z1
	VMOVDQU64 128(AX), Z2
	VMOVDQU64 192(AX), Z3
	CMPQ CX, $64
	JB   vbmitail

vbmiloop:
	VMOVDQU64 (SI), Z4
	LOOKUP64
	VMOVDQU64 Z5, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $64, CX
	CMPQ CX, $64
	JAE  vbmiloop

vbmitail:
	TESTQ CX, CX
	JZ    vbmidone
	MOVQ  $-1, DX
	BZHIQ CX, DX, DX
	KMOVQ DX, K2
	VMOVDQU8.Z (SI), K2, Z4
	LOOKUP64
	VMOVDQU8 Z5, K2, (DI)

vbmidone:
	VZEROUPPER
	RET

// TELESCOPE stores at off(SP) the 16 table bytes at off(AX) XORed with
// the 16 before them.
#define TELESCOPE(off, prev) \
	VMOVDQU off(AX), X1; \
	VPXOR   prev(AX), X1, X1; \
	VMOVDQU X1, off(SP)

// STEP folds the next 16-entry table of each half into the lookups: the
// index (Y3 for the low half, Y7 for the high) picks from the differences
// at offA(SP) and offB(SP) while it lies in 0..127, and VPSHUFB gives 0
// once it has gone negative; then the index moves down 16.
#define STEP(offA, offB) \
	VBROADCASTI128 offA(SP), Y4; \
	VPSHUFB        Y3, Y4, Y5; \
	VPXOR          Y5, Y2, Y2; \
	VPSUBB         Y14, Y3, Y3; \
	VBROADCASTI128 offB(SP), Y8; \
	VPSHUFB        Y7, Y8, Y9; \
	VPXOR          Y9, Y6, Y6; \
	VPSUBB         Y14, Y7, Y7

// func lookupAVX2(table *[256]byte, src, dst *byte, n int)
//
// The table is cut in sixteen rows of 16 bytes, and each half of eight
// rows is stored telescoped on the stack: its first row, then each row
// XORed with the one before. A byte x below 128 is looked up as the XOR of
// row k of the low half at x-16k for k = 0 .. x/16 (the later rows see a
// negative index and give 0), which telescopes to row x/16 at x%16; a
// byte from 128 up likewise in the high half at x-128; the top bit of x
// picks the half.
TEXT ·lookupAVX2(SB), NOSPLIT, $256-32
	MOVQ table+0(FP), AX
	MOVQ src+8(FP), SI
	MOVQ dst+16(FP), DI
	MOVQ n+24(FP), CX
	VMOVDQU 0(AX), X1
	VMOVDQU X1, 0(SP)
	TELESCOPE(16, 0)
	TELESCOPE(32, 16)
	TELESCOPE(48, 32)
	TELESCOPE(64, 48)
	TELESCOPE(80, 64)
	TELESCOPE(96, 80)
	TELESCOPE(112, 96)
	VMOVDQU 128(AX), X1
	VMOVDQU X1, 128(SP)
	TELESCOPE(144, 128)
	TELESCOPE(160, 144)
	TELESCOPE(176, 160)
	TELESCOPE(192, 176)
	TELESCOPE(208, 192)
	TELESCOPE(224, 208)
	TELESCOPE(240, 224)
	MOVL $0x10101010, DX
	VMOVD DX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x80808080, DX
	VMOVD DX, X15
	VPBROADCASTD X15, Y15

avx2loop:
	VMOVDQU (SI), Y0
	VPXOR   Y0, Y15, Y7
	VMOVDQU Y0, Y3
	VPXOR   Y2, Y2, Y2
	VPXOR   Y6, Y6, Y6
	STEP(0, 128)
	STEP(16, 144)
	STEP(32, 160)
	STEP(48, 176)
	STEP(64, 192)
	STEP(80, 208)
	STEP(96, 224)
	STEP(112, 240)
	VPBLENDVB Y0, Y6, Y2, Y10
	VMOVDQU   Y10, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $32, CX
	JNZ  avx2loop
	VZEROUPPER
	RET
