//go:build !purego

#include "textflag.h"

// func byteSumNEON(p *uint8, n int, xor uint8) uint64
TEXT ·byteSumNEON(SB), NOSPLIT, $0-32
	MOVD p+0(FP), R0
	MOVD n+8(FP), R1
	MOVBU xor+16(FP), R2
	VDUP R2, V1.B16
	MOVD ZR, R4

loop:
	VLD1.P  16(R0), [V2.B16]
	VEOR    V1.B16, V2.B16, V2.B16
	VUADDLV V2.B16, V3
	VMOV    V3.H[0], R3
	ADD     R3, R4, R4
	SUBS    $16, R1, R1
	BNE     loop
	MOVD    R4, ret+24(FP)
	RET
