//go:build !purego

#include "textflag.h"

// The kernels of Pixels in AVX-512F and AVX2+FMA. The pixels go in
// blocks, a block's channels in groups of whole vectors, each pixel's
// vector of sums started from the bias and given one fused multiply-add
// per tap, in tap order, with the tap's weights loaded once for the
// block and the inputs read as the multiply-add's memory operand. The
// clamp is max(lo) then min(hi) with the operands ordered so that a NaN
// sum stays NaN. How the pixels and channels are grouped changes no bit.
//
// AVX-512 keeps 16 sums in flight: pixels of 32 channels or more in
// blocks of 8 pixels by 2 vectors (then 4 by 4 from 64 channels), which
// read whole cache lines of few pixels per tap; narrower ones in blocks
// of 16, 8, 4 pixels by one vector, the last one masked. AVX2, with 16
// registers, takes blocks of 8, then 4 pixels by one vector. Both then
// take 2 pixels, then a lone pixel four vectors at a time.
//
// Registers of both: DX the block's output, SI its input, DI w, R8
// bias, R10/R11 xoff/woff, R12 ntaps, R13 pixels left, R14 the input's
// pixel step in bytes (xstep*4), R15 three of them; in a block CX the
// channel's byte offset, BX the tap, AX the tap's input for the block's
// first pixel (then the output), R9 the tap's weights (then the output's
// pixel step in bytes, c*4). Locals: cb the output's pixel step in bytes.

// ---------------------------------------------------------------- AVX-512

// Z16 holds the tap's weights, Z30/Z31 lo and hi, K3 the mask of the
// vector at CX (full, or the mask of the last c%16 channels, local tm).

// MASK512 sets K3 to the mask of the vector at channel byte CX.
#define MASK512 \
	MOVQ    cb-8(SP), AX; \
	SUBQ    CX, AX; \
	MOVL    $0xffff, R9; \
	CMPQ    AX, $64; \
	CMOVLLT tm-16(SP), R9; \
	KMOVW   R9, K3

// BIAS512 loads the bias at CX into acc.
#define BIAS512(acc) VMOVUPS.Z (R8)(CX*1), K3, acc

// TAP512 loads tap BX's weights at CX into Z16 and points AX at its
// input for the block's first pixel.
#define TAP512 \
	MOVQ      (R11)(BX*8), R9; \
	LEAQ      (DI)(R9*4), R9; \
	VMOVUPS.Z (R9)(CX*1), K3, Z16; \
	MOVQ      (R10)(BX*8), AX; \
	LEAQ      (SI)(AX*4), AX; \
	ADDQ      CX, AX

// FMA512 accumulates the pixel at p(AX) into acc.
#define FMA512(p, acc) VFMADD231PS p, Z16, K3, acc

// FMA512x4 accumulates the four pixels from AX on.
#define FMA512x4(a0, a1, a2, a3) \
	FMA512((AX), a0); \
	FMA512((AX)(R14*1), a1); \
	FMA512((AX)(R14*2), a2); \
	FMA512((AX)(R15*1), a3)

// FMA512x4V accumulates four whole vectors of one pixel, at p0..p3,
// with the weights Z16..Z19.
#define FMA512x4V(p0, p1, p2, p3, a0, a1, a2, a3) \
	VFMADD231PS p0, Z16, a0; \
	VFMADD231PS p1, Z17, a1; \
	VFMADD231PS p2, Z18, a2; \
	VFMADD231PS p3, Z19, a3

// FMA512x2V accumulates two whole vectors of one pixel, at p0 and p1,
// with the weights Z16 and Z17.
#define FMA512x2V(p0, p1, a0, a1) \
	VFMADD231PS p0, Z16, a0; \
	VFMADD231PS p1, Z17, a1

// OUT512x2V clamps two whole vectors of one pixel and stores them at p0
// and p1.
#define OUT512x2V(p0, p1, a0, a1) \
	VMAXPS  a0, Z30, a0; \
	VMINPS  a0, Z31, a0; \
	VMAXPS  a1, Z30, a1; \
	VMINPS  a1, Z31, a1; \
	VMOVUPS a0, p0; \
	VMOVUPS a1, p1

