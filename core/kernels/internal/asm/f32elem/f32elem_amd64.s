//go:build !purego

#include "textflag.h"
#include "args.h"

// The element-wise kernels of f32elem.go in AVX-512F and AVX2. Each body
// computes one register of elements in place in x with the operands in
// the order of the twin's comparison: in Go's operand order, VMAXPS b, a, d
// is d = a > b ? a : b and VMINPS b, a, d is d = a < b ? a : b, the NaN
// going to b in both, as the twin's ternaries do. Additions and products
// are never fused.

#define F32_THREE $0x40400000
#define F32_SIX $0x40c00000
#define F32_SIXTH $0x3e2aaaab // float32(1.0/6.0)

// ---------------------------------------------------------------- AVX-512
//
// Z30 lo, Z31 hi, Z29 alpha, Z28 0, Z27 3, Z26 6, Z25 1/6. A body
// computes x from x (and y), with t and k free.

#define MAXMIN512(x, y, t, k) \
	VMAXPS Z30, x, x; \
	VMINPS Z31, x, x

#define CLAMP512(x, y, t, k) \
	VMAXPS x, Z30, x; \
	VMINPS x, Z31, x

// LEAKY512 multiplies by alpha the lanes that are not > 0 (NGT_UQ).
#define LEAKY512(x, y, t, k) \
	VCMPPS $0x1a, Z28, x, k; \
	VMULPS Z29, x, k, x

#define HARDSWISH512(x, y, t, k) \
	VADDPS Z27, x, t; \
	VMAXPS Z28, t, t; \
	VMINPS Z26, t, t; \
	VMULPS t, x, x; \
	VMULPS Z25, x, x

#define ADD512(x, y, t, k) \
	VADDPS y, x, x; \
	CLAMP512(x, y, t, k)

#define SUB512(x, y, t, k) \
	VSUBPS y, x, x; \
	CLAMP512(x, y, t, k)

#define MUL512(x, y, t, k) \
	VMULPS y, x, x; \
	CLAMP512(x, y, t, k)

#define ADDMM512(x, y, t, k) \
	VADDPS y, x, x; \
	MAXMIN512(x, y, t, k)

#define SUBMM512(x, y, t, k) \
	VSUBPS y, x, x; \
	MAXMIN512(x, y, t, k)

#define MULMM512(x, y, t, k) \
	VMULPS y, x, x; \
	MAXMIN512(x, y, t, k)

#define MAX512(x, y, t, k) VMAXPS y, x, x
#define MIN512(x, y, t, k) VMINPS y, x, x

// PRELU512 multiplies by y the lanes < 0 (LT_OS).
#define PRELU512(x, y, t, k) \
	VCMPPS $0x01, Z28, x, k; \
	VMULPS y, x, k, x

// TAILMASK sets K1 to the low BX bits (BX < 16).
#define TAILMASK \
	MOVQ  BX, CX; \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K1

// LOOP1_512 runs a unary BODY over BX elements from SI to R8: 32 at a
// time, then 16, then the rest under the mask K1.
#define LOOP1_512(BODY, l32, l16, tail) \
l32: \
	CMPQ    BX, $32; \
	JLT     l16; \
	VMOVUPS (SI), Z0; \
	VMOVUPS 64(SI), Z2; \
	BODY(Z0, Z1, Z4, K2); \
	BODY(Z2, Z3, Z5, K3); \
	VMOVUPS Z0, (R8); \
	VMOVUPS Z2, 64(R8); \
	ADDQ    $128, SI; \
	ADDQ    $128, R8; \
	SUBQ    $32, BX; \
	JMP     l32; \
l16: \
	CMPQ    BX, $16; \
	JLT     tail; \
	VMOVUPS (SI), Z0; \
	BODY(Z0, Z1, Z4, K2); \
	VMOVUPS Z0, (R8); \
	ADDQ    $64, SI; \
	ADDQ    $64, R8; \
	SUBQ    $16, BX; \
tail: \
	TESTQ     BX, BX; \
	JZ        done; \
	TAILMASK; \
	VMOVUPS.Z (SI), K1, Z0; \
	BODY(Z0, Z1, Z4, K2); \
	VMOVUPS   Z0, K1, (R8); \
	JMP       done

