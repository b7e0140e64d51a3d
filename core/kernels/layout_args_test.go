//go:build (amd64 || arm64) && !purego

package kernels

import (
	"testing"
	"unsafe"
)

// TestArgLayouts checks the offsets that the resize, ARG_MAX and 8-bit ADD
// kernels' assembly (resize_*.s, argbytes_*.s, add_row_*.s) reads.
func TestArgLayouts(t *testing.T) {
	var a resizeRowArgs
	var b argBytesArgs
	var d addRowArgs
	var term addTerm
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"resizeRowArgs.top", unsafe.Offsetof(a.top), 0}, {"resizeRowArgs.bot", unsafe.Offsetof(a.bot), 8},
		{"resizeRowArgs.x0", unsafe.Offsetof(a.x0), 16}, {"resizeRowArgs.x1", unsafe.Offsetof(a.x1), 24},
		{"resizeRowArgs.omx", unsafe.Offsetof(a.omx), 32}, {"resizeRowArgs.dx", unsafe.Offsetof(a.dx), 40},
		{"resizeRowArgs.wy", unsafe.Offsetof(a.wy), 48}, {"resizeRowArgs.c", unsafe.Offsetof(a.c), 56},
		{"resizeRowArgs.full", unsafe.Offsetof(a.full), 64}, {"resizeRowArgs.tail", unsafe.Offsetof(a.tail), 72},
		{"resizeRowArgs.n", unsafe.Offsetof(a.n), 80}, {"resizeRowArgs.dst", unsafe.Offsetof(a.dst), 88},
		{"argBytesArgs.src", unsafe.Offsetof(b.src), 0}, {"argBytesArgs.n", unsafe.Offsetof(b.n), 8}, {"argBytesArgs.size", unsafe.Offsetof(b.size), 16},
		{"argBytesArgs.mask", unsafe.Offsetof(b.mask), 24}, {"argBytesArgs.fill", unsafe.Offsetof(b.fill), 32}, {"argBytesArgs.mode", unsafe.Offsetof(b.mode), 40},
		{"argBytesArgs.dst", unsafe.Offsetof(b.dst), 48},
		{"addRowArgs.x", unsafe.Offsetof(d.x), 0}, {"addRowArgs.y", unsafe.Offsetof(d.y), 8}, {"addRowArgs.z", unsafe.Offsetof(d.z), 16},
		{"addRowArgs.n", unsafe.Offsetof(d.n), 24}, {"addRowArgs.signed", unsafe.Offsetof(d.signed), 32}, {"addRowArgs.ls", unsafe.Offsetof(d.ls), 36},
		{"addRowArgs.term", unsafe.Offsetof(d.term), 40}, {"addRowArgs.term[1]", unsafe.Offsetof(d.term) + unsafe.Sizeof(term), 60},
		{"addRowArgs.neg", unsafe.Offsetof(d.neg), 100}, {"addRowArgs.lo", unsafe.Offsetof(d.lo), 104}, {"addRowArgs.hi", unsafe.Offsetof(d.hi), 108},
		{"addTerm.mul", unsafe.Offsetof(term.mul), 4}, {"addTerm.rshift", unsafe.Offsetof(term.rshift), 8},
		{"addTerm.mask", unsafe.Offsetof(term.mask), 12}, {"addTerm.half", unsafe.Offsetof(term.half), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly reads %d", c.name, c.got, c.want)
		}
	}
}