// OUT512x4V clamps four whole vectors of one pixel and stores them at
// p0..p3.
#define OUT512x4V(p0, p1, p2, p3, a0, a1, a2, a3) \
	VMAXPS  a0, Z30, a0; \
	VMINPS  a0, Z31, a0; \
	VMAXPS  a1, Z30, a1; \
	VMINPS  a1, Z31, a1; \
	VMAXPS  a2, Z30, a2; \
	VMINPS  a2, Z31, a2; \
	VMAXPS  a3, Z30, a3; \
	VMINPS  a3, Z31, a3; \
	VMOVUPS a0, p0; \
	VMOVUPS a1, p1; \
	VMOVUPS a2, p2; \
	VMOVUPS a3, p3

// OUT512 clamps acc to [Z30, Z31] and stores it at p.
#define OUT512(acc, p) \
	VMAXPS  acc, Z30, acc; \
	VMINPS  acc, Z31, acc; \
	VMOVUPS acc, K3, p

// OUTSET512 points AX at the block's output at CX, R9 at the output's
// pixel step and BX at three of them.
#define OUTSET512 \
	MOVQ cb-8(SP), R9; \
	LEAQ (R9)(R9*2), BX; \
	LEAQ (DX)(CX*1), AX

// OUT512x4 stores the four pixels from AX on.
#define OUT512x4(a0, a1, a2, a3) \
	OUT512(a0, (AX)); \
	OUT512(a1, (AX)(R9*1)); \
	OUT512(a2, (AX)(R9*2)); \
	OUT512(a3, (AX)(BX*1))

// func pixelsAVX512(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
TEXT ·pixelsAVX512(SB), NOSPLIT, $16-88
	MOVQ         c+0(FP), AX
	MOVQ         AX, CX
	SHLQ         $2, AX
	MOVQ         AX, cb-8(SP)
	ANDQ         $15, CX
	MOVL         $1, AX
	SHLL         CX, AX
	DECL         AX
	MOVQ         AX, tm-16(SP)
	MOVQ         npix+8(FP), R13
	MOVQ         out+16(FP), DX
	MOVQ         bias+24(FP), R8
	MOVQ         in+32(FP), SI
	MOVQ         w+40(FP), DI
	MOVQ         xoff+48(FP), R10
	MOVQ         woff+56(FP), R11
	MOVQ         ntaps+64(FP), R12
	MOVQ         xstep+72(FP), R14
	SHLQ         $2, R14
	LEAQ         (R14)(R14*2), R15
	VBROADCASTSS lo+80(FP), Z30
	VBROADCASTSS hi+84(FP), Z31
	CMPQ         cb-8(SP), $128
	JGE          block8

block16:
	CMPQ R13, $16
	JLT  block8
	XORQ CX, CX

chan16:
	MASK512
	BIAS512(Z0)
	VMOVAPS Z0, Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z0, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z0, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z0, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z0, Z9
	VMOVAPS Z0, Z10
	VMOVAPS Z0, Z11
	VMOVAPS Z0, Z12
	VMOVAPS Z0, Z13
	VMOVAPS Z0, Z14
	VMOVAPS Z0, Z15
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out16

tap16:
	TAP512
	FMA512x4(Z0, Z1, Z2, Z3)
	LEAQ (AX)(R14*4), AX
	FMA512x4(Z4, Z5, Z6, Z7)
	LEAQ (AX)(R14*4), AX
	FMA512x4(Z8, Z9, Z10, Z11)
	LEAQ (AX)(R14*4), AX
	FMA512x4(Z12, Z13, Z14, Z15)
	INCQ BX
	CMPQ BX, R12
	JLT  tap16

