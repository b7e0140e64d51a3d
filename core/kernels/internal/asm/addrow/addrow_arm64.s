//go:build !purego

#include "textflag.h"
#include "args.h"
#include "neon_arm64.h"

// MULSHIFT is mulShift on the four lanes of v, in place, with the
// multiplier in Vm and the negated right shift in Vs: SQRDMULH is the
// rounding doubling high multiply, and gemmlowp's NEON rounding right
// shift (minus one for a negative value, then SRSHL, which rounds half
// up) rounds half away from zero. Clobbers V12.
#define MULSHIFT(v, m, s) \
	SQRDMULH_4S(v, v, m); \
	AND_16B(12, v, s); \
	SSHR31_4S(12, 12); \
	SQADD_4S(v, v, 12); \
	SRSHL_4S(v, v, s)

// INPUT rescales the four int32 lanes of v of an input: its offset (Vo)
// added, shifted left by V25, MULSHIFT with Vm and Vs.
#define INPUT(v, o, m, s) \
	ADD_4S(v, v, o); \
	SSHL_4S(v, v, 25); \
	MULSHIFT(v, m, s)

// WIDEN widens the 16 bytes of Vb to four vectors of int32, Vq to Vq+3,
// with XTL8 and XTL8_2 (UXTL or SXTL) to 16 bits. Clobbers V2, V3.
#define WIDEN(b, q, XTL8, XTL8_2) \
	XTL8(2, b); \
	XTL8_2(3, b); \
	SXTL_4S(q, 2); \
	SXTL2_4S(q+1, 2); \
	SXTL_4S(q+2, 3); \
	SXTL2_4S(q+3, 3)

// OUTPUT rescales the sum in v to the output: MULSHIFT with V23 and V24,
// the zero point (V22) added, clamped to [V26, V27].
#define OUTPUT(v) \
	MULSHIFT(v, 23, 24); \
	ADD_4S(v, v, 22); \
	SMAX_4S(v, v, 26); \
	SMIN_4S(v, v, 27)

// ROW runs the row, 16 elements a round: XTL8 and XTL8_2 widen the
// inputs, COMBINE (ADD_4S or SUB_4S) joins the two rescaled terms.
#define ROW(XTL8, XTL8_2, COMBINE, loop) \
loop: \
	VLD1.P 16(R1), [V0.B16]; \
	VLD1.P 16(R2), [V1.B16]; \
	WIDEN(0, 4, XTL8, XTL8_2); \
	WIDEN(1, 8, XTL8, XTL8_2); \
	INPUT(4, 16, 17, 18); \
	INPUT(5, 16, 17, 18); \
	INPUT(6, 16, 17, 18); \
	INPUT(7, 16, 17, 18); \
	INPUT(8, 19, 20, 21); \
	INPUT(9, 19, 20, 21); \
	INPUT(10, 19, 20, 21); \
	INPUT(11, 19, 20, 21); \
	COMBINE(4, 4, 8); \
	COMBINE(5, 5, 9); \
	COMBINE(6, 6, 10); \
	COMBINE(7, 7, 11); \
	STORE(loop)

// STORE rescales the 16 int32 lanes of V4-V7 to the output, narrows
// and stores them, and loops to loop for the row's next 16 elements.
#define STORE(loop) \
	OUTPUT(4); \
	OUTPUT(5); \
	OUTPUT(6); \
	OUTPUT(7); \
	XTN_4H(28, 4); \
	XTN2_8H(28, 5); \
	XTN_4H(29, 6); \
	XTN2_8H(29, 7); \
	XTN_8B(30, 28); \
	XTN2_16B(30, 29); \
	VST1.P [V30.B16], 16(R3); \
	SUBS $16, R4; \
	BNE  loop; \
	RET

// PRODUCT is the MUL of the four int32 lanes of Vx and Vy into Vx: each
// input's offset (V16, V19) added, the product shifted left by V25.
#define PRODUCT(x, y) \
	ADD_4S(x, x, 16); \
	ADD_4S(y, y, 19); \
	MUL_4S(x, x, y); \
	SSHL_4S(x, x, 25)

// MULROW is ROW for MUL.
#define MULROW(XTL8, XTL8_2, loop) \
loop: \
	VLD1.P 16(R1), [V0.B16]; \
	VLD1.P 16(R2), [V1.B16]; \
	WIDEN(0, 4, XTL8, XTL8_2); \
	WIDEN(1, 8, XTL8, XTL8_2); \
	PRODUCT(4, 8); \
	PRODUCT(5, 9); \
	PRODUCT(6, 10); \
	PRODUCT(7, 11); \
	STORE(loop)

// TERM broadcasts the Term at off: its offset to Vo, its multiplier to
// Vm and its negated right shift to Vs.
#define TERM(off, o, m, s) \
	MOVW off+T_OFF(R0), R5; \
	VDUP R5, o.S4; \
	MOVW off+T_MUL(R0), R5; \
	VDUP R5, m.S4; \
	MOVW off+T_RS(R0), R5; \
	NEG  R5, R5; \
	VDUP R5, s.S4

// SETUP loads the arguments of the *Args in R0 into the registers ROW
// and MULROW read, a.Signed into R5.
#define SETUP \
	MOVD AR_X(R0), R1; \
	MOVD AR_Y(R0), R2; \
	MOVD AR_Z(R0), R3; \
	TERM(AR_T1, V16, V17, V18); \
	TERM(AR_T2, V19, V20, V21); \
	TERM(AR_TO, V22, V23, V24); \
	MOVW AR_LS(R0), R5; \
	VDUP R5, V25.S4; \
	MOVW AR_LO(R0), R5; \
	VDUP R5, V26.S4; \
	MOVW AR_HI(R0), R5; \
	VDUP R5, V27.S4; \
	MOVW AR_SIGNED(R0), R5

// func addRowNEON(a *Args)
TEXT ·addRowNEON(SB), NOSPLIT, $0-8
	MOVD a+0(FP), R0
	MOVD AR_N(R0), R4
	CBZ  R4, done
	SETUP
	MOVW AR_NEG+0(R0), R6
	CBNZ R5, signed
	CBNZ R6, usub
	ROW(UXTL_8H, UXTL2_8H, ADD_4S, uadd)
usub:
	ROW(UXTL_8H, UXTL2_8H, SUB_4S, usubloop)
signed:
	CBNZ R6, ssub
	ROW(SXTL_8H, SXTL2_8H, ADD_4S, sadd)
ssub:
	ROW(SXTL_8H, SXTL2_8H, SUB_4S, ssubloop)

done:
	RET

// func mulRowNEON(a *Args)
TEXT ·mulRowNEON(SB), NOSPLIT, $0-8
	MOVD a+0(FP), R0
	MOVD AR_N(R0), R4
	CBZ  R4, mdone
	SETUP
	CBNZ R5, msigned
	MULROW(UXTL_8H, UXTL2_8H, muloop)
msigned:
	MULROW(SXTL_8H, SXTL2_8H, msloop)

mdone:
	RET
