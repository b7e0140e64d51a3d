//go:build (amd64 || arm64) && !purego

package addrow

import (
	"testing"
	"unsafe"
)

// TestAsmLayout checks the offsets of Args and Term that the assembly
// (amd64 and arm64, both 64-bit) reads from args.h.
func TestAsmLayout(t *testing.T) {
	var ad Args
	var term Term
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"Args.x", unsafe.Offsetof(ad.X), 0}, {"Args.y", unsafe.Offsetof(ad.Y), 8}, {"Args.z", unsafe.Offsetof(ad.Z), 16},
		{"Args.n", unsafe.Offsetof(ad.N), 24}, {"Args.signed", unsafe.Offsetof(ad.Signed), 32}, {"Args.ls", unsafe.Offsetof(ad.LS), 36},
		{"Args.term", unsafe.Offsetof(ad.Term), 40}, {"Args.term[1]", unsafe.Offsetof(ad.Term) + unsafe.Sizeof(term), 60},
		{"Args.neg", unsafe.Offsetof(ad.Neg), 100}, {"Args.lo", unsafe.Offsetof(ad.Lo), 104}, {"Args.hi", unsafe.Offsetof(ad.Hi), 108},
		{"Term.mul", unsafe.Offsetof(term.Mul), 4}, {"Term.rshift", unsafe.Offsetof(term.RShift), 8},
		{"Term.mask", unsafe.Offsetof(term.Mask), 12}, {"Term.half", unsafe.Offsetof(term.Half), 16},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly expects %d", c.name, c.got, c.want)
		}
	}
}
