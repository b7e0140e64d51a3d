//go:build !purego

package kernels

import (
	"testing"
	"unsafe"
)

// TestArgBytesLayout checks the offsets argbytes_amd64.s reads.
func TestArgBytesLayout(t *testing.T) {
	var a argBytesArgs
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"src", unsafe.Offsetof(a.src), 0}, {"n", unsafe.Offsetof(a.n), 8}, {"size", unsafe.Offsetof(a.size), 16},
		{"mask", unsafe.Offsetof(a.mask), 24}, {"fill", unsafe.Offsetof(a.fill), 32}, {"mode", unsafe.Offsetof(a.mode), 40},
		{"dst", unsafe.Offsetof(a.dst), 48},
	} {
		if c.got != c.want {
			t.Errorf("argBytesArgs.%s at %d, the assembly reads %d", c.name, c.got, c.want)
		}
	}
}
