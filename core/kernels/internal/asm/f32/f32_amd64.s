//go:build !purego

#include "textflag.h"

// The float micro-kernels of f32.go in AVX-512F and AVX2+FMA.
// Each output lane is one chain of fused multiply-adds in k (or tap)
// order from zero (or the bias), then bias, then max(lo), then min(hi)
// with the operands ordered so that a NaN sum stays NaN.

// ---------------------------------------------------------------- AVX-512

// T512FMA accumulates row r of a 12x16 tile: Z(r) += a[r] * Z12.
#define T512FMA(off, acc) VFMADD231PS.BCST off(SI), Z12, acc

// OUT512 adds the bias (Z12), clamps to [Z13, Z14] and stores to (ptr).
#define OUT512(acc, ptr) \
	VADDPS Z12, acc, acc; \
	VMAXPS acc, Z13, acc; \
	VMINPS acc, Z14, acc; \
	VMOVUPS acc, ptr

// ZERO512 clears the 12 accumulators Z0-Z11 of a tile.
#define ZERO512 \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11

// STORE512 adds the bias at bias to the tile's 12 rows, clamps them to
// [lo, hi] and stores them ldc floats apart from c (the operands name the
// function's arguments).
#define STORE512(bias, c, ldc, lo, hi) \
	MOVQ         bias, R8; \
	MOVQ         c, DX; \
	MOVQ         ldc, R9; \
	SHLQ         $2, R9; \
	VMOVUPS      (R8), Z12; \
	VBROADCASTSS lo, Z13; \
	VBROADCASTSS hi, Z14; \
	OUT512(Z0, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z1, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z2, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z3, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z4, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z5, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z6, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z7, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z8, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z9, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z10, (DX)); \
	ADDQ         R9, DX; \
	OUT512(Z11, (DX)); \
	VZEROUPPER

