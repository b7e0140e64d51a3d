//go:build !purego

package addrow

import "golang.org/x/sys/cpu"

// Kernel names an 8-bit ADD row kernel; 0 is none.
type Kernel int

const (
	zmm Kernel = 1 + iota // AVX-512, any length (the last 16 elements masked)
	ymm                   // AVX2, whole blocks of 8
)

// best is the kernel 8-bit ADD and SUB on rows of equal length run:
// the first this CPU has, or none; GODEBUG=cpu.avx512f=off and
// cpu.avx2=off turn them off.
var best = func() Kernel {
	if ks := Kernels(); len(ks) > 0 {
		return ks[0]
	}
	return 0
}()

// Best is the kernel 8-bit ADD and SUB on rows of equal length run: the
// first this CPU has, or 0 for none.
func Best() Kernel { return best }

// Kernels are the row kernels this CPU runs, fastest first: AVX-512,
// then AVX2.
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
	if k == ymm {
		return "AVX2"
	}
	return "AVX-512"
}

// Unit is how many elements k takes at a time: a row's length is cut to
// a multiple of it.
func (k Kernel) Unit() int {
	if k == ymm {
		return 8
	}
	return 1
}

// Run calls k, directly, so that a does not escape.
func (k Kernel) Run(a *Args) {
	if k == ymm {
		addRowAVX2(a)
		return
	}
	addRowAVX512(a)
}

// RunMul calls k's MUL, directly, so that a does not escape: Z[i] is the
// product of X[i] and Y[i], each plus its Term's offset, shifted left by
// LS and rescaled by the output Term (Neg and the inputs' Mul, RShift,
// Mask and Half are not read).
func (k Kernel) RunMul(a *Args) {
	if k == ymm {
		mulRowAVX2(a)
		return
	}
	mulRowAVX512(a)
}

// addRowAVX512 is the 8-bit ADD.s rescaling in full, in AVX-512
// assembly, 16 elements at a time.
//
//go:noescape
func addRowAVX512(a *Args)

// addRowAVX2 is addRowAVX512 in AVX2, 8 elements at a time; a.n is a
// multiple of 8.
//
//go:noescape
func addRowAVX2(a *Args)

// mulRowAVX512 is the 8-bit MUL's rescaling in full, in AVX-512 assembly,
// 16 elements at a time.
//
//go:noescape
func mulRowAVX512(a *Args)

// mulRowAVX2 is mulRowAVX512 in AVX2, 8 elements at a time; a.n is a
// multiple of 8.
//
//go:noescape
func mulRowAVX2(a *Args)
