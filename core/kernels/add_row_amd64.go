//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// addRowKernel names an 8-bit ADD row kernel; 0 is none.
type addRowKernel int

const (
	addRowZMM addRowKernel = 1 + iota // AVX-512, any length (the last 16 elements masked)
	addRowYMM                         // AVX2, whole blocks of 8
)

// addRowCPU is the kernel 8-bit ADD and SUB on rows of equal length run:
// AVX-512, or AVX2 on CPUs without it, or none; GODEBUG=cpu.avx512f=off
// and cpu.avx2=off turn them off.
var addRowCPU = pickAddRow()

func pickAddRow() addRowKernel {
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2:
		return addRowZMM
	case cpu.X86.HasAVX2:
		return addRowYMM
	}
	return 0
}

// unit is how many elements k takes at a time: a row's length is cut to
// a multiple of it.
func (k addRowKernel) unit() int {
	if k == addRowYMM {
		return 8
	}
	return 1
}

// run calls k, directly, so that a does not escape.
func (k addRowKernel) run(a *addRowArgs) {
	if k == addRowYMM {
		addRowAVX2(a)
		return
	}
	addRowAVX512(a)
}

// addRowAVX512 is quantAddRow's 8-bit rescaling in full, in AVX-512
// assembly, 16 elements at a time.
//
//go:noescape
func addRowAVX512(a *addRowArgs)

// addRowAVX2 is addRowAVX512 in AVX2, 8 elements at a time; a.n is a
// multiple of 8.
//
//go:noescape
func addRowAVX2(a *addRowArgs)
