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
	var f ArgsF32
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"ArgsF32.top", unsafe.Offsetof(f.Top), 0}, {"ArgsF32.bot", unsafe.Offsetof(f.Bot), 8},
		{"ArgsF32.x0", unsafe.Offsetof(f.X0), 16}, {"ArgsF32.x1", unsafe.Offsetof(f.X1), 24},
		{"ArgsF32.omx", unsafe.Offsetof(f.OMX), 32}, {"ArgsF32.dx", unsafe.Offsetof(f.DX), 40},
		{"ArgsF32.wy", unsafe.Offsetof(f.WY), 48}, {"ArgsF32.c", unsafe.Offsetof(f.C), 56},
		{"ArgsF32.full", unsafe.Offsetof(f.Full), 64}, {"ArgsF32.tail", unsafe.Offsetof(f.Tail), 72},
		{"ArgsF32.n", unsafe.Offsetof(f.N), 80}, {"ArgsF32.dst", unsafe.Offsetof(f.Dst), 88},
		{"ArgsF32.full8", unsafe.Offsetof(f.Full8), 104},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly expects %d", c.name, c.got, c.want)
		}
	}
}