out16:
	OUTSET512
	OUT512x4(Z0, Z1, Z2, Z3)
	LEAQ (AX)(R9*4), AX
	OUT512x4(Z4, Z5, Z6, Z7)
	LEAQ (AX)(R9*4), AX
	OUT512x4(Z8, Z9, Z10, Z11)
	LEAQ (AX)(R9*4), AX
	OUT512x4(Z12, Z13, Z14, Z15)
	ADDQ $64, CX
	CMPQ CX, cb-8(SP)
	JLT  chan16
	MOVQ R14, AX
	SHLQ $4, AX
	ADDQ AX, SI
	MOVQ R9, AX
	SHLQ $4, AX
	ADDQ AX, DX
	SUBQ $16, R13
	JMP  block16

block8:
	CMPQ R13, $8
	JLT  block4
	XORQ CX, CX

	// Eight pixels by two whole vectors (32 channels) at a time.
chan8x2:
	MOVQ cb-8(SP), AX
	SUBQ CX, AX
	CMPQ AX, $128
	JLT  whole8
	VMOVUPS (R8)(CX*1), Z0
	VMOVUPS 64(R8)(CX*1), Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z1, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z1, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z1, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z1, Z9
	VMOVAPS Z0, Z10
	VMOVAPS Z1, Z11
	VMOVAPS Z0, Z12
	VMOVAPS Z1, Z13
	VMOVAPS Z0, Z14
	VMOVAPS Z1, Z15
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out8x2

tap8x2:
	MOVQ    (R11)(BX*8), R9
	LEAQ    (DI)(R9*4), R9
	VMOVUPS (R9)(CX*1), Z16
	VMOVUPS 64(R9)(CX*1), Z17
	MOVQ    (R10)(BX*8), AX
	LEAQ    (SI)(AX*4), AX
	ADDQ    CX, AX
	FMA512x2V((AX), 64(AX), Z0, Z1)
	FMA512x2V((AX)(R14*1), 64(AX)(R14*1), Z2, Z3)
	FMA512x2V((AX)(R14*2), 64(AX)(R14*2), Z4, Z5)
	FMA512x2V((AX)(R15*1), 64(AX)(R15*1), Z6, Z7)
	LEAQ    (AX)(R14*4), AX
	FMA512x2V((AX), 64(AX), Z8, Z9)
	FMA512x2V((AX)(R14*1), 64(AX)(R14*1), Z10, Z11)
	FMA512x2V((AX)(R14*2), 64(AX)(R14*2), Z12, Z13)
	FMA512x2V((AX)(R15*1), 64(AX)(R15*1), Z14, Z15)
	INCQ    BX
	CMPQ    BX, R12
	JLT     tap8x2

out8x2:
	OUTSET512
	OUT512x2V((AX), 64(AX), Z0, Z1)
	OUT512x2V((AX)(R9*1), 64(AX)(R9*1), Z2, Z3)
	OUT512x2V((AX)(R9*2), 64(AX)(R9*2), Z4, Z5)
	OUT512x2V((AX)(BX*1), 64(AX)(BX*1), Z6, Z7)
	LEAQ    (AX)(R9*4), AX
	OUT512x2V((AX), 64(AX), Z8, Z9)
	OUT512x2V((AX)(R9*1), 64(AX)(R9*1), Z10, Z11)
	OUT512x2V((AX)(R9*2), 64(AX)(R9*2), Z12, Z13)
	OUT512x2V((AX)(BX*1), 64(AX)(BX*1), Z14, Z15)
	ADDQ    $128, CX
	JMP     chan8x2

whole8:
	CMPQ CX, cb-8(SP)
	JGE  next8

chan8:
	MASK512
	BIAS512(Z0)
	VMOVAPS Z0, Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z0, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z0, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z0, Z7
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out8

tap8:
	TAP512
	FMA512x4(Z0, Z1, Z2, Z3)
	LEAQ (AX)(R14*4), AX
	FMA512x4(Z4, Z5, Z6, Z7)
	INCQ BX
	CMPQ BX, R12
	JLT  tap8

out8:
	OUTSET512
	OUT512x4(Z0, Z1, Z2, Z3)
	LEAQ (AX)(R9*4), AX
	OUT512x4(Z4, Z5, Z6, Z7)
	ADDQ $64, CX
	CMPQ CX, cb-8(SP)
	JLT  chan8

