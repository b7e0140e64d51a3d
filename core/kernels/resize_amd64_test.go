//go:build !purego

package kernels

import (
	"testing"
	"unsafe"
)

// TestResizeRowLayout checks the offsets resize_amd64.s reads.
func TestResizeRowLayout(t *testing.T) {
	var a resizeRowArgs
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"top", unsafe.Offsetof(a.top), 0}, {"bot", unsafe.Offsetof(a.bot), 8},
		{"x0", unsafe.Offsetof(a.x0), 16}, {"x1", unsafe.Offsetof(a.x1), 24},
		{"omx", unsafe.Offsetof(a.omx), 32}, {"dx", unsafe.Offsetof(a.dx), 40},
		{"wy", unsafe.Offsetof(a.wy), 48}, {"c", unsafe.Offsetof(a.c), 56},
		{"full", unsafe.Offsetof(a.full), 64}, {"tail", unsafe.Offsetof(a.tail), 72},
		{"n", unsafe.Offsetof(a.n), 80}, {"dst", unsafe.Offsetof(a.dst), 88},
	} {
		if c.got != c.want {
			t.Errorf("resizeRowArgs.%s at %d, the assembly reads %d", c.name, c.got, c.want)
		}
	}
}
