//go:build !purego

package lut8

import "golang.org/x/sys/cpu"

const (
	vbmi Kernel = 1 + iota // AVX-512 VBMI: two VPERMT2B over 128 bytes each, 64 bytes at a time, any length
	avx2                   // AVX2: sixteen VPSHUFB over 16 bytes each, 32 bytes at a time
)

// best is the kernel Apply runs: the first this CPU has, or the twin;
// GODEBUG=cpu.avx512f=off and cpu.avx2=off turn them off.
var best = func() Kernel {
	if ks := Kernels(); len(ks) > 0 {
		return ks[0]
	}
	return 0
}()

// Kernels are the lookup kernels this CPU runs, fastest first.
func Kernels() []Kernel {
	var ks []Kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VBMI && cpu.X86.HasBMI2 {
		ks = append(ks, vbmi)
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, avx2)
	}
	return ks
}

// String names k in test output.
func (k Kernel) String() string {
	switch k {
	case vbmi:
		return "AVX-512VBMI"
	case avx2:
		return "AVX2"
	}
	return "Go"
}

// run maps the bytes k takes (all of them, or whole blocks of 32) and
// returns how many it did.
func (k Kernel) run(table *[256]byte, src, dst []byte) int {
	switch k {
	case vbmi:
		if len(src) > 0 {
			lookupVBMI(table, &src[0], &dst[0], len(src))
		}
		return len(src)
	case avx2:
		n := len(src) &^ 31
		if n > 0 {
			lookupAVX2(table, &src[0], &dst[0], n)
		}
		return n
	}
	return 0
}

// lookupVBMI maps the n bytes at src through table into dst: the table in
// four registers, two VPERMT2B lookups of the low seven bits of every
// byte, the top bit choosing between them; the last block masked.
//
//go:noescape
func lookupVBMI(table *[256]byte, src, dst *byte, n int)

// lookupAVX2 maps the n bytes at src (a multiple of 32) through table
// into dst with sixteen VPSHUFB lookups of 16 entries each.
//
//go:noescape
func lookupAVX2(table *[256]byte, src, dst *byte, n int)