next8:
	MOVQ cb-8(SP), R9
	LEAQ (SI)(R14*8), SI
	LEAQ (DX)(R9*8), DX
	SUBQ $8, R13
	JMP  block8
	

block4:
	CMPQ R13, $4
	JLT  block2
	XORQ CX, CX

	// Four pixels by four whole vectors (64 channels) at a time: each
	// tap reads 256 consecutive bytes of a pixel, whole cache lines,
	// where a block of 16 pixels by one vector reads one line of each
	// of 16 pixels and strays over more of the input than the first
	// level cache holds when a pixel is wide.
chan4x4:
	MOVQ cb-8(SP), AX
	SUBQ CX, AX
	CMPQ AX, $256
	JLT  whole4
	VMOVUPS (R8)(CX*1), Z0
	VMOVUPS 64(R8)(CX*1), Z1
	VMOVUPS 128(R8)(CX*1), Z2
	VMOVUPS 192(R8)(CX*1), Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z1, Z5
	VMOVAPS Z2, Z6
	VMOVAPS Z3, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z1, Z9
	VMOVAPS Z2, Z10
	VMOVAPS Z3, Z11
	VMOVAPS Z0, Z12
	VMOVAPS Z1, Z13
	VMOVAPS Z2, Z14
	VMOVAPS Z3, Z15
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out4x4

tap4x4:
	MOVQ    (R11)(BX*8), R9
	LEAQ    (DI)(R9*4), R9
	VMOVUPS (R9)(CX*1), Z16
	VMOVUPS 64(R9)(CX*1), Z17
	VMOVUPS 128(R9)(CX*1), Z18
	VMOVUPS 192(R9)(CX*1), Z19
	MOVQ    (R10)(BX*8), AX
	LEAQ    (SI)(AX*4), AX
	ADDQ    CX, AX
	FMA512x4V((AX), 64(AX), 128(AX), 192(AX), Z0, Z1, Z2, Z3)
	FMA512x4V((AX)(R14*1), 64(AX)(R14*1), 128(AX)(R14*1), 192(AX)(R14*1), Z4, Z5, Z6, Z7)
	FMA512x4V((AX)(R14*2), 64(AX)(R14*2), 128(AX)(R14*2), 192(AX)(R14*2), Z8, Z9, Z10, Z11)
	FMA512x4V((AX)(R15*1), 64(AX)(R15*1), 128(AX)(R15*1), 192(AX)(R15*1), Z12, Z13, Z14, Z15)
	INCQ    BX
	CMPQ    BX, R12
	JLT     tap4x4

out4x4:
	OUTSET512
	OUT512x4V((AX), 64(AX), 128(AX), 192(AX), Z0, Z1, Z2, Z3)
	OUT512x4V((AX)(R9*1), 64(AX)(R9*1), 128(AX)(R9*1), 192(AX)(R9*1), Z4, Z5, Z6, Z7)
	OUT512x4V((AX)(R9*2), 64(AX)(R9*2), 128(AX)(R9*2), 192(AX)(R9*2), Z8, Z9, Z10, Z11)
	OUT512x4V((AX)(BX*1), 64(AX)(BX*1), 128(AX)(BX*1), 192(AX)(BX*1), Z12, Z13, Z14, Z15)
	ADDQ    $256, CX
	JMP     chan4x4

whole4:
	CMPQ CX, cb-8(SP)
	JGE  next4

chan4:
	MASK512
	BIAS512(Z0)
	VMOVAPS Z0, Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z0, Z3
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out4

tap4:
	TAP512
	FMA512x4(Z0, Z1, Z2, Z3)
	INCQ BX
	CMPQ BX, R12
	JLT  tap4

out4:
	OUTSET512
	OUT512x4(Z0, Z1, Z2, Z3)
	ADDQ $64, CX
	CMPQ CX, cb-8(SP)
	JLT  chan4

next4:
	MOVQ cb-8(SP), R9
	LEAQ (SI)(R14*4), SI
	LEAQ (DX)(R9*4), DX
	SUBQ $4, R13
	JMP  block4

