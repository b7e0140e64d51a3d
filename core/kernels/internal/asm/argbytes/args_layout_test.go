//go:build (amd64 || arm64) && !purego

package argbytes

import (
	"testing"
	"unsafe"
)

// TestAsmLayout checks the offsets of args that the assembly (amd64 and
// arm64, both 64-bit) reads from args.h.
func TestAsmLayout(t *testing.T) {
	var g args
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"args.src", unsafe.Offsetof(g.src), 0}, {"args.n", unsafe.Offsetof(g.n), 8}, {"args.size", unsafe.Offsetof(g.size), 16},
		{"args.mask", unsafe.Offsetof(g.mask), 24}, {"args.fill", unsafe.Offsetof(g.fill), 32}, {"args.mode", unsafe.Offsetof(g.mode), 40},
		{"args.dst", unsafe.Offsetof(g.dst), 48},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, the assembly expects %d", c.name, c.got, c.want)
		}
	}
}
