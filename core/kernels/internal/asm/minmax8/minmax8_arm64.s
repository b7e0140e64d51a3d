//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// ROW runs OP over the row (R3 bytes, a multiple of 16), 16 at a time.
#define ROW(OP, loop) \
loop: \
	VLD1.P 16(R1), [V0.B16]; \
	VLD1.P 16(R2), [V1.B16]; \
	OP(0, 0, 1); \
	VST1.P [V0.B16], 16(R0); \
	SUBS   $16, R3; \
	BNE    loop; \
	RET

// func rowNEON(op Op, z, x, y *byte, n int)
TEXT ·rowNEON(SB), NOSPLIT, $0-40
	MOVD z+8(FP), R0
	MOVD x+16(FP), R1
	MOVD y+24(FP), R2
	MOVD n+32(FP), R3
	MOVD op+0(FP), R4
	CMP  $1, R4
	BEQ  maxs
	CMP  $2, R4
	BEQ  minu
	CMP  $3, R4
	BEQ  mins
	ROW(UMAX_16B, maxuloop)
maxs:
	ROW(SMAX_16B, maxsloop)
minu:
	ROW(UMIN_16B, minuloop)
mins:
	ROW(SMIN_16B, minsloop)
