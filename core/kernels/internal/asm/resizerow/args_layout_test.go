//go:build (amd64 || arm64) && !purego

package resizerow

import (
	"testing"
	"unsafe"
)

// TestAsmLayout checks the offsets of Args that the assembly (amd64 and
// arm64, both 64-bit) reads from args.h.
func TestAsmLayout(t *testing.T) {
	var r Args
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"Args.top", unsafe.Offsetof(r.Top), 0}, {"Args.bot", unsafe.Offsetof(r.Bot), 8},
		{"Args.x0", unsafe.Offsetof(r.X0), 16}, {"Args.x1", unsafe.Offsetof(r.X1), 24},
		{"Args.omx", unsafe.Offsetof(r.OMX), 32}, {"Args.dx", unsafe.Offsetof(r.DX), 40},
		{"Args.wy", unsafe.Offsetof(r.WY), 48}, {"Args.c", unsafe.Offsetof(r.C), 56},
		{"Args.full", unsafe.Offsetof(r.Full), 64}, {"Args.tail", unsafe.Offsetof(r.Tail), 72},
		{"Args.n", unsafe.Offsetof(r.N), 80}, {"Args.dst", unsafe.Offsetof(r.Dst), 88},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly expects %d", c.name, c.got, c.want)
		}
	}
}
