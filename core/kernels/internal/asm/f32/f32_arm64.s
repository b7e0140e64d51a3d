//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// The float micro-kernels of f32.go in arm64 NEON (Advanced
// SIMD). Each output lane is one chain of fused multiply-adds (FMLA) in k
// (or tap) order from zero (or the bias), then the bias, then FMAX with lo
// and FMIN with hi, which give NaN when either operand is NaN, as Go's max
// and min do. The instructions Go's assembler lacks are neon_arm64.h's
// WORDs, their operands vector register numbers.

// CLAMP1(v, lo, hi) clamps Vv to [Vlo, Vhi].
#define CLAMP1(v, lo, hi) \
	FMAX_4S(v, v, lo); \
	FMIN_4S(v, v, hi)

// OUT4(v, b, lo, hi) adds V(b)..V(b+3) to V(v)..V(v+3) and clamps them to
// [Vlo, Vhi].
#define OUT4(v, b, lo, hi) \
	FADD_4S(v, v, b); \
	FADD_4S(v+1, v+1, b+1); \
	FADD_4S(v+2, v+2, b+2); \
	FADD_4S(v+3, v+3, b+3); \
	CLAMP1(v, lo, hi); \
	CLAMP1(v+1, lo, hi); \
	CLAMP1(v+2, lo, hi); \
	CLAMP1(v+3, lo, hi)

// ZERO4 clears four vector registers.
#define ZERO4(v0, v1, v2, v3) \
	VEOR v0.B16, v0.B16, v0.B16; \
	VEOR v1.B16, v1.B16, v1.B16; \
	VEOR v2.B16, v2.B16, v2.B16; \
	VEOR v3.B16, v3.B16, v3.B16

// DUPARG loads the float32 argument arg into every lane of Vv (Fv is its
// low lane).
#define DUPARG(arg, f, v) \
	FMOVS arg, f; \
	VDUP  v.S[0], v.S4

// ---------------------------------------------------------------- tile

// TROW(r, m, i) accumulates row r of a 6x16 tile, V(4r)..V(4r+3), from the
// weights V24..V27 and its input, lane i of Vm.
#define TROW(r, m, i) \
	FMLA_4S_S(4*(r), 24, m, i); \
	FMLA_4S_S(4*(r)+1, 25, m, i); \
	FMLA_4S_S(4*(r)+2, 26, m, i); \
	FMLA_4S_S(4*(r)+3, 27, m, i)

// TZERO clears a tile's 24 accumulators, V0..V23.
#define TZERO \
	ZERO4(V0, V1, V2, V3); \
	ZERO4(V4, V5, V6, V7); \
	ZERO4(V8, V9, V10, V11); \
	ZERO4(V12, V13, V14, V15); \
	ZERO4(V16, V17, V18, V19); \
	ZERO4(V20, V21, V22, V23)

// TSTORE adds the bias at bias to a tile's six rows, clamps them to
// [lo, hi] and stores them ldc floats apart from c (the operands name the
// function's arguments).
#define TSTORE(bias, c, ldc, lo, hi) \
	MOVD bias, R3; \
	MOVD c, R4; \
	MOVD ldc, R5; \
	LSL  $2, R5; \
	VLD1 (R3), [V24.S4, V25.S4, V26.S4, V27.S4]; \
	DUPARG(lo, F28, V28); \
	DUPARG(hi, F29, V29); \
	OUT4(0, 24, 28, 29); \
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], (R4)(R5); \
	OUT4(4, 24, 28, 29); \
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], (R4)(R5); \
	OUT4(8, 24, 28, 29); \
	VST1.P [V8.S4, V9.S4, V10.S4, V11.S4], (R4)(R5); \
	OUT4(12, 24, 28, 29); \
	VST1.P [V12.S4, V13.S4, V14.S4, V15.S4], (R4)(R5); \
	OUT4(16, 24, 28, 29); \
	VST1.P [V16.S4, V17.S4, V18.S4, V19.S4], (R4)(R5); \
	OUT4(20, 24, 28, 29); \
	VST1   [V20.S4, V21.S4, V22.S4, V23.S4], (R4)

// func fTileNEON(k int, a, b, bias, c *float32, ldc int, lo, hi float32)
//
// Row r's 16 sums are V(4r)..V(4r+3); each k loads 16 weights (V24..V27)
// and 6 inputs (two lanes each of V28..V30) and issues 24 FMLAs, 96
// multiply-adds: about 4.4 per loaded float, 24 FMLAs per 2 loads.
TEXT ·fTileNEON(SB), NOSPLIT, $0-56
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	TZERO
	CMP  $1, R0
	BLT  store

loop:
	VLD1.P 24(R1), [V28.S2, V29.S2, V30.S2]
	VLD1.P 64(R2), [V24.S4, V25.S4, V26.S4, V27.S4]
	TROW(0, 28, 0)
	TROW(1, 28, 1)
	TROW(2, 29, 0)
	TROW(3, 29, 1)
	TROW(4, 30, 0)
	TROW(5, 30, 1)
	SUBS   $1, R0
	BNE    loop

