//go:build !purego

package f32

import "golang.org/x/sys/cpu"

// The assembly float kernels (float_kernels_amd64.s). AVX-512F tiles are
// 12 rows by one 16-lane register; AVX2+FMA tiles 6 rows by two 8-lane
// registers. Both use the panel layout of float_kernels.go.

//go:noescape
func fTileAVX512(k int, a, b, bias, c *float32, ldc int, lo, hi float32)

//go:noescape
func fTileRowsAVX512(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)

//go:noescape
func fTileWindowAVX512(kseg, nseg int, a *float32, lda, sega int, b, bias, c *float32, ldc, cols, tiles, astep int, lo, hi float32)

//go:noescape
func fRow4AVX512(k int, a, b, bias, c *float32, ldb int, lo, hi float32)

//go:noescape
func fRow1AVX512(k int, a, b, bias, c *float32, lo, hi float32)

//go:noescape
func dwFloatAVX512(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)

//go:noescape
func fTileAVX2(k int, a, b, bias, c *float32, ldc int, lo, hi float32)

//go:noescape
func fTileRowsAVX2(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)

//go:noescape
func fTileWindowAVX2(kseg, nseg int, a *float32, lda, sega int, b, bias, c *float32, ldc, cols, tiles, astep int, lo, hi float32)

//go:noescape
func fRow4AVX2(k int, a, b, bias, c *float32, ldb int, lo, hi float32)

//go:noescape
func fRow1AVX2(k int, a, b, bias, c *float32, lo, hi float32)

//go:noescape
func dwFloatAVX2(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)

var (
	avx512FloatKernels = Kernels{Name: "avx512", MR: 12, Tile: fTileAVX512, Rows: fTileRowsAVX512, Window: fTileWindowAVX512, Row4: fRow4AVX512, Row1: fRow1AVX512, DW: dwFloatAVX512}
	avx2FloatKernels   = Kernels{Name: "avx2", MR: 6, Tile: fTileAVX2, Rows: fTileRowsAVX2, Window: fTileWindowAVX2, Row4: fRow4AVX2, Row1: fRow1AVX2, DW: dwFloatAVX2}
)

// Sets lists the float kernel sets this CPU can run, fastest
// first; the Go twins come last.
func Sets() []*Kernels {
	var sets []*Kernels
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL {
		sets = append(sets, &avx512FloatKernels)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		sets = append(sets, &avx2FloatKernels)
	}
	return append(sets, &goKernels)
}
