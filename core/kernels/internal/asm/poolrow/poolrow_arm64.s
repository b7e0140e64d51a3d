//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// ARGS loads the arguments every kernel shares: acc (R0), src (R1), w
// (R2), the stride in bytes (R3: stride << shift) and npx (R4).
#define ARGS(shift) \
	MOVD acc+0(FP), R0; \
	MOVD src+8(FP), R1; \
	MOVD w+16(FP), R2; \
	MOVD stride+24(FP), R3; \
	LSL  $shift, R3; \
	MOVD npx+32(FP), R4

// ROWS runs the kernel over the channels (R2, a whole number of vectors),
// a vector of lanes at a time: INIT loads the accumulators of its
// channels, PIXEL folds in those of the pixel at R5, FINI stores them.
#define ROWS(lanes, accstep, srcstep, INIT, PIXEL, FINI, Lblock, Lpx) \
Lblock: \
	INIT; \
	MOVD R1, R5; \
	MOVD R4, R6; \
Lpx: \
	PIXEL; \
	ADD  R3, R5; \
	SUBS $1, R6; \
	BNE  Lpx; \
	FINI; \
	ADD  $accstep, R0; \
	ADD  $srcstep, R1; \
	SUBS $lanes, R2; \
	BNE  Lblock; \
	RET

// FMAX with the accumulator first is what Go's max(acc, v) compiles to
// on arm64 (FMAXS), lane by lane; FADD likewise is acc += v.
#define F_INIT VLD1 (R0), [V0.S4]
#define F_FINI VST1 [V0.S4], (R0)
#define MAXF_PIXEL \
	VLD1 (R5), [V1.S4]; \
	FMAX_4S(0, 0, 1)
#define MINF_PIXEL \
	VLD1 (R5), [V1.S4]; \
	FMIN_4S(0, 0, 1)
#define ADDF_PIXEL \
	VLD1 (R5), [V1.S4]; \
	FADD_4S(0, 0, 1)

// func maxF32NEON(acc, src *float32, w, stride, npx int)
TEXT ·maxF32NEON(SB), NOSPLIT, $0-40
	ARGS(2)
	ROWS(4, 16, 16, F_INIT, MAXF_PIXEL, F_FINI, mfblock, mfpx)

// func minF32NEON(acc, src *float32, w, stride, npx int)
TEXT ·minF32NEON(SB), NOSPLIT, $0-40
	ARGS(2)
	ROWS(4, 16, 16, F_INIT, MINF_PIXEL, F_FINI, nfblock, nfpx)

// func addF32NEON(acc, src *float32, w, stride, npx int)
TEXT ·addF32NEON(SB), NOSPLIT, $0-40
	ARGS(2)
	ROWS(4, 16, 16, F_INIT, ADDF_PIXEL, F_FINI, afblock, afpx)

#define B_INIT VLD1 (R0), [V0.B16]
#define B_FINI VST1 [V0.B16], (R0)
#define MAXU_PIXEL \
	VLD1 (R5), [V1.B16]; \
	UMAX_16B(0, 0, 1)
#define MAXS_PIXEL \
	VLD1 (R5), [V1.B16]; \
	SMAX_16B(0, 0, 1)

// func maxU8NEON(acc, src *uint8, w, stride, npx int)
TEXT ·maxU8NEON(SB), NOSPLIT, $0-40
	ARGS(0)
	ROWS(16, 16, 16, B_INIT, MAXU_PIXEL, B_FINI, mublock, mupx)

// func maxI8NEON(acc, src *uint8, w, stride, npx int)
TEXT ·maxI8NEON(SB), NOSPLIT, $0-40
	ARGS(0)
	ROWS(16, 16, 16, B_INIT, MAXS_PIXEL, B_FINI, msblock, mspx)

#define W_INIT VLD1 (R0), [V0.H8, V1.H8]
#define W_FINI VST1 [V0.H8, V1.H8], (R0)
#define ADDB_PIXEL \
	VLD1 (R5), [V2.B16]; \
	VEOR V31.B16, V2.B16, V2.B16; \
	UADDW_8B(0, 0, 2); \
	UADDW2_16B(1, 1, 2)

// func addU8NEON(acc *uint16, src *uint8, w, stride, npx int, flip byte)
TEXT ·addU8NEON(SB), NOSPLIT, $0-41
	ARGS(0)
	MOVBU flip+40(FP), R7
	VDUP  R7, V31.B16
	ROWS(16, 32, 16, W_INIT, ADDB_PIXEL, W_FINI, abblock, abpx)