store:
	TSTORE(bias+24(FP), c+32(FP), ldc+40(FP), lo+48(FP), hi+52(FP))
	RET

// func fTileRowsNEON(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)
//
// fTileNEON with row r of a at a+r*lda floats (rows read in place): each k
// loads the six rows' values from R1 and R6-R10, four then two, into the
// low lanes of V28..V31.
TEXT ·fTileRowsNEON(SB), NOSPLIT, $0-64
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD lda+16(FP), R3
	MOVD b+24(FP), R2
	LSL  $2, R3
	ADD  R3, R1, R6
	ADD  R3, R6, R7
	ADD  R3, R7, R8
	ADD  R3, R8, R9
	ADD  R3, R9, R10
	TZERO
	CMP  $1, R0
	BLT  rstore

rloop:
	VLD1.P  64(R2), [V24.S4, V25.S4, V26.S4, V27.S4]
	FMOVS.P 4(R1), F28
	FMOVS.P 4(R6), F29
	FMOVS.P 4(R7), F30
	FMOVS.P 4(R8), F31
	TROW(0, 28, 0)
	TROW(1, 29, 0)
	TROW(2, 30, 0)
	TROW(3, 31, 0)
	FMOVS.P 4(R9), F28
	FMOVS.P 4(R10), F29
	TROW(4, 28, 0)
	TROW(5, 29, 0)
	SUBS    $1, R0
	BNE     rloop

rstore:
	TSTORE(bias+32(FP), c+40(FP), ldc+48(FP), lo+56(FP), hi+60(FP))
	RET

// ---------------------------------------------------------------- rows

// RFMA4 accumulates one panel's 16 weights, w0..w3, times V16 into
// a0..a3.
#define RFMA4(w0, w1, w2, w3, a0, a1, a2, a3) \
	VFMLA w0.S4, V16.S4, a0.S4; \
	VFMLA w1.S4, V16.S4, a1.S4; \
	VFMLA w2.S4, V16.S4, a2.S4; \
	VFMLA w3.S4, V16.S4, a3.S4

// func fRow4NEON(k int, a, b, bias, c *float32, ldb int, lo, hi float32)
//
// Panel q's 16 sums are V(4q)..V(4q+3), its weights read through R2..R5.
TEXT ·fRow4NEON(SB), NOSPLIT, $0-56
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	MOVD ldb+40(FP), R6
	LSL  $2, R6
	ADD  R6, R2, R3
	ADD  R6, R3, R4
	ADD  R6, R4, R5
	ZERO4(V0, V1, V2, V3)
	ZERO4(V4, V5, V6, V7)
	ZERO4(V8, V9, V10, V11)
	ZERO4(V12, V13, V14, V15)
	CMP  $1, R0
	BLT  store

loop:
	VLD1R.P 4(R1), [V16.S4]
	VLD1.P  64(R2), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P  64(R3), [V24.S4, V25.S4, V26.S4, V27.S4]
	RFMA4(V20, V21, V22, V23, V0, V1, V2, V3)
	RFMA4(V24, V25, V26, V27, V4, V5, V6, V7)
	VLD1.P  64(R4), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P  64(R5), [V24.S4, V25.S4, V26.S4, V27.S4]
	RFMA4(V20, V21, V22, V23, V8, V9, V10, V11)
	RFMA4(V24, V25, V26, V27, V12, V13, V14, V15)
	SUBS    $1, R0
	BNE     loop

store:
	MOVD   bias+24(FP), R7
	MOVD   c+32(FP), R8
	DUPARG(lo+48(FP), F30, V30)
	DUPARG(hi+52(FP), F31, V31)
	VLD1.P 64(R7), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1.P 64(R7), [V24.S4, V25.S4, V26.S4, V27.S4]
	OUT4(0, 20, 30, 31)
	OUT4(4, 24, 30, 31)
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R8)
	VST1.P [V4.S4, V5.S4, V6.S4, V7.S4], 64(R8)
	VLD1.P 64(R7), [V20.S4, V21.S4, V22.S4, V23.S4]
	VLD1   (R7), [V24.S4, V25.S4, V26.S4, V27.S4]
	OUT4(8, 20, 30, 31)
	OUT4(12, 24, 30, 31)
	VST1.P [V8.S4, V9.S4, V10.S4, V11.S4], 64(R8)
	VST1   [V12.S4, V13.S4, V14.S4, V15.S4], (R8)
	RET

// func fRow1NEON(k int, a, b, bias, c *float32, lo, hi float32)
TEXT ·fRow1NEON(SB), NOSPLIT, $0-48
	MOVD k+0(FP), R0
	MOVD a+8(FP), R1
	MOVD b+16(FP), R2
	ZERO4(V0, V1, V2, V3)
	CMP  $1, R0
	BLT  store