// LOOP2_512 is LOOP1_512 for a binary BODY, y from DX; R9 and R10 are
// how far x and y advance per 16 elements (64 bytes, or 0 for a
// broadcast operand read from Args.Buf).
#define LOOP2_512(BODY, l32, l16, tail) \
l32: \
	CMPQ    BX, $32; \
	JLT     l16; \
	VMOVUPS (SI), Z0; \
	VMOVUPS (SI)(R9*1), Z2; \
	VMOVUPS (DX), Z1; \
	VMOVUPS (DX)(R10*1), Z3; \
	BODY(Z0, Z1, Z4, K2); \
	BODY(Z2, Z3, Z5, K3); \
	VMOVUPS Z0, (R8); \
	VMOVUPS Z2, 64(R8); \
	LEAQ    (SI)(R9*2), SI; \
	LEAQ    (DX)(R10*2), DX; \
	ADDQ    $128, R8; \
	SUBQ    $32, BX; \
	JMP     l32; \
l16: \
	CMPQ    BX, $16; \
	JLT     tail; \
	VMOVUPS (SI), Z0; \
	VMOVUPS (DX), Z1; \
	BODY(Z0, Z1, Z4, K2); \
	VMOVUPS Z0, (R8); \
	ADDQ    R9, SI; \
	ADDQ    R10, DX; \
	ADDQ    $64, R8; \
	SUBQ    $16, BX; \
tail: \
	TESTQ     BX, BX; \
	JZ        done; \
	TAILMASK; \
	VMOVUPS.Z (SI), K1, Z0; \
	VMOVUPS.Z (DX), K1, Z1; \
	BODY(Z0, Z1, Z4, K2); \
	VMOVUPS   Z0, K1, (R8); \
	JMP       done

// func runAVX512(a *Args)
TEXT ·runAVX512(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), DI
	MOVQ         AR_X(DI), SI
	MOVQ         AR_Y(DI), DX
	MOVQ         AR_Z(DI), R8
	MOVQ         AR_N(DI), BX
	MOVQ         AR_XSTEP(DI), R9
	SHLQ         $6, R9
	MOVQ         AR_YSTEP(DI), R10
	SHLQ         $6, R10
	VBROADCASTSS AR_LO(DI), Z30
	VBROADCASTSS AR_HI(DI), Z31
	VBROADCASTSS AR_ALPHA(DI), Z29
	VPXORD       Z28, Z28, Z28
	MOVL         F32_THREE, AX
	VPBROADCASTD AX, Z27
	MOVL         F32_SIX, AX
	VPBROADCASTD AX, Z26
	MOVL         F32_SIXTH, AX
	VPBROADCASTD AX, Z25
	MOVL         AR_OP(DI), AX
	CMPL         AX, $OP_MAXMIN
	JEQ          maxmin
	CMPL         AX, $OP_CLAMP
	JEQ          clamp
	CMPL         AX, $OP_LEAKY
	JEQ          leaky
	CMPL         AX, $OP_HARDSWISH
	JEQ          hardswish
	CMPL         AX, $OP_ADD
	JEQ          add
	CMPL         AX, $OP_SUB
	JEQ          sub
	CMPL         AX, $OP_MUL
	JEQ          mul
	CMPL         AX, $OP_MAX
	JEQ          max
	CMPL         AX, $OP_MIN
	JEQ          min
	CMPL         AX, $OP_PRELU
	JEQ          prelu
	CMPL         AX, $OP_ADDMAXMIN
	JEQ          addmm
	CMPL         AX, $OP_SUBMAXMIN
	JEQ          submm
	CMPL         AX, $OP_MULMAXMIN
	JEQ          mulmm
	JMP          done

maxmin:
	LOOP1_512(MAXMIN512, mm32, mm16, mmtail)
clamp:
	LOOP1_512(CLAMP512, cl32, cl16, cltail)
leaky:
	LOOP1_512(LEAKY512, lk32, lk16, lktail)
