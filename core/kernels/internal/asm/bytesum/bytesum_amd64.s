//go:build !purego

#include "textflag.h"

// HSUMQ adds the four quadwords of Y0 into AX.
#define HSUMQ \
	VEXTRACTI128 $1, Y0, X3; \
	VPADDQ       X3, X0, X0; \
	VPSHUFD      $0x4e, X0, X3; \
	VPADDQ       X3, X0, X0; \
	VMOVQ        X0, AX

// func byteSumAVX2(p *uint8, n int, xor uint8) uint64
TEXT ·byteSumAVX2(SB), NOSPLIT, $0-32
	MOVQ         p+0(FP), SI
	MOVQ         n+8(FP), CX
	VPBROADCASTB xor+16(FP), Y1
	VPXOR        Y0, Y0, Y0
	VPXOR        Y2, Y2, Y2

loop256:
	VPXOR   (SI), Y1, Y3
	VPSADBW Y2, Y3, Y3
	VPADDQ  Y3, Y0, Y0
	ADDQ    $32, SI
	SUBQ    $32, CX
	JNZ     loop256
	HSUMQ
	MOVQ    AX, ret+24(FP)
	VZEROUPPER
	RET

// func byteSumsAVX512(p *uint8, stride, n, count int, xor uint8, mul, add int32, dst *int32)
TEXT ·byteSumsAVX512(SB), NOSPLIT, $0-56
	MOVQ         p+0(FP), SI
	MOVQ         stride+8(FP), DX
	MOVQ         n+16(FP), R10
	MOVQ         count+24(FP), BX
	VPBROADCASTB xor+32(FP), Z1
	MOVL         mul+36(FP), R8
	MOVL         add+40(FP), R9
	MOVQ         dst+48(FP), DI
	VPXORQ       Z2, Z2, Z2

	// K1 masks the last n%64 bytes of a row (none when n is a multiple
	// of 64), Z4 the XOR pattern to them; R10 counts the whole blocks' bytes.
	MOVQ       R10, CX
	ANDQ       $63, CX
	MOVQ       $1, AX
	SHLQ       CX, AX
	DECQ       AX
	KMOVQ      AX, K1
	VMOVDQU8.Z Z1, K1, Z4
	ANDQ       $~63, R10

rows:
	VPXORQ Z0, Z0, Z0
	MOVQ   SI, R11
	MOVQ   R10, R12

blocks:
	TESTQ   R12, R12
	JZ      rowtail
	VPXORQ  (R11), Z1, Z3
	VPSADBW Z2, Z3, Z3
	VPADDQ  Z3, Z0, Z0
	ADDQ    $64, R11
	SUBQ    $64, R12
	JMP     blocks

rowtail:
	// The last n%64 bytes: the load and the XOR pattern are masked to them,
	// so the lanes past them stay zero and no byte past them is read.
	KORTESTQ   K1, K1
	JZ         rowdone
	VMOVDQU8.Z (R11), K1, Z3
	VPXORQ     Z4, Z3, Z3
	VPSADBW    Z2, Z3, Z3
	VPADDQ     Z3, Z0, Z0

rowdone:
	VEXTRACTI64X4 $1, Z0, Y3
	VPADDQ        Y3, Y0, Y0
	HSUMQ
	IMULL         R8, AX
	ADDL          R9, AX
	MOVL          AX, (DI)
	ADDQ          $4, DI
	ADDQ          DX, SI
	DECQ          BX
	JNZ           rows
	VZEROUPPER
	RET
