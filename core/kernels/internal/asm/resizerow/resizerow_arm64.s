//go:build !purego

#include "textflag.h"
#include "args.h"
#include "neon_arm64.h"

// CORNER loads the 16 bytes at off from corner p and widens them to four
// vectors of floats, V3-V6. Clobbers R12, V0-V2.
#define CORNER(p, off) \
	ADD  off, p, R12; \
	VLD1 (R12), [V0.B16]; \
	UXTL_8H(1, 0); \
	UXTL2_8H(2, 0); \
	UXTL_4S(3, 1); \
	UXTL2_4S(4, 1); \
	UXTL_4S(5, 2); \
	UXTL2_4S(6, 2); \
	UCVTF_4S(3, 3); \
	UCVTF_4S(4, 4); \
	UCVTF_4S(5, 5); \
	UCVTF_4S(6, 6)

// ADDCORNER adds corner p's 16 channels at off, times the weight in lane 0
// of Vw, to the sums V16-V19. Clobbers R12, V0-V6.
#define ADDCORNER(p, off, w) \
	CORNER(p, off); \
	FMUL_4S_S0(3, 3, w); \
	FMUL_4S_S0(4, 4, w); \
	FMUL_4S_S0(5, 5, w); \
	FMUL_4S_S0(6, 6, w); \
	FADD_4S(16, 16, 3); \
	FADD_4S(17, 17, 4); \
	FADD_4S(18, 18, 5); \
	FADD_4S(19, 19, 6)

// CORNERS interpolates the 16 channels at byte offset off of the four
// corners (R19, R20 on the top row; R21, R22 on the bottom one) with the
// weights in lane 0 of V24-V27, in TFLite's order: ((p0*w0 + p1*w1) +
// p2*w2) + p3*w3, then +0.5 (V31), truncated to an int32 and to its low
// byte, and stores the 16 bytes at off in the output pixel (R7).
#define CORNERS(off) \
	CORNER(R19, off); \
	FMUL_4S_S0(16, 3, 24); \
	FMUL_4S_S0(17, 4, 24); \
	FMUL_4S_S0(18, 5, 24); \
	FMUL_4S_S0(19, 6, 24); \
	ADDCORNER(R20, off, 25); \
	ADDCORNER(R21, off, 26); \
	ADDCORNER(R22, off, 27); \
	FADD_4S(16, 16, 31); \
	FADD_4S(17, 17, 31); \
	FADD_4S(18, 18, 31); \
	FADD_4S(19, 19, 31); \
	FCVTZS_4S(16, 16); \
	FCVTZS_4S(17, 17); \
	FCVTZS_4S(18, 18); \
	FCVTZS_4S(19, 19); \
	XTN_4H(28, 16); \
	XTN2_8H(28, 17); \
	XTN_4H(29, 18); \
	XTN2_8H(29, 19); \
	XTN_8B(30, 28); \
	XTN2_16B(30, 29); \
	ADD  off, R7, R12; \
	VST1 [V30.B16], (R12)

// func resizeRowU8NEON(a *Args)
// Needs a.C >= 16: channels after the whole blocks of 16 are done as the
// block of the pixel's last 16, which writes some bytes twice, alike.
TEXT ·resizeRowU8NEON(SB), NOSPLIT, $0-8
	MOVD a+0(FP), R0
	MOVD RA_N(R0), R8
	CBZ  R8, done
	MOVD RA_TOP(R0), R1
	MOVD RA_BOT(R0), R2
	MOVD RA_X0(R0), R3
	MOVD RA_X1(R0), R4
	MOVD RA_OMX(R0), R5
	MOVD RA_DX(R0), R6
	MOVD RA_DST(R0), R7
	MOVD RA_C(R0), R9
	MOVD RA_FULL(R0), R10
	MOVD RA_TAIL(R0), R11
	FMOVS RA_WY(R0), F20   // 1-dy
	FMOVS RA_WY+4(R0), F21 // dy
	MOVW $0x3f000000, R12  // 0.5
	VDUP R12, V31.S4

col:
	FMOVS (R5), F22        // 1-dx
	FMOVS (R6), F23        // dx
	FMULS F22, F20, F24    // w0 = (1-dy)(1-dx)
	FMULS F23, F20, F25    // w1 = (1-dy)dx
	FMULS F22, F21, F26    // w2 = dy(1-dx)
	FMULS F23, F21, F27    // w3 = dy dx
	MOVW (R3), R12
	MOVW (R4), R13
	ADD  R12, R1, R19
	ADD  R13, R1, R20
	ADD  R12, R2, R21
	ADD  R13, R2, R22
	MOVD ZR, R14

full:
	CMP R10, R14
	BGE tail
	CORNERS(R14)
	ADD $16, R14
	B   full

tail:
	CBZ R11, next
	SUB $16, R9, R14
	CORNERS(R14)

next:
	ADD  R9, R7
	ADD  $4, R3
	ADD  $4, R4
	ADD  $4, R5
	ADD  $4, R6
	SUBS $1, R8
	BNE  col

done:
	RET
