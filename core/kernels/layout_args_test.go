//go:build (amd64 || arm64) && !purego

package kernels

import (
	"testing"
	"unsafe"
)

// TestArgLayouts checks the offsets that resize_amd64.s and resize_arm64.s
// (resizeRowArgs) and argbytes_amd64.s (argBytesArgs) read.
func TestArgLayouts(t *testing.T) {
	var a resizeRowArgs
	var b argBytesArgs
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
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly reads %d", c.name, c.got, c.want)
		}
	}
}
