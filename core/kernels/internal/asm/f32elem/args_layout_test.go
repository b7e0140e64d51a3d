//go:build amd64 || arm64

package f32elem

import (
	"testing"
	"unsafe"
)

// TestAsmLayout checks the offsets of Args that the assembly (amd64 and
// arm64, both 64-bit) reads from args.h, and the Op codes it compares.
func TestAsmLayout(t *testing.T) {
	var a Args
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"Args.X", unsafe.Offsetof(a.X), 0}, {"Args.Y", unsafe.Offsetof(a.Y), 8}, {"Args.Z", unsafe.Offsetof(a.Z), 16},
		{"Args.N", unsafe.Offsetof(a.N), 24}, {"Args.XStep", unsafe.Offsetof(a.XStep), 32}, {"Args.YStep", unsafe.Offsetof(a.YStep), 40},
		{"Args.Op", unsafe.Offsetof(a.Op), 48}, {"Args.Lo", unsafe.Offsetof(a.Lo), 52}, {"Args.Hi", unsafe.Offsetof(a.Hi), 56},
		{"Args.Alpha", unsafe.Offsetof(a.Alpha), 60}, {"Args.Buf", unsafe.Offsetof(a.Buf), 64},
		{"MaxMin", uintptr(MaxMin), 0}, {"Clamp", uintptr(Clamp), 1}, {"LeakyRelu", uintptr(LeakyRelu), 2},
		{"HardSwish", uintptr(HardSwish), 3}, {"Add", uintptr(Add), 4}, {"Sub", uintptr(Sub), 5},
		{"Mul", uintptr(Mul), 6}, {"Max", uintptr(Max), 7}, {"Min", uintptr(Min), 8},
		{"PRelu", uintptr(PRelu), 9}, {"AddMaxMin", uintptr(AddMaxMin), 10}, {"SubMaxMin", uintptr(SubMaxMin), 11},
		{"MulMaxMin", uintptr(MulMaxMin), 12}, {"Logistic", uintptr(Logistic), 13}, {"Tanh", uintptr(Tanh), 14},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly expects %d", c.name, c.got, c.want)
		}
	}
}
