//go:build !purego

#include "textflag.h"
#include "args.h"
#include "neon_arm64.h"

// argIota holds the bytes 0 to 63: the lane indices of a 64-byte run.
DATA argIota<>+0(SB)/8, $0x0706050403020100
DATA argIota<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA argIota<>+16(SB)/8, $0x1716151413121110
DATA argIota<>+24(SB)/8, $0x1f1e1d1c1b1a1918
DATA argIota<>+32(SB)/8, $0x2726252423222120
DATA argIota<>+40(SB)/8, $0x2f2e2d2c2b2a2928
DATA argIota<>+48(SB)/8, $0x3736353433323130
DATA argIota<>+56(SB)/8, $0x3f3e3d3c3b3a3938
GLOBL argIota<>(SB), RODATA|NOPTR, $64

// RUNS finds, for each of the R2 runs of R3 bytes at R1, the first index
// of its extreme under OP and OPV (the vector and across-vector max or
// min, unsigned or signed) and stores it to R4 as an int32. It reads 64
// bytes from each run's start; lanes past the run (masks V24-V27) take
// the fill byte (V28), which cannot change the extreme. Each lane equal
// to the extreme keeps its index (V20-V23), the others 255, and the least
// of those is the run's first. A filled lane may equal the extreme, but
// then so does an earlier lane of the run.
#define RUNS(OP, OPV, loop) \
loop: \
	VLD1 (R1), [V0.B16, V1.B16, V2.B16, V3.B16]; \
	BIF_16B(0, 28, 24); \
	BIF_16B(1, 28, 25); \
	BIF_16B(2, 28, 26); \
	BIF_16B(3, 28, 27); \
	OP(4, 0, 1); \
	OP(5, 2, 3); \
	OP(4, 4, 5); \
	OPV(4, 4); \
	DUP_B0(4, 4); \
	CMEQ_16B(5, 0, 4); \
	CMEQ_16B(6, 1, 4); \
	CMEQ_16B(7, 2, 4); \
	CMEQ_16B(16, 3, 4); \
	ORN_16B(5, 20, 5); \
	ORN_16B(6, 21, 6); \
	ORN_16B(7, 22, 7); \
	ORN_16B(16, 23, 16); \
	UMIN_16B(5, 5, 6); \
	UMIN_16B(7, 7, 16); \
	UMIN_16B(5, 5, 7); \
	UMINV_B(5, 5); \
	VMOV V5.B[0], R5; \
	MOVW R5, (R4); \
	ADD  R3, R1; \
	ADD  $4, R4; \
	SUBS $1, R2; \
	BNE  loop; \
	RET

// func argBytesNEON(a *args)
// Reads 64 bytes from the start of every run: the caller keeps the runs
// whose 64 bytes pass the end of the data for the Go twin.
TEXT ·argBytesNEON(SB), NOSPLIT, $0-8
	MOVD a+0(FP), R0
	MOVD AB_N(R0), R2
	CBZ  R2, done
	MOVD AB_SRC(R0), R1
	MOVD AB_SIZE(R0), R3
	MOVD AB_DST(R0), R4
	MOVD $argIota<>(SB), R5
	VLD1 (R5), [V20.B16, V21.B16, V22.B16, V23.B16]
	VDUP R3, V29.B16
	CMHI_16B(24, 29, 20)
	CMHI_16B(25, 29, 21)
	CMHI_16B(26, 29, 22)
	CMHI_16B(27, 29, 23)
	MOVD AB_FILL(R0), R5
	VDUP R5, V28.B16
	MOVD AB_MODE(R0), R5
	CMP  $1, R5
	BEQ  maxu
	CMP  $3, R5
	BEQ  maxs
	CMP  $2, R5
	BEQ  mins
	RUNS(UMIN_16B, UMINV_B, minuloop)
maxu:
	RUNS(UMAX_16B, UMAXV_B, maxuloop)
maxs:
	RUNS(SMAX_16B, SMAXV_B, maxsloop)
mins:
	RUNS(SMIN_16B, SMINV_B, minsloop)

done:
	RET
