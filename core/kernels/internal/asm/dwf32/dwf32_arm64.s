//go:build !purego

#include "textflag.h"
#include "neon_arm64.h"

// The kernel of Pixels in NEON. The pixels go in blocks of 4, then one
// at a time; in a block the channels 16, then 4, then 1 at a time, each
// pixel's sums started from the bias and given one fused multiply-add
// (FMLA, or FMADD for a single channel) per tap, in tap order, with the
// tap's weights loaded once for the block. The clamp is FMAX with lo,
// then FMIN with hi, which give NaN when either operand is NaN, as Go's
// max and min do.
//
// Registers: R0 c, R1 pixels left, R2 the block's output, R3 bias, R4
// the block's input, R5 w, R6/R7 xoff/woff, R8 ntaps, R9 the input's
// pixel step in bytes (xstep*4), R21 the output's (c*4); in a block R10
// channels left and R11, R12, R13, R17 the input, w, bias and output at
// the current channel; in a tap loop R19/R20 the next tap's offsets, R14
// taps left, R15 the tap's input, R16 its weights. V30/V31 lo and hi.

// CLAMP1(v) clamps Vv to [V30, V31].
#define CLAMP1(v) \
	FMAX_4S(v, v, 30); \
	FMIN_4S(v, v, 31)

// CLAMP4(v) clamps V(v)..V(v+3).
#define CLAMP4(v) \
	CLAMP1(v); \
	CLAMP1(v+1); \
	CLAMP1(v+2); \
	CLAMP1(v+3)

// DUPARG loads the float32 argument arg into every lane of v (f is v's
// scalar name).
#define DUPARG(arg, f, v) \
	FMOVS arg, f; \
	VDUP  v.S[0], v.S4

// TAPS starts a tap loop, going to end when there is no tap.
#define TAPS(end) \
	MOVD R6, R19; \
	MOVD R7, R20; \
	MOVD R8, R14; \
	CMP  $1, R14; \
	BLT  end

// TAP points R15 at the tap's input and R16 at its weights, for the
// current channel, and steps to the next tap.
#define TAP \
	MOVD.P 8(R19), R15; \
	MOVD.P 8(R20), R16; \
	ADD    R15<<2, R11, R15; \
	ADD    R16<<2, R12, R16

// FMLA16(a, x) accumulates the 16 channels of input pixel R15 into
// V(a)..V(a+3) with the weights V16..V19, loading them into V(x)..V(x+3),
// and steps R15 to the next pixel.
#define FMLA16(a0, a1, a2, a3, x0, x1, x2, x3) \
	VLD1  (R15), [x0.S4, x1.S4, x2.S4, x3.S4]; \
	VFMLA V16.S4, x0.S4, a0.S4; \
	VFMLA V17.S4, x1.S4, a1.S4; \
	VFMLA V18.S4, x2.S4, a2.S4; \
	VFMLA V19.S4, x3.S4, a3.S4; \
	ADD   R9, R15

// FMLA4(a, x) is FMLA16 for 4 channels, the weights in V16.
#define FMLA4(a, x) \
	VLD1  (R15), [x.S4]; \
	VFMLA V16.S4, x.S4, a.S4; \
	ADD   R9, R15

// FMADD1(a, x) is FMLA16 for one channel, the weight in F16.
#define FMADD1(a, x) \
	FMOVS  (R15), x; \
	FMADDS F16, a, x, a; \
	ADD    R9, R15

// OUT1 clamps the single channel a to [F30, F31] and stores it at R22,
// stepping R22 to the next pixel.
#define OUT1(a) \
	FMAXS F30, a, a; \
	FMINS F31, a, a; \
	FMOVS a, (R22); \
	ADD   R21, R22

// NEXTCH steps the channel pointers by n channels.
#define NEXTCH(n) \
	ADD $(4*(n)), R11; \
	ADD $(4*(n)), R12; \
	ADD $(4*(n)), R13; \
	ADD $(4*(n)), R17; \
	SUB $(n), R10

// BLOCK starts the channels of a block.
#define BLOCK \
	MOVD R0, R10; \
	MOVD R4, R11; \
	MOVD R5, R12; \
	MOVD R3, R13; \
	MOVD R2, R17

// func pixelsNEON(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
TEXT ·pixelsNEON(SB), NOSPLIT, $0-88
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
	LSL  $2, R0, R21
	DUPARG(lo+80(FP), F30, V30)
	DUPARG(hi+84(FP), F31, V31)

block4:
	CMP $4, R1
	BLT block1
	BLOCK

