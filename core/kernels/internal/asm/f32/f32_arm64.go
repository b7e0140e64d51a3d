//go:build !purego

package f32

// The NEON float kernels (float_kernels_arm64.s). A tile is 6 rows by four
// 4-lane registers (NR = 16 channels): 24 accumulators, 4 weight and 3
// input registers, 31 of the 32 vector registers. Eight rows would take
// all 32 for accumulators alone; seven leave too few for the operands.

//go:noescape
func fTileNEON(k int, a, b, bias, c *float32, ldc int, lo, hi float32)

//go:noescape
func fTileRowsNEON(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)

//go:noescape
func fRow4NEON(k int, a, b, bias, c *float32, ldb int, lo, hi float32)

//go:noescape
func fRow1NEON(k int, a, b, bias, c *float32, lo, hi float32)

//go:noescape
func dwFloatNEON(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)

var neonFloatKernels = Kernels{Name: "neon", MR: 6, Tile: fTileNEON, Rows: fTileRowsNEON, Row4: fRow4NEON, Row1: fRow1NEON, DW: dwFloatNEON}

// Sets lists the float kernel sets this CPU can run, fastest
// first; the Go twins come last. Advanced SIMD is part of every arm64 core
// Go runs on (the runtime itself uses it), so NEON needs no feature check.
func Sets() []*Kernels {
	return []*Kernels{&neonFloatKernels, &goKernels}
}