hardswish:
	LOOP1_512(HARDSWISH512, hs32, hs16, hstail)
add:
	LOOP2_512(ADD512, ad32, ad16, adtail)
sub:
	LOOP2_512(SUB512, sb32, sb16, sbtail)
mul:
	LOOP2_512(MUL512, ml32, ml16, mltail)
max:
	LOOP2_512(MAX512, mx32, mx16, mxtail)
min:
	LOOP2_512(MIN512, mn32, mn16, mntail)
prelu:
	LOOP2_512(PRELU512, pr32, pr16, prtail)
addmm:
	LOOP2_512(ADDMM512, am32, am16, amtail)
submm:
	LOOP2_512(SUBMM512, sm32, sm16, smtail)
mulmm:
	LOOP2_512(MULMM512, mm2_32, mm2_16, mm2tail)

done:
	VZEROUPPER
	RET

// ---------------------------------------------------------------- AVX2
//
// Y15 lo, Y14 hi, Y13 alpha, Y12 0, Y11 3, Y10 6, Y9 1/6. A body
// computes x from x (and y), with t free (and y, in a unary body).

#define MAXMIN256(x, y, t) \
	VMAXPS Y15, x, x; \
	VMINPS Y14, x, x

#define CLAMP256(x, y, t) \
	VMAXPS x, Y15, x; \
	VMINPS x, Y14, x

// LEAKY256 keeps the lanes > 0 (GT_OS) and takes x*alpha elsewhere.
#define LEAKY256(x, y, t) \
	VCMPPS    $0x0e, Y12, x, t; \
	VMULPS    Y13, x, y; \
	VBLENDVPS t, x, y, x

#define HARDSWISH256(x, y, t) \
	VADDPS Y11, x, t; \
	VMAXPS Y12, t, t; \
	VMINPS Y10, t, t; \
	VMULPS t, x, x; \
	VMULPS Y9, x, x

#define ADD256(x, y, t) \
	VADDPS y, x, x; \
	CLAMP256(x, y, t)

#define SUB256(x, y, t) \
	VSUBPS y, x, x; \
	CLAMP256(x, y, t)

#define MUL256(x, y, t) \
	VMULPS y, x, x; \
	CLAMP256(x, y, t)

#define ADDMM256(x, y, t) \
	VADDPS y, x, x; \
	MAXMIN256(x, y, t)

#define SUBMM256(x, y, t) \
	VSUBPS y, x, x; \
	MAXMIN256(x, y, t)

#define MULMM256(x, y, t) \
	VMULPS y, x, x; \
	MAXMIN256(x, y, t)

#define MAX256(x, y, t) VMAXPS y, x, x
#define MIN256(x, y, t) VMINPS y, x, x

// PRELU256 takes x*y in the lanes < 0 (LT_OS) and keeps x elsewhere.
#define PRELU256(x, y, t) \
	VCMPPS    $0x01, Y12, x, t; \
	VMULPS    y, x, y; \
	VBLENDVPS t, y, x, x

// LOOP1_256 runs a unary BODY over BX elements (a multiple of 8) from SI
// to R8, 16 at a time, then 8.
#define LOOP1_256(BODY, l16, l8) \
l16: \
	CMPQ    BX, $16; \
	JLT     l8; \
	VMOVUPS (SI), Y0; \
	VMOVUPS 32(SI), Y2; \
	BODY(Y0, Y1, Y4); \
	BODY(Y2, Y3, Y5); \
	VMOVUPS Y0, (R8); \
	VMOVUPS Y2, 32(R8); \
	ADDQ    $64, SI; \
	ADDQ    $64, R8; \
	SUBQ    $16, BX; \
	JMP     l16; \
l8: \
	TESTQ   BX, BX; \
	JZ      done2; \
	VMOVUPS (SI), Y0; \
	BODY(Y0, Y1, Y4); \
	VMOVUPS Y0, (R8); \
	JMP     done2

