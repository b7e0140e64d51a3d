//go:build !purego

#include "textflag.h"

// ARGS loads the arguments every kernel shares: acc (DI), src (SI), w
// (CX), the stride in bytes (R8: stride << shift) and npx (R9).
#define ARGS(shift) \
	MOVQ acc+0(FP), DI; \
	MOVQ src+8(FP), SI; \
	MOVQ w+16(FP), CX; \
	MOVQ stride+24(FP), R8; \
	SHLQ $shift, R8; \
	MOVQ npx+32(FP), R9

// FLIP broadcasts the flip byte into Y15.
#define FLIP \
	MOVBQZX      flip+40(FP), AX; \
	VMOVD        AX, X15; \
	VPBROADCASTB X15, Y15

// ROWS runs the kernel over the channels, a vector of lanes at a time:
// INIT loads the accumulators of the vector's channels, PIXEL folds in
// those of the pixel at R10, FINI stores them back. With masked, K1
// holds the lanes left (AVX-512); without, CX is a whole number of
// vectors (AVX2).
#define ROWS(lanes, accstep, srcstep, MASK, INIT, PIXEL, FINI, Lblock, Lpx) \
Lblock: \
	MASK(lanes); \
	INIT; \
	MOVQ SI, R10; \
	MOVQ R9, R11; \
Lpx: \
	PIXEL; \
	ADDQ R8, R10; \
	DECQ R11; \
	JNZ  Lpx; \
	FINI; \
	ADDQ $accstep, DI; \
	ADDQ $srcstep, SI; \
	SUBQ $lanes, CX; \
	JG   Lblock; \
	VZEROUPPER; \
	RET

// MASKED sets K1 to the min(CX, lanes) lanes left.
#define MASKED(lanes) \
	MOVQ    $lanes, DX; \
	CMPQ    CX, DX; \
	CMOVQLT CX, DX; \
	MOVQ    $-1, AX; \
	BZHIQ   DX, AX, AX; \
	KMOVQ   AX, K1

#define WHOLE(lanes)

// SIGNS broadcasts the float sign bit into Z31 and Y15.
#define SIGNS \
	MOVL         $0x80000000, AX; \
	VMOVD        AX, X15; \
	VPBROADCASTD X15, Y15; \
	VPBROADCASTD X15, Z31

// Go's max(a, v) on float32 is, on amd64, -(t | min(t, -a)) with
// t = min(-a, -v) (MINSS: the first operand where it is less, else the
// second): the kernels keep the negated maximum and repeat those steps
// lane by lane, so every NaN and zero comes out as Go's does.

#define MAXF_INIT512 \
	VMOVUPS.Z (DI), K1, Z0; \
	VPXORD    Z31, Z0, Z0
#define MAXF_PIXEL512 \
	VMOVUPS.Z (R10), K1, Z1; \
	VPXORD    Z31, Z1, Z1; \
	VMINPS    Z1, Z0, Z2; \
	VMINPS    Z0, Z2, Z3; \
	VPORD     Z2, Z3, Z0
#define MAXF_FINI512 \
	VPXORD  Z31, Z0, Z0; \
	VMOVUPS Z0, K1, (DI)

// func maxF32AVX512(acc, src *float32, w, stride, npx int)
TEXT ·maxF32AVX512(SB), NOSPLIT, $0-40
	ARGS(2)
	SIGNS
	ROWS(16, 64, 64, MASKED, MAXF_INIT512, MAXF_PIXEL512, MAXF_FINI512, mf512block, mf512px)

#define MAXF_INIT256 \
	VMOVUPS (DI), Y0; \
	VXORPS  Y15, Y0, Y0
#define MAXF_PIXEL256 \
	VXORPS (R10), Y15, Y1; \
	VMINPS Y1, Y0, Y2; \
	VMINPS Y0, Y2, Y3; \
	VORPS  Y2, Y3, Y0
#define MAXF_FINI256 \
	VXORPS  Y15, Y0, Y0; \
	VMOVUPS Y0, (DI)

// func maxF32AVX2(acc, src *float32, w, stride, npx int)
TEXT ·maxF32AVX2(SB), NOSPLIT, $0-40
	ARGS(2)
	SIGNS
	ROWS(8, 32, 32, WHOLE, MAXF_INIT256, MAXF_PIXEL256, MAXF_FINI256, mf256block, mf256px)

// Go's min(a, v) is t | min(t, a) with t = min(a, v), the maximum's
// steps without the negations.

#define MINF_INIT512 VMOVUPS.Z (DI), K1, Z0
#define MINF_PIXEL512 \
	VMOVUPS.Z (R10), K1, Z1; \
	VMINPS    Z1, Z0, Z2; \
	VMINPS    Z0, Z2, Z3; \
	VPORD     Z2, Z3, Z0
#define MINF_FINI512 VMOVUPS Z0, K1, (DI)

// func minF32AVX512(acc, src *float32, w, stride, npx int)
TEXT ·minF32AVX512(SB), NOSPLIT, $0-40
	ARGS(2)
	ROWS(16, 64, 64, MASKED, MINF_INIT512, MINF_PIXEL512, MINF_FINI512, nf512block, nf512px)

#define MINF_INIT256 VMOVUPS (DI), Y0
#define MINF_PIXEL256 \
	VMOVUPS (R10), Y1; \
	VMINPS  Y1, Y0, Y2; \
	VMINPS  Y0, Y2, Y3; \
	VORPS   Y2, Y3, Y0
