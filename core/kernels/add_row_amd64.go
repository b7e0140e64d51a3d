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
// the first this CPU has, or none; GODEBUG=cpu.avx512f=off and
// cpu.avx2=off turn them off.
var addRowCPU = func() addRowKernel {
	if ks := addRowKernels(); len(ks) > 0 {
		return ks[0]
	}
	return 0
}()

// addRowKernels are the row kernels this CPU runs, fastest first: AVX-512,
// then AVX2.
func addRowKernels() []addRowKernel {
	var ks []addRowKernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2 {
		ks = append(ks, addRowZMM)
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, addRowYMM)
	}
	return ks
}

// String names k in test output.
func (k addRowKernel) String() string {
	if k == addRowYMM {
		return "AVX2"
	}
	return "AVX-512"
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
