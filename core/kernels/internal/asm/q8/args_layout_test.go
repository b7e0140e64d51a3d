//go:build (amd64 || arm64) && !purego

package q8

import (
	"testing"
	"unsafe"
)

// TestAsmLayout checks the offsets of the argument structs that the
// assembly (amd64 and arm64, both 64-bit) reads from args.h.
func TestAsmLayout(t *testing.T) {
	var a TileArgs
	var b Block
	var d RowArgs
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"TileArgs.A", unsafe.Offsetof(a.A), 0},
		{"TileArgs.LDA", unsafe.Offsetof(a.LDA), 8},
		{"TileArgs.Rows", unsafe.Offsetof(a.Rows), 16},
		{"TileArgs.K4", unsafe.Offsetof(a.K4), 24},
		{"TileArgs.W", unsafe.Offsetof(a.W), 32},
		{"TileArgs.WStride", unsafe.Offsetof(a.WStride), 40},
		{"TileArgs.NB", unsafe.Offsetof(a.NB), 48},
		{"TileArgs.Tail", unsafe.Offsetof(a.Tail), 56},
		{"TileArgs.RowTerm", unsafe.Offsetof(a.RowTerm), 64},
		{"TileArgs.QP", unsafe.Offsetof(a.QP), 72},
		{"TileArgs.Out", unsafe.Offsetof(a.Out), 80},
		{"TileArgs.LDO", unsafe.Offsetof(a.LDO), 88},
		{"TileArgs.ZP", unsafe.Offsetof(a.ZP), 96},
		{"TileArgs.Lo", unsafe.Offsetof(a.Lo), 104},
		{"TileArgs.Hi", unsafe.Offsetof(a.Hi), 112},
		{"TileArgs.Signed", unsafe.Offsetof(a.Signed), 120},
		{"TileArgs.Wide", unsafe.Offsetof(a.Wide), 128},
		{"TileArgs.UnsignedW", unsafe.Offsetof(a.UnsignedW), 136},
		{"TileArgs.Deep", unsafe.Offsetof(a.Deep), 144},
		{"Block.Cst", unsafe.Offsetof(b.Cst), 0},
		{"Block.Left", unsafe.Offsetof(b.Left), 64},
		{"Block.Mult", unsafe.Offsetof(b.Mult), 128},
		{"Block.AddE", unsafe.Offsetof(b.AddE), 192},
		{"Block.AddO", unsafe.Offsetof(b.AddO), 256},
		{"Block.ShE", unsafe.Offsetof(b.ShE), 320},
		{"Block.ShO", unsafe.Offsetof(b.ShO), 384},
		{"Block.NegE", unsafe.Offsetof(b.NegE), 448},
		{"Block.NegO", unsafe.Offsetof(b.NegO), 512},
		{"Block.BAddE", unsafe.Offsetof(b.BAddE), 576},
		{"Block.BAddO", unsafe.Offsetof(b.BAddO), 640},
		{"Block.Corr", unsafe.Offsetof(b.Corr), 704},
		{"Block.NegRight", unsafe.Offsetof(b.NegRight), 768},
		{"sizeof Block", unsafe.Sizeof(b), 832},
		{"RowArgs.Rows", unsafe.Offsetof(d.Rows), 0},
		{"RowArgs.KH", unsafe.Offsetof(d.KH), 8},
		{"RowArgs.KW", unsafe.Offsetof(d.KW), 16},
		{"RowArgs.TapStep", unsafe.Offsetof(d.TapStep), 24},
		{"RowArgs.PixStep", unsafe.Offsetof(d.PixStep), 32},
		{"RowArgs.NPix", unsafe.Offsetof(d.NPix), 40},
		{"RowArgs.NB", unsafe.Offsetof(d.NB), 48},
		{"RowArgs.Tail", unsafe.Offsetof(d.Tail), 56},
		{"RowArgs.W", unsafe.Offsetof(d.W), 64},
		{"RowArgs.WStride", unsafe.Offsetof(d.WStride), 72},
		{"RowArgs.QP", unsafe.Offsetof(d.QP), 80},
		{"RowArgs.Out", unsafe.Offsetof(d.Out), 88},
		{"RowArgs.OutC", unsafe.Offsetof(d.OutC), 96},
		{"RowArgs.ZP", unsafe.Offsetof(d.ZP), 104},
		{"RowArgs.Lo", unsafe.Offsetof(d.Lo), 112},
		{"RowArgs.Hi", unsafe.Offsetof(d.Hi), 120},
		{"RowArgs.Signed", unsafe.Offsetof(d.Signed), 128},
		{"RowArgs.Paired", unsafe.Offsetof(d.Paired), 136},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly expects %d", c.name, c.got, c.want)
		}
	}
}