#define MINF_FINI256 VMOVUPS Y0, (DI)

// func minF32AVX2(acc, src *float32, w, stride, npx int)
TEXT ·minF32AVX2(SB), NOSPLIT, $0-40
	ARGS(2)
	ROWS(8, 32, 32, WHOLE, MINF_INIT256, MINF_PIXEL256, MINF_FINI256, nf256block, nf256px)

// The sums add each pixel to the accumulator, the accumulator first, as
// the twin's acc += v does.

#define ADDF_INIT512 VMOVUPS.Z (DI), K1, Z0
#define ADDF_PIXEL512 \
	VMOVUPS.Z (R10), K1, Z1; \
	VADDPS    Z1, Z0, Z0
#define ADDF_FINI512 VMOVUPS Z0, K1, (DI)

// func addF32AVX512(acc, src *float32, w, stride, npx int)
TEXT ·addF32AVX512(SB), NOSPLIT, $0-40
	ARGS(2)
	ROWS(16, 64, 64, MASKED, ADDF_INIT512, ADDF_PIXEL512, ADDF_FINI512, af512block, af512px)

#define ADDF_INIT256 VMOVUPS (DI), Y0
#define ADDF_PIXEL256 VADDPS (R10), Y0, Y0
#define ADDF_FINI256 VMOVUPS Y0, (DI)

// func addF32AVX2(acc, src *float32, w, stride, npx int)
TEXT ·addF32AVX2(SB), NOSPLIT, $0-40
	ARGS(2)
	ROWS(8, 32, 32, WHOLE, ADDF_INIT256, ADDF_PIXEL256, ADDF_FINI256, af256block, af256px)

#define MAXB_INIT512 VMOVDQU8.Z (DI), K1, Z0
#define MAXB_FINI512 VMOVDQU8 Z0, K1, (DI)
#define MAXUB_PIXEL512 \
	VMOVDQU8.Z (R10), K1, Z1; \
	VPMAXUB    Z1, Z0, Z0
#define MAXSB_PIXEL512 \
	VMOVDQU8.Z (R10), K1, Z1; \
	VPMAXSB    Z1, Z0, Z0

// func maxU8AVX512(acc, src *uint8, w, stride, npx int)
TEXT ·maxU8AVX512(SB), NOSPLIT, $0-40
	ARGS(0)
	ROWS(64, 64, 64, MASKED, MAXB_INIT512, MAXUB_PIXEL512, MAXB_FINI512, mu512block, mu512px)

// func maxI8AVX512(acc, src *uint8, w, stride, npx int)
TEXT ·maxI8AVX512(SB), NOSPLIT, $0-40
	ARGS(0)
	ROWS(64, 64, 64, MASKED, MAXB_INIT512, MAXSB_PIXEL512, MAXB_FINI512, ms512block, ms512px)

#define MAXB_INIT256 VMOVDQU (DI), Y0
#define MAXB_FINI256 VMOVDQU Y0, (DI)
#define MAXUB_PIXEL256 VPMAXUB (R10), Y0, Y0
#define MAXSB_PIXEL256 VPMAXSB (R10), Y0, Y0

// func maxU8AVX2(acc, src *uint8, w, stride, npx int)
TEXT ·maxU8AVX2(SB), NOSPLIT, $0-40
	ARGS(0)
	ROWS(32, 32, 32, WHOLE, MAXB_INIT256, MAXUB_PIXEL256, MAXB_FINI256, mu256block, mu256px)

// func maxI8AVX2(acc, src *uint8, w, stride, npx int)
TEXT ·maxI8AVX2(SB), NOSPLIT, $0-40
	ARGS(0)
	ROWS(32, 32, 32, WHOLE, MAXB_INIT256, MAXSB_PIXEL256, MAXB_FINI256, ms256block, ms256px)

#define ADDB_INIT512 VMOVDQU16.Z (DI), K1, Z0
#define ADDB_PIXEL512 \
	VMOVDQU8.Z (R10), K1, Y1; \
	VPXOR      Y15, Y1, Y1; \
	VPMOVZXBW  Y1, Z1; \
	VPADDW     Z1, Z0, Z0
#define ADDB_FINI512 VMOVDQU16 Z0, K1, (DI)

// func addU8AVX512(acc *uint16, src *uint8, w, stride, npx int, flip byte)
TEXT ·addU8AVX512(SB), NOSPLIT, $0-41
	ARGS(0)
	FLIP
	ROWS(32, 64, 32, MASKED, ADDB_INIT512, ADDB_PIXEL512, ADDB_FINI512, ab512block, ab512px)

#define ADDB_INIT256 VMOVDQU (DI), Y0
#define ADDB_PIXEL256 \
	VPXOR     (R10), X15, X1; \
	VPMOVZXBW X1, Y1; \
	VPADDW    Y1, Y0, Y0
#define ADDB_FINI256 VMOVDQU Y0, (DI)

// func addU8AVX2(acc *uint16, src *uint8, w, stride, npx int, flip byte)
TEXT ·addU8AVX2(SB), NOSPLIT, $0-41
	ARGS(0)
	FLIP
	ROWS(16, 32, 16, WHOLE, ADDB_INIT256, ADDB_PIXEL256, ADDB_FINI256, ab256block, ab256px)