b4c16:
	CMP  $16, R10
	BLT  b4c4
	VLD1 (R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	VLD1 (R13), [V4.S4, V5.S4, V6.S4, V7.S4]
	VLD1 (R13), [V8.S4, V9.S4, V10.S4, V11.S4]
	VLD1 (R13), [V12.S4, V13.S4, V14.S4, V15.S4]
	TAPS(b4c16out)

b4c16tap:
	TAP
	VLD1 (R16), [V16.S4, V17.S4, V18.S4, V19.S4]
	FMLA16(V0, V1, V2, V3, V20, V21, V22, V23)
	FMLA16(V4, V5, V6, V7, V24, V25, V26, V27)
	FMLA16(V8, V9, V10, V11, V20, V21, V22, V23)
	FMLA16(V12, V13, V14, V15, V24, V25, V26, V27)
	SUBS $1, R14
	BNE  b4c16tap

b4c16out:
	CLAMP4(0)
	CLAMP4(4)
	CLAMP4(8)
	CLAMP4(12)
	MOVD R17, R22
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R22)
	ADD  R21, R22
	VST1 [V4.S4, V5.S4, V6.S4, V7.S4], (R22)
	ADD  R21, R22
	VST1 [V8.S4, V9.S4, V10.S4, V11.S4], (R22)
	ADD  R21, R22
	VST1 [V12.S4, V13.S4, V14.S4, V15.S4], (R22)
	NEXTCH(16)
	B    b4c16

b4c4:
	CMP  $4, R10
	BLT  b4c1
	VLD1 (R13), [V0.S4]
	VLD1 (R13), [V1.S4]
	VLD1 (R13), [V2.S4]
	VLD1 (R13), [V3.S4]
	TAPS(b4c4out)

b4c4tap:
	TAP
	VLD1 (R16), [V16.S4]
	FMLA4(V0, V20)
	FMLA4(V1, V21)
	FMLA4(V2, V22)
	FMLA4(V3, V23)
	SUBS $1, R14
	BNE  b4c4tap

b4c4out:
	CLAMP4(0)
	MOVD R17, R22
	VST1 [V0.S4], (R22)
	ADD  R21, R22
	VST1 [V1.S4], (R22)
	ADD  R21, R22
	VST1 [V2.S4], (R22)
	ADD  R21, R22
	VST1 [V3.S4], (R22)
	NEXTCH(4)
	B    b4c4

b4c1:
	CBZ   R10, b4next
	FMOVS (R13), F0
	FMOVS (R13), F1
	FMOVS (R13), F2
	FMOVS (R13), F3
	TAPS(b4c1out)

b4c1tap:
	TAP
	FMOVS (R16), F16
	FMADD1(F0, F20)
	FMADD1(F1, F21)
	FMADD1(F2, F22)
	FMADD1(F3, F23)
	SUBS  $1, R14
	BNE   b4c1tap

b4c1out:
	MOVD R17, R22
	OUT1(F0)
	OUT1(F1)
	OUT1(F2)
	OUT1(F3)
	NEXTCH(1)
	B    b4c1

b4next:
	ADD R9<<2, R4
	ADD R21<<2, R2
	SUB $4, R1
	B   block4

block1:
	CBZ R1, done
	BLOCK

b1c16:
	CMP  $16, R10
	BLT  b1c4
	VLD1 (R13), [V0.S4, V1.S4, V2.S4, V3.S4]
	TAPS(b1c16out)

b1c16tap:
	TAP
	VLD1 (R16), [V16.S4, V17.S4, V18.S4, V19.S4]
	FMLA16(V0, V1, V2, V3, V20, V21, V22, V23)
	SUBS $1, R14
	BNE  b1c16tap

b1c16out:
	CLAMP4(0)
	VST1 [V0.S4, V1.S4, V2.S4, V3.S4], (R17)
	NEXTCH(16)
	B    b1c16

b1c4:
	CMP  $4, R10
	BLT  b1c1
	VLD1 (R13), [V0.S4]
	TAPS(b1c4out)

b1c4tap:
	TAP
	VLD1 (R16), [V16.S4]
	FMLA4(V0, V20)
	SUBS $1, R14
	BNE  b1c4tap

b1c4out:
	CLAMP1(0)
	VST1 [V0.S4], (R17)
	NEXTCH(4)
	B    b1c4

b1c1:
	CBZ   R10, b1next
	FMOVS (R13), F0
	TAPS(b1c1out)

b1c1tap:
	TAP
	FMOVS (R16), F16
	FMADD1(F0, F20)
	SUBS  $1, R14
	BNE   b1c1tap

b1c1out:
	MOVD R17, R22
	OUT1(F0)
	NEXTCH(1)
	B    b1c1

b1next:
	ADD R9, R4
	ADD R21, R2
	SUB $1, R1
	B   block1

done:
	RET
