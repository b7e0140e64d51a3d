//go:build !purego

package minmax8

import "golang.org/x/sys/cpu"

const (
	zmm Kernel = 1 + iota // AVX-512BW: 64 bytes at a time, any length
	ymm                   // AVX2: whole blocks of 32 bytes
)

// best is the kernel MAXIMUM and MINIMUM run: the first this CPU has, or
// the twin; GODEBUG=cpu.avx512f=off and cpu.avx2=off turn them off.
var best = func() Kernel {
	if ks := Kernels(); len(ks) > 0 {
		return ks[0]
	}
	return 0
}()

// Kernels are the row kernels this CPU runs, fastest first.
func Kernels() []Kernel {
	var ks []Kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2 {
		ks = append(ks, zmm)
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, ymm)
	}
	return ks
}

// String names k in test output.
func (k Kernel) String() string {
	switch k {
	case zmm:
		return "AVX-512"
	case ymm:
		return "AVX2"
	}
	return "Go"
}

// run computes the bytes k takes (all, or whole blocks of 32) and
// returns how many.
func (k Kernel) run(op Op, z, x, y []byte) int {
	n := len(z)
	if k == ymm {
		n &^= 31
	}
	if n > 0 {
		if k == zmm {
			rowAVX512(op, &z[0], &x[0], &y[0], n)
		} else {
			rowAVX2(op, &z[0], &x[0], &y[0], n)
		}
	}
	return n
}

// rowAVX512 is runGo on n bytes in AVX-512BW, the last block masked.
//
//go:noescape
func rowAVX512(op Op, z, x, y *byte, n int)

// rowAVX2 is runGo on n bytes (a multiple of 32) in AVX2.
//
//go:noescape
func rowAVX2(op Op, z, x, y *byte, n int)