block2:
	CMPQ R13, $2
	JLT  block1
	XORQ CX, CX

chan2:
	MASK512
	BIAS512(Z0)
	VMOVAPS Z0, Z1
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out2

tap2:
	TAP512
	FMA512((AX), Z0)
	FMA512((AX)(R14*1), Z1)
	INCQ BX
	CMPQ BX, R12
	JLT  tap2

out2:
	OUTSET512
	OUT512(Z0, (AX))
	OUT512(Z1, (AX)(R9*1))
	ADDQ $64, CX
	CMPQ CX, cb-8(SP)
	JLT  chan2
	LEAQ (SI)(R14*2), SI
	LEAQ (DX)(R9*2), DX
	SUBQ $2, R13

block1:
	TESTQ R13, R13
	JLE   done
	XORQ  CX, CX

	// One pixel: four whole vectors at a time (four sums in flight),
	// then one vector at a time, the last one masked.
chan1x4:
	MOVQ cb-8(SP), AX
	SUBQ CX, AX
	JLE  done
	CMPQ AX, $256
	JLT  chan1
	VMOVUPS (R8)(CX*1), Z0
	VMOVUPS 64(R8)(CX*1), Z1
	VMOVUPS 128(R8)(CX*1), Z2
	VMOVUPS 192(R8)(CX*1), Z3
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out1x4

tap1x4:
	MOVQ        (R11)(BX*8), R9
	LEAQ        (DI)(R9*4), R9
	MOVQ        (R10)(BX*8), AX
	LEAQ        (SI)(AX*4), AX
	VMOVUPS     (R9)(CX*1), Z16
	VMOVUPS     64(R9)(CX*1), Z17
	VMOVUPS     128(R9)(CX*1), Z18
	VMOVUPS     192(R9)(CX*1), Z19
	VFMADD231PS (AX)(CX*1), Z16, Z0
	VFMADD231PS 64(AX)(CX*1), Z17, Z1
	VFMADD231PS 128(AX)(CX*1), Z18, Z2
	VFMADD231PS 192(AX)(CX*1), Z19, Z3
	INCQ        BX
	CMPQ        BX, R12
	JLT         tap1x4

out1x4:
	LEAQ    (DX)(CX*1), AX
	VMAXPS  Z0, Z30, Z0
	VMINPS  Z0, Z31, Z0
	VMAXPS  Z1, Z30, Z1
	VMINPS  Z1, Z31, Z1
	VMAXPS  Z2, Z30, Z2
	VMINPS  Z2, Z31, Z2
	VMAXPS  Z3, Z30, Z3
	VMINPS  Z3, Z31, Z3
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z2, 128(AX)
	VMOVUPS Z3, 192(AX)
	ADDQ    $256, CX
	JMP     chan1x4

chan1:
	MASK512
	BIAS512(Z0)
	XORQ BX, BX
	CMPQ BX, R12
	JGE  out1

tap1:
	TAP512
	FMA512((AX), Z0)
	INCQ BX
	CMPQ BX, R12
	JLT  tap1

out1:
	OUTSET512
	OUT512(Z0, (AX))
	ADDQ $64, CX
	CMPQ CX, cb-8(SP)
	JLT  chan1

done:
	VZEROUPPER
	RET

// ---------------------------------------------------------------- AVX2

// Y8 holds the tap's weights, Y9 a masked input, Y13 the mask of the
// last c%8 channels, Y14/Y15 lo and hi. Whole vectors are read as
// memory operands; the last, partial one (from local cf, the bytes of
// whole vectors, to cb) through VMASKMOVPS, which reads nothing past the
// channels.

// TAP256 loads tap BX's weights at CX into Y8 (with load, VMOVUPS or a
// masked load) and points AX at its input for the block's first pixel.
#define TAP256(load) \
	MOVQ (R11)(BX*8), R9; \
	LEAQ (DI)(R9*4), R9; \
	load; \
	MOVQ (R10)(BX*8), AX; \
	LEAQ (SI)(AX*4), AX; \
	ADDQ CX, AX