loop:
	VLD1R.P 4(R1), [V16.S4]
	VLD1.P  64(R2), [V20.S4, V21.S4, V22.S4, V23.S4]
	RFMA4(V20, V21, V22, V23, V0, V1, V2, V3)
	SUBS    $1, R0
	BNE     loop

store:
	MOVD bias+24(FP), R7
	MOVD c+32(FP), R8
	DUPARG(lo+40(FP), F30, V30)
	DUPARG(hi+44(FP), F31, V31)
	VLD1 (R7), [V20.S4, V21.S4, V22.S4, V23.S4]
	OUT4(0, 20, 30, 31)
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R8)
	RET

// ---------------------------------------------------------------- depthwise

// DWTAPS starts a tap loop: R19 and R20 walk xoff and woff, R14 counts the
// taps; with none it jumps to end.
#define DWTAPS(end) \
	MOVD R6, R19; \
	MOVD R7, R20; \
	MOVD R8, R14; \
	CMP  $1, R14; \
	BLT  end

// DWTAP points R15 at the tap's input and R16 at its weights, for the
// current channel, and steps to the next tap.
#define DWTAP \
	MOVD.P 8(R19), R15; \
	MOVD.P 8(R20), R16; \
	ADD    R15<<2, R11, R15; \
	ADD    R16<<2, R12, R16

// func dwFloatNEON(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
//
// Channels go 16, then 4, then 1 at a time. Registers: R0 c, R1 pixels
// left, R2 out, R3 bias, R4 the pixel's input, R5 w, R6/R7 xoff/woff, R8
// ntaps, R9 xstep in bytes; in a pixel, R10 channels left and R11, R12,
// R13 the input, w and bias at the current channel; V30/V31 lo and hi.
TEXT ·dwFloatNEON(SB), NOSPLIT, $0-88
	MOVD c+0(FP), R0
	MOVD npix+8(FP), R1
	MOVD out+16(FP), R2
	MOVD bias+24(FP), R3
	MOVD in+32(FP), R4
	MOVD w+40(FP), R5
	MOVD xoff+48(FP), R6
	MOVD woff+56(FP), R7
	MOVD ntaps+64(FP), R8
	MOVD xstep+72(FP), R9
	LSL  $2, R9
	DUPARG(lo+80(FP), F30, V30)
	DUPARG(hi+84(FP), F31, V31)
	CMP  $1, R0
	BLT  done
	CMP  $1, R1
	BLT  done

pixel:
	MOVD R0, R10
	MOVD R4, R11
	MOVD R5, R12
	MOVD R3, R13

chunk16:
	CMP    $16, R10
	BLT    chunk4
	VLD1.P 64(R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	DWTAPS(store16)

taps16:
	DWTAP
	VLD1  (R15), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1  (R16), [V20.S4, V21.S4, V22.S4, V23.S4]
	VFMLA V20.S4, V16.S4, V0.S4
	VFMLA V21.S4, V17.S4, V1.S4
	VFMLA V22.S4, V18.S4, V2.S4
	VFMLA V23.S4, V19.S4, V3.S4
	SUBS  $1, R14
	BNE   taps16

store16:
	CLAMP1(0, 30, 31)
	CLAMP1(1, 30, 31)
	CLAMP1(2, 30, 31)
	CLAMP1(3, 30, 31)
	VST1.P [V0.S4, V1.S4, V2.S4, V3.S4], 64(R2)
	ADD    $64, R11
	ADD    $64, R12
	SUB    $16, R10
	B      chunk16

chunk4:
	CMP    $4, R10
	BLT    tail
	VLD1.P 16(R13), [V0.S4]
	DWTAPS(store4)

taps4:
	DWTAP
	VLD1  (R15), [V16.S4]
	VLD1  (R16), [V20.S4]
	VFMLA V20.S4, V16.S4, V0.S4
	SUBS  $1, R14
	BNE   taps4

store4:
	CLAMP1(0, 30, 31)
	VST1.P [V0.S4], 16(R2)
	ADD    $16, R11
	ADD    $16, R12
	SUB    $4, R10
	B      chunk4

tail:
	CBZ     R10, next
	FMOVS.P 4(R13), F0
	DWTAPS(storetail)

tapstail:
	DWTAP
	FMOVS  (R15), F16
	FMOVS  (R16), F20
	FMADDS F20, F0, F16, F0
	SUBS   $1, R14
	BNE    tapstail

storetail:
	FMAXS   F30, F0, F0
	FMINS   F31, F0, F0
	FMOVS.P F0, 4(R2)
	ADD     $4, R11
	ADD     $4, R12
	SUB     $1, R10
	B       tail

next:
	ADD  R9, R4
	SUBS $1, R1
	BNE  pixel

done:
	RET