// LOOP2_256 is LOOP1_256 for a binary BODY, y from DX; R9 and R10 are
// how far x and y advance per 8 elements (32 bytes, or 0).
#define LOOP2_256(BODY, l16, l8) \
l16: \
	CMPQ    BX, $16; \
	JLT     l8; \
	VMOVUPS (SI), Y0; \
	VMOVUPS (SI)(R9*1), Y2; \
	VMOVUPS (DX), Y1; \
	VMOVUPS (DX)(R10*1), Y3; \
	BODY(Y0, Y1, Y4); \
	BODY(Y2, Y3, Y5); \
	VMOVUPS Y0, (R8); \
	VMOVUPS Y2, 32(R8); \
	LEAQ    (SI)(R9*2), SI; \
	LEAQ    (DX)(R10*2), DX; \
	ADDQ    $64, R8; \
	SUBQ    $16, BX; \
	JMP     l16; \
l8: \
	TESTQ   BX, BX; \
	JZ      done2; \
	VMOVUPS (SI), Y0; \
	VMOVUPS (DX), Y1; \
	BODY(Y0, Y1, Y4); \
	VMOVUPS Y0, (R8); \
	JMP     done2

// func runAVX2(a *Args)
TEXT ·runAVX2(SB), NOSPLIT, $0-8
	MOVQ         a+0(FP), DI
	MOVQ         AR_X(DI), SI
	MOVQ         AR_Y(DI), DX
	MOVQ         AR_Z(DI), R8
	MOVQ         AR_N(DI), BX
	MOVQ         AR_XSTEP(DI), R9
	SHLQ         $5, R9
	MOVQ         AR_YSTEP(DI), R10
	SHLQ         $5, R10
	VBROADCASTSS AR_LO(DI), Y15
	VBROADCASTSS AR_HI(DI), Y14
	VBROADCASTSS AR_ALPHA(DI), Y13
	VXORPS       Y12, Y12, Y12
	MOVL         F32_THREE, AX
	VMOVD        AX, X11
	VBROADCASTSS X11, Y11
	MOVL         F32_SIX, AX
	VMOVD        AX, X10
	VBROADCASTSS X10, Y10
	MOVL         F32_SIXTH, AX
	VMOVD        AX, X9
	VBROADCASTSS X9, Y9
	MOVL         AR_OP(DI), AX
	CMPL         AX, $OP_MAXMIN
	JEQ          maxmin
	CMPL         AX, $OP_CLAMP
	JEQ          clamp
	CMPL         AX, $OP_LEAKY
	JEQ          leaky
	CMPL         AX, $OP_HARDSWISH
	JEQ          hardswish
	CMPL         AX, $OP_ADD
	JEQ          add
	CMPL         AX, $OP_SUB
	JEQ          sub
	CMPL         AX, $OP_MUL
	JEQ          mul
	CMPL         AX, $OP_MAX
	JEQ          max
	CMPL         AX, $OP_MIN
	JEQ          min
	CMPL         AX, $OP_PRELU
	JEQ          prelu
	CMPL         AX, $OP_ADDMAXMIN
	JEQ          addmm
	CMPL         AX, $OP_SUBMAXMIN
	JEQ          submm
	CMPL         AX, $OP_MULMAXMIN
	JEQ          mulmm
	JMP          done2

maxmin:
	LOOP1_256(MAXMIN256, mm16, mm8)
clamp:
	LOOP1_256(CLAMP256, cl16, cl8)
leaky:
	LOOP1_256(LEAKY256, lk16, lk8)
hardswish:
	LOOP1_256(HARDSWISH256, hs16, hs8)
add:
	LOOP2_256(ADD256, ad16, ad8)
sub:
	LOOP2_256(SUB256, sb16, sb8)
mul:
	LOOP2_256(MUL256, ml16, ml8)
max:
	LOOP2_256(MAX256, mx16, mx8)
min:
	LOOP2_256(MIN256, mn16, mn8)
prelu:
	LOOP2_256(PRELU256, pr16, pr8)
addmm:
	LOOP2_256(ADDMM256, am16, am8)
submm:
	LOOP2_256(SUBMM256, sm16, sm8)
mulmm:
	LOOP2_256(MULMM256, mm2_16, mm2_8)

done2:
	VZEROUPPER
	RET