#define W256 VMOVUPS (R9)(CX*1), Y8
#define W256M VMASKMOVPS (R9)(CX*1), Y13, Y8

// FMA256 accumulates the whole vector at p into acc; FMA256M the partial
// one.
#define FMA256(p, acc) VFMADD231PS p, Y8, acc
#define FMA256M(p, acc) \
	VMASKMOVPS  p, Y13, Y9; \
	VFMADD231PS Y9, Y8, acc

// The stores of a whole vector and of the partial one.
#define ST256(acc, p) VMOVUPS acc, p
#define ST256M(acc, p) VMASKMOVPS acc, Y13, p

// OUT256 clamps acc to [Y14, Y15] and stores it at p with st.
#define OUT256(st, acc, p) \
	VMAXPS acc, Y14, acc; \
	VMINPS acc, Y15, acc; \
	st(acc, p)

// OUTSET256 points AX at the block's output at CX, R9 at the output's
// pixel step and BX at three of them.
#define OUTSET256 \
	MOVQ cb-8(SP), R9; \
	LEAQ (R9)(R9*2), BX; \
	LEAQ (DX)(CX*1), AX

// FMA256x4 accumulates the four pixels from AX on with fma.
#define FMA256x4(fma, a0, a1, a2, a3) \
	fma((AX), a0); \
	fma((AX)(R14*1), a1); \
	fma((AX)(R14*2), a2); \
	fma((AX)(R15*1), a3)

// OUT256x4 stores the four pixels from AX on with st.
#define OUT256x4(st, a0, a1, a2, a3) \
	OUT256(st, a0, (AX)); \
	OUT256(st, a1, (AX)(R9*1)); \
	OUT256(st, a2, (AX)(R9*2)); \
	OUT256(st, a3, (AX)(BX*1))

// func pixelsAVX2(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
TEXT ·pixelsAVX2(SB), NOSPLIT, $16-88
	MOVQ         c+0(FP), AX
	MOVQ         AX, CX
	SHLQ         $2, AX
	MOVQ         AX, cb-8(SP)
	ANDQ         $-32, AX
	MOVQ         AX, cf-16(SP)
	ANDQ         $7, CX
	MOVQ         $8, AX
	SUBQ         CX, AX
	LEAQ         mask256<>(SB), BX
	VMOVUPS      (BX)(AX*4), Y13
	MOVQ         npix+8(FP), R13
	MOVQ         out+16(FP), DX
	MOVQ         bias+24(FP), R8
	MOVQ         in+32(FP), SI
	MOVQ         w+40(FP), DI
	MOVQ         xoff+48(FP), R10
	MOVQ         woff+56(FP), R11
	MOVQ         ntaps+64(FP), R12
	MOVQ         xstep+72(FP), R14
	SHLQ         $2, R14
	LEAQ         (R14)(R14*2), R15
	VBROADCASTSS lo+80(FP), Y14
	VBROADCASTSS hi+84(FP), Y15

block8:
	CMPQ R13, $8
	JLT  block4
	XORQ CX, CX
	CMPQ CX, cf-16(SP)
	JGE  part8

chan8:
	VMOVUPS (R8)(CX*1), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	VMOVAPS Y0, Y4
	VMOVAPS Y0, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y0, Y7
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out8

tap8:
	TAP256(W256)
	FMA256x4(FMA256, Y0, Y1, Y2, Y3)
	LEAQ (AX)(R14*4), AX
	FMA256x4(FMA256, Y4, Y5, Y6, Y7)
	INCQ BX
	CMPQ BX, R12
	JLT  tap8

out8:
	OUTSET256
	OUT256x4(ST256, Y0, Y1, Y2, Y3)
	LEAQ (AX)(R9*4), AX
	OUT256x4(ST256, Y4, Y5, Y6, Y7)
	ADDQ $32, CX
	CMPQ CX, cf-16(SP)
	JLT  chan8

