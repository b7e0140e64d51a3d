//go:build (amd64 || arm64) && !purego

package kernels

import (
	"testing"
	"unsafe"
)

// TestAsmLayout checks the offsets of the argument structs that the
// assembly (amd64 and arm64, both 64-bit) reads from args.h.
func TestAsmLayout(t *testing.T) {
	var a qgemmTileArgs
	var b qvBlock
	var d dwRowArgs
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"qgemmTileArgs.a", unsafe.Offsetof(a.a), 0},
		{"qgemmTileArgs.lda", unsafe.Offsetof(a.lda), 8},
		{"qgemmTileArgs.rows", unsafe.Offsetof(a.rows), 16},
		{"qgemmTileArgs.k4", unsafe.Offsetof(a.k4), 24},
		{"qgemmTileArgs.w", unsafe.Offsetof(a.w), 32},
		{"qgemmTileArgs.wstride", unsafe.Offsetof(a.wstride), 40},
		{"qgemmTileArgs.nb", unsafe.Offsetof(a.nb), 48},
		{"qgemmTileArgs.tail", unsafe.Offsetof(a.tail), 56},
		{"qgemmTileArgs.rowterm", unsafe.Offsetof(a.rowterm), 64},
		{"qgemmTileArgs.qp", unsafe.Offsetof(a.qp), 72},
		{"qgemmTileArgs.out", unsafe.Offsetof(a.out), 80},
		{"qgemmTileArgs.ldo", unsafe.Offsetof(a.ldo), 88},
		{"qgemmTileArgs.zp", unsafe.Offsetof(a.zp), 96},
		{"qgemmTileArgs.lo", unsafe.Offsetof(a.lo), 104},
		{"qgemmTileArgs.hi", unsafe.Offsetof(a.hi), 112},
		{"qgemmTileArgs.signed", unsafe.Offsetof(a.signed), 120},
		{"qvBlock.cst", unsafe.Offsetof(b.cst), 0},
		{"qvBlock.left", unsafe.Offsetof(b.left), 64},
		{"qvBlock.mult", unsafe.Offsetof(b.mult), 128},
		{"qvBlock.addE", unsafe.Offsetof(b.addE), 192},
		{"qvBlock.addO", unsafe.Offsetof(b.addO), 256},
		{"qvBlock.shE", unsafe.Offsetof(b.shE), 320},
		{"qvBlock.shO", unsafe.Offsetof(b.shO), 384},
		{"qvBlock.negE", unsafe.Offsetof(b.negE), 448},
		{"qvBlock.negO", unsafe.Offsetof(b.negO), 512},
		{"sizeof qvBlock", unsafe.Sizeof(b), 576},
		{"dwRowArgs.rows", unsafe.Offsetof(d.rows), 0},
		{"dwRowArgs.kh", unsafe.Offsetof(d.kh), 8},
		{"dwRowArgs.kw", unsafe.Offsetof(d.kw), 16},
		{"dwRowArgs.tapStep", unsafe.Offsetof(d.tapStep), 24},
		{"dwRowArgs.pixStep", unsafe.Offsetof(d.pixStep), 32},
		{"dwRowArgs.npix", unsafe.Offsetof(d.npix), 40},
		{"dwRowArgs.nb", unsafe.Offsetof(d.nb), 48},
		{"dwRowArgs.tail", unsafe.Offsetof(d.tail), 56},
		{"dwRowArgs.w", unsafe.Offsetof(d.w), 64},
		{"dwRowArgs.wstride", unsafe.Offsetof(d.wstride), 72},
		{"dwRowArgs.qp", unsafe.Offsetof(d.qp), 80},
		{"dwRowArgs.out", unsafe.Offsetof(d.out), 88},
		{"dwRowArgs.outC", unsafe.Offsetof(d.outC), 96},
		{"dwRowArgs.zp", unsafe.Offsetof(d.zp), 104},
		{"dwRowArgs.lo", unsafe.Offsetof(d.lo), 112},
		{"dwRowArgs.hi", unsafe.Offsetof(d.hi), 120},
		{"dwRowArgs.signed", unsafe.Offsetof(d.signed), 128},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly expects %d", c.name, c.got, c.want)
		}
	}
}