// func fTileAVX512(k int, a, b, bias, c *float32, ldc int, lo, hi float32)
TEXT ·fTileAVX512(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DI
	ZERO512
	TESTQ CX, CX
	JLE   store

loop:
	VMOVUPS (DI), Z12
	T512FMA(0, Z0)
	T512FMA(4, Z1)
	T512FMA(8, Z2)
	T512FMA(12, Z3)
	T512FMA(16, Z4)
	T512FMA(20, Z5)
	T512FMA(24, Z6)
	T512FMA(28, Z7)
	T512FMA(32, Z8)
	T512FMA(36, Z9)
	T512FMA(40, Z10)
	T512FMA(44, Z11)
	ADDQ $48, SI
	ADDQ $64, DI
	DECQ CX
	JNZ  loop

store:
	STORE512(bias+24(FP), c+32(FP), ldc+40(FP), lo+48(FP), hi+52(FP))
	RET

// ROWS512 accumulates one k of a 12x16 tile whose rows are read in place:
// rows 0-2 from SI, 3-5 from R11, 6-8 from R12, 9-11 from R13, each base
// and base+R8 and base+2*R8, the weights from DI; then steps every pointer
// to the next k.
#define ROWS512 \
	VMOVUPS          (DI), Z12; \
	VFMADD231PS.BCST (SI), Z12, Z0; \
	VFMADD231PS.BCST (SI)(R8*1), Z12, Z1; \
	VFMADD231PS.BCST (SI)(R8*2), Z12, Z2; \
	VFMADD231PS.BCST (R11), Z12, Z3; \
	VFMADD231PS.BCST (R11)(R8*1), Z12, Z4; \
	VFMADD231PS.BCST (R11)(R8*2), Z12, Z5; \
	VFMADD231PS.BCST (R12), Z12, Z6; \
	VFMADD231PS.BCST (R12)(R8*1), Z12, Z7; \
	VFMADD231PS.BCST (R12)(R8*2), Z12, Z8; \
	VFMADD231PS.BCST (R13), Z12, Z9; \
	VFMADD231PS.BCST (R13)(R8*1), Z12, Z10; \
	VFMADD231PS.BCST (R13)(R8*2), Z12, Z11; \
	ADDQ             $4, SI; \
	ADDQ             $4, R11; \
	ADDQ             $4, R12; \
	ADDQ             $4, R13; \
	ADDQ             $64, DI

// func fTileRowsAVX512(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)
//
// fTileAVX512 with row r of a at a+r*lda floats (rows read in place): rows
// 0-2 from SI, 3-5 from R11, 6-8 from R12, 9-11 from R13, each base and
// base+R8 and base+2*R8.
TEXT ·fTileRowsAVX512(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R10
	LEAQ (SI)(R10*1), R11
	LEAQ (R11)(R10*1), R12
	LEAQ (R12)(R10*1), R13
	ZERO512
	TESTQ CX, CX
	JLE   rstore

rloop:
	ROWS512
	DECQ CX
	JNZ  rloop

rstore:
	STORE512(bias+32(FP), c+40(FP), ldc+48(FP), lo+56(FP), hi+60(FP))
	RET

// OUTM512 is OUT512 storing the lanes of mask K1 only.
#define OUTM512(acc, ptr) \
	VADDPS  Z12, acc, acc; \
	VMAXPS  acc, Z13, acc; \
	VMINPS  acc, Z14, acc; \
	VMOVUPS acc, K1, ptr

// func fTileWindowAVX512(kseg, nseg int, a *float32, lda, sega int, b, bias, c *float32, ldc, cols, tiles, astep int, lo, hi float32)
//
// fTileRowsAVX512 for tiles tiles, tile i's rows at a+i*astep floats and
// its output rows at c+i*12*ldc, each row's k values nseg segments of kseg,
// segment s of row r at a+s*sega+r*lda floats, storing the first cols
// channels of each row. R15 is the tile's a, R14 the segment's, BX the
// segments left, R9 their distance in bytes, DX kseg; K1 masks the stores;
// the tiles left and the tile's c live in the frame.
TEXT ·fTileWindowAVX512(SB), NOSPLIT, $16-104
	MOVQ  cols+72(FP), CX
	MOVL  $1, AX
	SHLL  CX, AX
	DECL  AX
	KMOVW AX, K1
	MOVQ  tiles+80(FP), AX
	TESTQ AX, AX
	JLE   wdone
	MOVQ  AX, left-8(SP)
	MOVQ  c+56(FP), AX
	MOVQ  AX, cp-16(SP)
	MOVQ  a+16(FP), R15

wtile:
	MOVQ  kseg+0(FP), DX
	MOVQ  nseg+8(FP), BX
	MOVQ  lda+24(FP), R8
	MOVQ  sega+32(FP), R9
	MOVQ  b+40(FP), DI
	SHLQ  $2, R8
	SHLQ  $2, R9
	LEAQ  (R8)(R8*2), R10
	MOVQ  R15, R14
	ZERO512
	TESTQ DX, DX
	JLE   wstore
	TESTQ BX, BX
	JLE   wstore

wseg:
	MOVQ R14, SI
	LEAQ (SI)(R10*1), R11
	LEAQ (R11)(R10*1), R12
	LEAQ (R12)(R10*1), R13
	MOVQ DX, CX

wloop:
	ROWS512
	DECQ CX
	JNZ  wloop
	ADDQ R9, R14
	DECQ BX
	JNZ  wseg

wstore:
	MOVQ         bias+48(FP), R8
	MOVQ         cp-16(SP), DX
	MOVQ         ldc+64(FP), R9
	SHLQ         $2, R9
	VMOVUPS      (R8), Z12
	VBROADCASTSS lo+96(FP), Z13
	VBROADCASTSS hi+100(FP), Z14
	OUTM512(Z0, (DX))
	ADDQ         R9, DX
	OUTM512(Z1, (DX))
	ADDQ         R9, DX
	OUTM512(Z2, (DX))
	ADDQ         R9, DX
	OUTM512(Z3, (DX))
	ADDQ         R9, DX
	OUTM512(Z4, (DX))
	ADDQ         R9, DX
	OUTM512(Z5, (DX))
	ADDQ         R9, DX
	OUTM512(Z6, (DX))
	ADDQ         R9, DX
	OUTM512(Z7, (DX))
	ADDQ         R9, DX
	OUTM512(Z8, (DX))
	ADDQ         R9, DX
	OUTM512(Z9, (DX))
	ADDQ         R9, DX
	OUTM512(Z10, (DX))
	ADDQ         R9, DX
	OUTM512(Z11, (DX))
	ADDQ         R9, DX
	MOVQ         DX, cp-16(SP)
	MOVQ         astep+88(FP), AX
	LEAQ         (R15)(AX*4), R15
	DECQ         left-8(SP)
	JNZ          wtile

wdone:
	VZEROUPPER
	RET

// OUTB512 is OUT512 with the bias read from memory.
#define OUTB512(acc, bias, ptr) \
	VADDPS  bias, acc, acc; \
	VMAXPS  acc, Z13, acc; \
	VMINPS  acc, Z14, acc; \
	VMOVUPS acc, ptr

// func fRow4AVX512(k int, a, b, bias, c *float32, ldb int, lo, hi float32)
TEXT ·fRow4AVX512(SB), NOSPLIT, $0-56
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	MOVQ   ldb+40(FP), R10
	SHLQ   $2, R10
	LEAQ   (R10)(R10*2), R11
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	TESTQ  CX, CX
	JLE    store

loop:
	VBROADCASTSS (SI), Z4
	VFMADD231PS  (DI), Z4, Z0
	VFMADD231PS  (DI)(R10*1), Z4, Z1
	VFMADD231PS  (DI)(R10*2), Z4, Z2
	VFMADD231PS  (DI)(R11*1), Z4, Z3
	ADDQ         $4, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop

store:
	MOVQ         bias+24(FP), R8
	MOVQ         c+32(FP), DX
	VBROADCASTSS lo+48(FP), Z13
	VBROADCASTSS hi+52(FP), Z14
	OUTB512(Z0, (R8), (DX))
	OUTB512(Z1, 64(R8), 64(DX))
	OUTB512(Z2, 128(R8), 128(DX))
	OUTB512(Z3, 192(R8), 192(DX))
	VZEROUPPER
	RET

// func fRow1AVX512(k int, a, b, bias, c *float32, lo, hi float32)
TEXT ·fRow1AVX512(SB), NOSPLIT, $0-48
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	VPXORD Z0, Z0, Z0
	TESTQ  CX, CX
	JLE    store

loop:
	VBROADCASTSS (SI), Z4
	VFMADD231PS  (DI), Z4, Z0
	ADDQ         $4, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop

store:
	MOVQ         bias+24(FP), R8
	MOVQ         c+32(FP), DX
	VBROADCASTSS lo+40(FP), Z13
	VBROADCASTSS hi+44(FP), Z14
	OUTB512(Z0, (R8), (DX))
	VZEROUPPER
	RET

// DW512 accumulates one tap into 16 channels at byte offset off of the
// current x (R14 + AX*4) and w (R15 + R9*4) pointers.
#define DW512(off, x, acc) \
	VMOVUPS     off(R14)(AX*4), x; \
	VFMADD231PS off(R15)(R9*4), x, acc

// DWCLAMP512 clamps acc to [Z30, Z31].
#define DWCLAMP512(acc) \
	VMAXPS acc, Z30, acc; \
	VMINPS acc, Z31, acc

// func dwFloatAVX512(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
//
// Registers: CX channels left in the pixel, R13 pixels left, DX out, SI the
// pixel's input, DI w, R8 bias, R10/R11 xoff/woff, R12 ntaps, R14/R15 the
// input and w at the current channel, BX the tap, AX/R9 its offsets.
TEXT ·dwFloatAVX512(SB), NOSPLIT, $0-88
	MOVQ c+0(FP), CX
	ANDQ $15, CX
	MOVL $1, AX
	SHLL CX, AX
	DECL AX
	KMOVW AX, K1
	MOVQ npix+8(FP), R13
	MOVQ out+16(FP), DX
	MOVQ bias+24(FP), R8
	MOVQ in+32(FP), SI
	MOVQ w+40(FP), DI
	MOVQ xoff+48(FP), R10
	MOVQ woff+56(FP), R11
	MOVQ ntaps+64(FP), R12
	VBROADCASTSS lo+80(FP), Z30
	VBROADCASTSS hi+84(FP), Z31
	TESTQ R13, R13
	JLE   done

pixel:
	MOVQ c+0(FP), CX
	MOVQ SI, R14
	MOVQ DI, R15

chunk64:
	CMPQ    CX, $64
	JLT     chunk16
	MOVQ    R15, AX
	SUBQ    DI, AX
	VMOVUPS (R8)(AX*1), Z0
	VMOVUPS 64(R8)(AX*1), Z1
	VMOVUPS 128(R8)(AX*1), Z2
	VMOVUPS 192(R8)(AX*1), Z3
	XORQ    BX, BX
	TESTQ   R12, R12
	JLE     store64

taps64:
	MOVQ (R10)(BX*8), AX
	MOVQ (R11)(BX*8), R9
	DW512(0, Z4, Z0)
	DW512(64, Z5, Z1)
	DW512(128, Z6, Z2)
	DW512(192, Z7, Z3)
	INCQ BX
	CMPQ BX, R12
	JLT  taps64

store64:
	DWCLAMP512(Z0)
	DWCLAMP512(Z1)
	DWCLAMP512(Z2)
	DWCLAMP512(Z3)
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VMOVUPS Z2, 128(DX)
	VMOVUPS Z3, 192(DX)
	ADDQ    $256, DX
	ADDQ    $256, R14
	ADDQ    $256, R15
	SUBQ    $64, CX
	JMP     chunk64

chunk16:
	CMPQ    CX, $16
	JLT     tail
	MOVQ    R15, AX
	SUBQ    DI, AX
	VMOVUPS (R8)(AX*1), Z0
	XORQ    BX, BX
	TESTQ   R12, R12
	JLE     store16

taps16:
	MOVQ (R10)(BX*8), AX
	MOVQ (R11)(BX*8), R9
	DW512(0, Z4, Z0)
	INCQ BX
	CMPQ BX, R12
	JLT  taps16

store16:
	DWCLAMP512(Z0)
	VMOVUPS Z0, (DX)
	ADDQ    $64, DX
	ADDQ    $64, R14
	ADDQ    $64, R15
	SUBQ    $16, CX
	JMP     chunk16

tail:
	TESTQ     CX, CX
	JLE       next
	MOVQ      R15, AX
	SUBQ      DI, AX
	VMOVUPS.Z (R8)(AX*1), K1, Z0
	XORQ      BX, BX
	TESTQ     R12, R12
	JLE       storetail

tapstail:
	MOVQ        (R10)(BX*8), AX
	MOVQ        (R11)(BX*8), R9
	VMOVUPS.Z   (R14)(AX*4), K1, Z4
	VFMADD231PS (R15)(R9*4), Z4, K1, Z0
	INCQ        BX
	CMPQ        BX, R12
	JLT         tapstail

storetail:
	DWCLAMP512(Z0)
	VMOVUPS Z0, K1, (DX)
	LEAQ    (DX)(CX*4), DX

next:
	MOVQ xstep+72(FP), AX
	LEAQ (SI)(AX*4), SI
	DECQ R13
	JNZ  pixel

done:
	VZEROUPPER
	RET

// ---------------------------------------------------------------- AVX2

// T256FMA accumulates row r of a 6x16 tile from the broadcast a[r] in bc:
// lo += bc*Y12, hi += bc*Y13.
#define T256FMA(off, bc, lo, hi) \
	VBROADCASTSS off(SI), bc; \
	VFMADD231PS  Y12, bc, lo; \
	VFMADD231PS  Y13, bc, hi

// OUT256 adds the bias (Y12, Y13), clamps to [Y14, Y15] and stores 16
// floats at (DX).
#define OUT256(lo, hi) \
	VADDPS  Y12, lo, lo; \
	VADDPS  Y13, hi, hi; \
	VMAXPS  lo, Y14, lo; \
	VMAXPS  hi, Y14, hi; \
	VMINPS  lo, Y15, lo; \
	VMINPS  hi, Y15, hi; \
	VMOVUPS lo, (DX); \
	VMOVUPS hi, 32(DX)

// ZERO256 clears the 12 accumulators Y0-Y11 of a tile.
#define ZERO256 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// STORE256 adds the bias at bias to the tile's 6 rows, clamps them to
// [lo, hi] and stores them ldc floats apart from c.
#define STORE256(bias, c, ldc, lo, hi) \
	MOVQ         bias, R8; \
	MOVQ         c, DX; \
	MOVQ         ldc, R9; \
	SHLQ         $2, R9; \
	VMOVUPS      (R8), Y12; \
	VMOVUPS      32(R8), Y13; \
	VBROADCASTSS lo, Y14; \
	VBROADCASTSS hi, Y15; \
	OUT256(Y0, Y1); \
	ADDQ         R9, DX; \
	OUT256(Y2, Y3); \
	ADDQ         R9, DX; \
	OUT256(Y4, Y5); \
	ADDQ         R9, DX; \
	OUT256(Y6, Y7); \
	ADDQ         R9, DX; \
	OUT256(Y8, Y9); \
	ADDQ         R9, DX; \
	OUT256(Y10, Y11); \
	VZEROUPPER

// R256FMA is T256FMA with a[r] read from the operand src.
#define R256FMA(src, bc, lo, hi) \
	VBROADCASTSS src, bc; \
	VFMADD231PS  Y12, bc, lo; \
	VFMADD231PS  Y13, bc, hi

// func fTileAVX2(k int, a, b, bias, c *float32, ldc int, lo, hi float32)
TEXT ·fTileAVX2(SB), NOSPLIT, $0-56
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	ZERO256
	TESTQ  CX, CX
	JLE    store

loop:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	T256FMA(0, Y14, Y0, Y1)
	T256FMA(4, Y15, Y2, Y3)
	T256FMA(8, Y14, Y4, Y5)
	T256FMA(12, Y15, Y6, Y7)
	T256FMA(16, Y14, Y8, Y9)
	T256FMA(20, Y15, Y10, Y11)
	ADDQ    $24, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     loop

store:
	STORE256(bias+24(FP), c+32(FP), ldc+40(FP), lo+48(FP), hi+52(FP))
	RET

// ROWS256 accumulates one k of a 6x16 tile whose rows are read in place:
// rows 0-2 from SI, 3-5 from R11, each base and base+R8 and base+2*R8, the
// weights from DI; then steps every pointer to the next k.
#define ROWS256 \
	VMOVUPS (DI), Y12; \
	VMOVUPS 32(DI), Y13; \
	R256FMA((SI), Y14, Y0, Y1); \
	R256FMA((SI)(R8*1), Y15, Y2, Y3); \
	R256FMA((SI)(R8*2), Y14, Y4, Y5); \
	R256FMA((R11), Y15, Y6, Y7); \
	R256FMA((R11)(R8*1), Y14, Y8, Y9); \
	R256FMA((R11)(R8*2), Y15, Y10, Y11); \
	ADDQ    $4, SI; \
	ADDQ    $4, R11; \
	ADDQ    $64, DI

// func fTileRowsAVX2(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)
//
// fTileAVX2 with row r of a at a+r*lda floats: rows 0-2 from SI, 3-5 from
// R11, each base and base+R8 and base+2*R8.
TEXT ·fTileRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R10
	LEAQ (SI)(R10*1), R11
	ZERO256
	TESTQ CX, CX
	JLE   rstore

rloop:
	ROWS256
	DECQ CX
	JNZ  rloop

rstore:
	STORE256(bias+32(FP), c+40(FP), ldc+48(FP), lo+56(FP), hi+60(FP))
	RET

// OUTHI256 is OUT256 storing all 8 floats of lo and those of hi that
// the mask at (R10) selects, which it loads into lo once lo is stored.
#define OUTHI256(lo, hi) \
	VADDPS     Y12, lo, lo; \
	VADDPS     Y13, hi, hi; \
	VMAXPS     lo, Y14, lo; \
	VMAXPS     hi, Y14, hi; \
	VMINPS     lo, Y15, lo; \
	VMINPS     hi, Y15, hi; \
	VMOVUPS    lo, (DX); \
	VMOVUPS    (R10), lo; \
	VMASKMOVPS hi, lo, 32(DX)

// OUTLO256 is OUT256 storing the floats of lo that the mask at (R10)
// selects, loaded into hi (whose channels are not stored).
#define OUTLO256(lo, hi) \
	VADDPS     Y12, lo, lo; \
	VMAXPS     lo, Y14, lo; \
	VMINPS     lo, Y15, lo; \
	VMOVUPS    (R10), hi; \
	VMASKMOVPS lo, hi, (DX)

// func fTileWindowAVX2(kseg, nseg int, a *float32, lda, sega int, b, bias, c *float32, ldc, cols, tiles, astep int, lo, hi float32)
//
// fTileRowsAVX2 for tiles tiles as fTileWindowAVX512 runs them (output
// rows c+i*6*ldc), storing the first cols channels of each row: registers
// as there; the partial stores take their masks from dwMask256.
TEXT ·fTileWindowAVX2(SB), NOSPLIT, $16-104
	MOVQ  tiles+80(FP), AX
	TESTQ AX, AX
	JLE   wdone
	MOVQ  AX, left-8(SP)
	MOVQ  c+56(FP), AX
	MOVQ  AX, cp-16(SP)
	MOVQ  a+16(FP), R15

wtile:
	MOVQ  kseg+0(FP), DX
	MOVQ  nseg+8(FP), BX
	MOVQ  lda+24(FP), R8
	MOVQ  sega+32(FP), R9
	MOVQ  b+40(FP), DI
	SHLQ  $2, R8
	SHLQ  $2, R9
	LEAQ  (R8)(R8*2), R10
	MOVQ  R15, R14
	ZERO256
	TESTQ DX, DX
	JLE   wstore
	TESTQ BX, BX
	JLE   wstore

wseg:
	MOVQ R14, SI
	LEAQ (SI)(R10*1), R11
	MOVQ DX, CX

wloop:
	ROWS256
	DECQ CX
	JNZ  wloop
	ADDQ R9, R14
	DECQ BX
	JNZ  wseg

wstore:
	MOVQ         bias+48(FP), R8
	MOVQ         cp-16(SP), DX
	MOVQ         ldc+64(FP), R9
	SHLQ         $2, R9
	VMOVUPS      (R8), Y12
	VMOVUPS      32(R8), Y13
	VBROADCASTSS lo+96(FP), Y14
	VBROADCASTSS hi+100(FP), Y15
	MOVQ         cols+72(FP), CX
	LEAQ         dwMask256<>(SB), R10
	CMPQ         CX, $8
	JLE          wlo
	CMPQ         CX, $16
	JLT          whi
	OUT256(Y0, Y1)
	ADDQ         R9, DX
	OUT256(Y2, Y3)
	ADDQ         R9, DX
	OUT256(Y4, Y5)
	ADDQ         R9, DX
	OUT256(Y6, Y7)
	ADDQ         R9, DX
	OUT256(Y8, Y9)
	ADDQ         R9, DX
	OUT256(Y10, Y11)
	JMP          wnext

whi:
	// The mask of the high half's cols-8 lanes: offset 4*(16-cols).
	MOVQ $16, AX
	SUBQ CX, AX
	LEAQ (R10)(AX*4), R10
	OUTHI256(Y0, Y1)
	ADDQ R9, DX
	OUTHI256(Y2, Y3)
	ADDQ R9, DX
	OUTHI256(Y4, Y5)
	ADDQ R9, DX
	OUTHI256(Y6, Y7)
	ADDQ R9, DX
	OUTHI256(Y8, Y9)
	ADDQ R9, DX
	OUTHI256(Y10, Y11)
	JMP  wnext

wlo:
	// The mask of the low half's cols lanes: offset 4*(8-cols).
	MOVQ $8, AX
	SUBQ CX, AX
	LEAQ (R10)(AX*4), R10
	OUTLO256(Y0, Y1)
	ADDQ R9, DX
	OUTLO256(Y2, Y3)
	ADDQ R9, DX
	OUTLO256(Y4, Y5)
	ADDQ R9, DX
	OUTLO256(Y6, Y7)
	ADDQ R9, DX
	OUTLO256(Y8, Y9)
	ADDQ R9, DX
	OUTLO256(Y10, Y11)

wnext:
	ADDQ R9, DX
	MOVQ DX, cp-16(SP)
	MOVQ astep+88(FP), AX
	LEAQ (R15)(AX*4), R15
	DECQ left-8(SP)
	JNZ  wtile

wdone:
	VZEROUPPER
	RET

// OUTB256 adds the bias at bias, clamps to [Y14, Y15] and stores to ptr.
#define OUTB256(acc, bias, ptr) \
	VADDPS  bias, acc, acc; \
	VMAXPS  acc, Y14, acc; \
	VMINPS  acc, Y15, acc; \
	VMOVUPS acc, ptr

// func fRow4AVX2(k int, a, b, bias, c *float32, ldb int, lo, hi float32)
TEXT ·fRow4AVX2(SB), NOSPLIT, $0-56
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	MOVQ   ldb+40(FP), R10
	SHLQ   $2, R10
	LEAQ   (R10)(R10*2), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TESTQ  CX, CX
	JLE    store

loop:
	VBROADCASTSS (SI), Y8
	VFMADD231PS  (DI), Y8, Y0
	VFMADD231PS  32(DI), Y8, Y1
	VFMADD231PS  (DI)(R10*1), Y8, Y2
	VFMADD231PS  32(DI)(R10*1), Y8, Y3
	VFMADD231PS  (DI)(R10*2), Y8, Y4
	VFMADD231PS  32(DI)(R10*2), Y8, Y5
	VFMADD231PS  (DI)(R11*1), Y8, Y6
	VFMADD231PS  32(DI)(R11*1), Y8, Y7
	ADDQ         $4, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop

store:
	MOVQ         bias+24(FP), R8
	MOVQ         c+32(FP), DX
	VBROADCASTSS lo+48(FP), Y14
	VBROADCASTSS hi+52(FP), Y15
	OUTB256(Y0, (R8), (DX))
	OUTB256(Y1, 32(R8), 32(DX))
	OUTB256(Y2, 64(R8), 64(DX))
	OUTB256(Y3, 96(R8), 96(DX))
	OUTB256(Y4, 128(R8), 128(DX))
	OUTB256(Y5, 160(R8), 160(DX))
	OUTB256(Y6, 192(R8), 192(DX))
	OUTB256(Y7, 224(R8), 224(DX))
	VZEROUPPER
	RET

// func fRow1AVX2(k int, a, b, bias, c *float32, lo, hi float32)
TEXT ·fRow1AVX2(SB), NOSPLIT, $0-48
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	TESTQ  CX, CX
	JLE    store

loop:
	VBROADCASTSS (SI), Y8
	VFMADD231PS  (DI), Y8, Y0
	VFMADD231PS  32(DI), Y8, Y1
	ADDQ         $4, SI
	ADDQ         $64, DI
	DECQ         CX
	JNZ          loop

store:
	MOVQ         bias+24(FP), R8
	MOVQ         c+32(FP), DX
	VBROADCASTSS lo+40(FP), Y14
	VBROADCASTSS hi+44(FP), Y15
	OUTB256(Y0, (R8), (DX))
	OUTB256(Y1, 32(R8), 32(DX))
	VZEROUPPER
	RET

// dwMask256 holds 8 all-ones lanes then 8 zero lanes: the 8 lanes at byte
// offset 4*(8-r) select the first r.
DATA dwMask256<>+0(SB)/8, $0xffffffffffffffff
DATA dwMask256<>+8(SB)/8, $0xffffffffffffffff
DATA dwMask256<>+16(SB)/8, $0xffffffffffffffff
DATA dwMask256<>+24(SB)/8, $0xffffffffffffffff
DATA dwMask256<>+32(SB)/8, $0
DATA dwMask256<>+40(SB)/8, $0
DATA dwMask256<>+48(SB)/8, $0
DATA dwMask256<>+56(SB)/8, $0
GLOBL dwMask256<>(SB), RODATA|NOPTR, $64

// DW256 accumulates one tap into 8 channels at byte offset off.
#define DW256(off, x, acc) \
	VMOVUPS     off(R14)(AX*4), x; \
	VFMADD231PS off(R15)(R9*4), x, acc

// DWCLAMP256 clamps acc to [Y14, Y15].
#define DWCLAMP256(acc) \
	VMAXPS acc, Y14, acc; \
	VMINPS acc, Y15, acc

// func dwFloatAVX2(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
//
// Registers as in dwFloatAVX512; Y13 is the mask of the last c%8 channels.
TEXT ·dwFloatAVX2(SB), NOSPLIT, $0-88
	MOVQ c+0(FP), CX
	ANDQ $7, CX
	MOVQ $8, AX
	SUBQ CX, AX
	LEAQ dwMask256<>(SB), BX
	VMOVUPS (BX)(AX*4), Y13
	MOVQ npix+8(FP), R13
	MOVQ out+16(FP), DX
	MOVQ bias+24(FP), R8
	MOVQ in+32(FP), SI
	MOVQ w+40(FP), DI
	MOVQ xoff+48(FP), R10
	MOVQ woff+56(FP), R11
	MOVQ ntaps+64(FP), R12
	VBROADCASTSS lo+80(FP), Y14
	VBROADCASTSS hi+84(FP), Y15
	TESTQ R13, R13
	JLE   done

pixel:
	MOVQ c+0(FP), CX
	MOVQ SI, R14
	MOVQ DI, R15

chunk32:
	CMPQ    CX, $32
	JLT     chunk8
	MOVQ    R15, AX
	SUBQ    DI, AX
	VMOVUPS (R8)(AX*1), Y0
	VMOVUPS 32(R8)(AX*1), Y1
	VMOVUPS 64(R8)(AX*1), Y2
	VMOVUPS 96(R8)(AX*1), Y3
	XORQ    BX, BX
	TESTQ   R12, R12
	JLE     store32

taps32:
	MOVQ (R10)(BX*8), AX
	MOVQ (R11)(BX*8), R9
	DW256(0, Y4, Y0)
	DW256(32, Y5, Y1)
	DW256(64, Y6, Y2)
	DW256(96, Y7, Y3)
	INCQ BX
	CMPQ BX, R12
	JLT  taps32

store32:
	DWCLAMP256(Y0)
	DWCLAMP256(Y1)
	DWCLAMP256(Y2)
	DWCLAMP256(Y3)
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ    $128, DX
	ADDQ    $128, R14
	ADDQ    $128, R15
	SUBQ    $32, CX
	JMP     chunk32

chunk8:
	CMPQ    CX, $8
	JLT     tail
	MOVQ    R15, AX
	SUBQ    DI, AX
	VMOVUPS (R8)(AX*1), Y0
	XORQ    BX, BX
	TESTQ   R12, R12
	JLE     store8

taps8:
	MOVQ (R10)(BX*8), AX
	MOVQ (R11)(BX*8), R9
	DW256(0, Y4, Y0)
	INCQ BX
	CMPQ BX, R12
	JLT  taps8

store8:
	DWCLAMP256(Y0)
	VMOVUPS Y0, (DX)
	ADDQ    $32, DX
	ADDQ    $32, R14
	ADDQ    $32, R15
	SUBQ    $8, CX
	JMP     chunk8

tail:
	TESTQ      CX, CX
	JLE        next
	MOVQ       R15, AX
	SUBQ       DI, AX
	VMASKMOVPS (R8)(AX*1), Y13, Y0
	XORQ       BX, BX
	TESTQ      R12, R12
	JLE        storetail

tapstail:
	MOVQ        (R10)(BX*8), AX
	MOVQ        (R11)(BX*8), R9
	VMASKMOVPS  (R14)(AX*4), Y13, Y4
	VMASKMOVPS  (R15)(R9*4), Y13, Y5
	VFMADD231PS Y5, Y4, Y0
	INCQ        BX
	CMPQ        BX, R12
	JLT         tapstail

storetail:
	DWCLAMP256(Y0)
	VMASKMOVPS Y0, Y13, (DX)
	LEAQ       (DX)(CX*4), DX

next:
	MOVQ xstep+72(FP), AX
	LEAQ (SI)(AX*4), SI
	DECQ R13
	JNZ  pixel

done:
	VZEROUPPER
	RET