part8:
	CMPQ       CX, cb-8(SP)
	JGE        next8
	VMASKMOVPS (R8)(CX*1), Y13, Y0
	VMOVAPS    Y0, Y1
	VMOVAPS    Y0, Y2
	VMOVAPS    Y0, Y3
	VMOVAPS    Y0, Y4
	VMOVAPS    Y0, Y5
	VMOVAPS    Y0, Y6
	VMOVAPS    Y0, Y7
	XORQ       BX, BX
	CMPQ       BX, R12
	JGE        outpart8

tappart8:
	TAP256(W256M)
	FMA256x4(FMA256M, Y0, Y1, Y2, Y3)
	LEAQ (AX)(R14*4), AX
	FMA256x4(FMA256M, Y4, Y5, Y6, Y7)
	INCQ BX
	CMPQ BX, R12
	JLT  tappart8

outpart8:
	OUTSET256
	OUT256x4(ST256M, Y0, Y1, Y2, Y3)
	LEAQ (AX)(R9*4), AX
	OUT256x4(ST256M, Y4, Y5, Y6, Y7)

next8:
	MOVQ cb-8(SP), R9
	LEAQ (SI)(R14*8), SI
	LEAQ (DX)(R9*8), DX
	SUBQ $8, R13
	JMP  block8

block4:
	CMPQ R13, $4
	JLT  block2
	XORQ CX, CX
	CMPQ CX, cf-16(SP)
	JGE  part4

chan4:
	VMOVUPS (R8)(CX*1), Y0
	VMOVAPS Y0, Y1
	VMOVAPS Y0, Y2
	VMOVAPS Y0, Y3
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out4

tap4:
	TAP256(W256)
	FMA256x4(FMA256, Y0, Y1, Y2, Y3)
	INCQ BX
	CMPQ BX, R12
	JLT  tap4

out4:
	OUTSET256
	OUT256x4(ST256, Y0, Y1, Y2, Y3)
	ADDQ $32, CX
	CMPQ CX, cf-16(SP)
	JLT  chan4

part4:
	CMPQ       CX, cb-8(SP)
	JGE        next4
	VMASKMOVPS (R8)(CX*1), Y13, Y0
	VMOVAPS    Y0, Y1
	VMOVAPS    Y0, Y2
	VMOVAPS    Y0, Y3
	XORQ       BX, BX
	CMPQ       BX, R12
	JGE        outpart4

tappart4:
	TAP256(W256M)
	FMA256x4(FMA256M, Y0, Y1, Y2, Y3)
	INCQ BX
	CMPQ BX, R12
	JLT  tappart4

outpart4:
	OUTSET256
	OUT256x4(ST256M, Y0, Y1, Y2, Y3)

next4:
	MOVQ cb-8(SP), R9
	LEAQ (SI)(R14*4), SI
	LEAQ (DX)(R9*4), DX
	SUBQ $4, R13

block2:
	CMPQ R13, $2
	JLT  block1
	XORQ CX, CX
	CMPQ CX, cf-16(SP)
	JGE  part2

chan2:
	VMOVUPS (R8)(CX*1), Y0
	VMOVAPS Y0, Y1
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out2

tap2:
	TAP256(W256)
	FMA256((AX), Y0)
	FMA256((AX)(R14*1), Y1)
	INCQ BX
	CMPQ BX, R12
	JLT  tap2

out2:
	OUTSET256
	OUT256(ST256, Y0, (AX))
	OUT256(ST256, Y1, (AX)(R9*1))
	ADDQ $32, CX
	CMPQ CX, cf-16(SP)
	JLT  chan2

part2:
	CMPQ       CX, cb-8(SP)
	JGE        next2
	VMASKMOVPS (R8)(CX*1), Y13, Y0
	VMOVAPS    Y0, Y1
	XORQ       BX, BX
	CMPQ       BX, R12
	JGE        outpart2

tappart2:
	TAP256(W256M)
	FMA256M((AX), Y0)
	FMA256M((AX)(R14*1), Y1)
	INCQ BX
	CMPQ BX, R12
	JLT  tappart2

outpart2:
	OUTSET256
	OUT256(ST256M, Y0, (AX))
	OUT256(ST256M, Y1, (AX)(R9*1))

next2:
	MOVQ cb-8(SP), R9
	LEAQ (SI)(R14*2), SI
	LEAQ (DX)(R9*2), DX
	SUBQ $2, R13

block1:
	TESTQ R13, R13
	JLE   done
	XORQ  CX, CX

	// One pixel: four whole vectors at a time (four sums in flight),
	// then one whole vector at a time, then the partial one.
chan1x4:
	MOVQ cf-16(SP), AX
	SUBQ CX, AX
	CMPQ AX, $128
	JLT  whole1
	VMOVUPS (R8)(CX*1), Y0
	VMOVUPS 32(R8)(CX*1), Y1
	VMOVUPS 64(R8)(CX*1), Y2
	VMOVUPS 96(R8)(CX*1), Y3
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out1x4

tap1x4:
	MOVQ        (R11)(BX*8), R9
	LEAQ        (DI)(R9*4), R9
	MOVQ        (R10)(BX*8), AX
	LEAQ        (SI)(AX*4), AX
	VMOVUPS     (R9)(CX*1), Y8
	VMOVUPS     32(R9)(CX*1), Y9
	VMOVUPS     64(R9)(CX*1), Y10
	VMOVUPS     96(R9)(CX*1), Y11
	VFMADD231PS (AX)(CX*1), Y8, Y0
	VFMADD231PS 32(AX)(CX*1), Y9, Y1
	VFMADD231PS 64(AX)(CX*1), Y10, Y2
	VFMADD231PS 96(AX)(CX*1), Y11, Y3
	INCQ        BX
	CMPQ        BX, R12
	JLT         tap1x4

out1x4:
	LEAQ   (DX)(CX*1), AX
	OUT256(ST256, Y0, (AX))
	OUT256(ST256, Y1, 32(AX))
	OUT256(ST256, Y2, 64(AX))
	OUT256(ST256, Y3, 96(AX))
	ADDQ   $128, CX
	JMP    chan1x4

whole1:
	CMPQ CX, cf-16(SP)
	JGE  part1

chan1:
	VMOVUPS (R8)(CX*1), Y0
	XORQ    BX, BX
	CMPQ    BX, R12
	JGE     out1

tap1:
	TAP256(W256)
	FMA256((AX), Y0)
	INCQ BX
	CMPQ BX, R12
	JLT  tap1

out1:
	OUTSET256
	OUT256(ST256, Y0, (AX))
	ADDQ $32, CX
	CMPQ CX, cf-16(SP)
	JLT  chan1

part1:
	CMPQ       CX, cb-8(SP)
	JGE        done
	VMASKMOVPS (R8)(CX*1), Y13, Y0
	XORQ       BX, BX
	CMPQ       BX, R12
	JGE        outpart1

tappart1:
	TAP256(W256M)
	FMA256M((AX), Y0)
	INCQ BX
	CMPQ BX, R12
	JLT  tappart1

outpart1:
	OUTSET256
	OUT256(ST256M, Y0, (AX))

done:
	VZEROUPPER
	RET

// mask256 is 8 lanes of ones then 8 of zeros: from lane 8-r, the mask of
// r lanes.
DATA mask256<>+0(SB)/4, $-1
DATA mask256<>+4(SB)/4, $-1
DATA mask256<>+8(SB)/4, $-1
DATA mask256<>+12(SB)/4, $-1
DATA mask256<>+16(SB)/4, $-1
DATA mask256<>+20(SB)/4, $-1
DATA mask256<>+24(SB)/4, $-1
DATA mask256<>+28(SB)/4, $-1
DATA mask256<>+32(SB)/4, $0
DATA mask256<>+36(SB)/4, $0
DATA mask256<>+40(SB)/4, $0
DATA mask256<>+44(SB)/4, $0
DATA mask256<>+48(SB)/4, $0
DATA mask256<>+52(SB)/4, $0
DATA mask256<>+56(SB)/4, $0
DATA mask256<>+60(SB)/4, $0
GLOBL mask256<>(SB), RODATA|NOPTR, $64
