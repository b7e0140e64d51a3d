//go:build !purego

package f32elem

import "golang.org/x/sys/cpu"

// The assembly kernels (f32elem_amd64.s): AVX-512F takes any length (the
// last elements under a mask), AVX2 whole blocks of 8.
var (
	avx512Kernel = Kernel{Name: "avx512", unit: 1, asm: asmAVX512}
	avx2Kernel   = Kernel{Name: "avx2", unit: 8, asm: asmAVX2}
)

// The assembly of Kernel.asm.
const (
	asmAVX512 = 1 + iota
	asmAVX2
)

// runAsm runs the assembly named asm on a, called directly so that a
// does not escape: Logistic and Tanh are in sigmoid_amd64.s.
func runAsm(asm int, a *Args) {
	sigmoid := a.Op >= int32(Logistic)
	switch {
	case asm == asmAVX2 && sigmoid:
		sigmoidAVX2(a)
	case asm == asmAVX2:
		runAVX2(a)
	case sigmoid:
		sigmoidAVX512(a)
	default:
		runAVX512(a)
	}
}

// Sets lists the kernel sets this CPU can run, fastest first; the Go
// twins come last.
func Sets() []*Kernel {
	var sets []*Kernel
	if cpu.X86.HasAVX512F {
		sets = append(sets, &avx512Kernel)
	}
	if cpu.X86.HasAVX2 {
		sets = append(sets, &avx2Kernel)
	}
	return append(sets, &goKernel)
}

// runAVX512 runs a.Op on a.N elements, 32 at a time, then 16, then the
// rest under a mask.
//
//go:noescape
func runAVX512(a *Args)

// runAVX2 runs a.Op on a.N elements, a multiple of 8: 16 at a time, then 8.
//
//go:noescape
func runAVX2(a *Args)

// sigmoidAVX512 runs a.Op, Logistic or Tanh, on a.N elements, 16 at a
// time, then the rest under a mask.
//
//go:noescape
func sigmoidAVX512(a *Args)

// sigmoidAVX2 runs a.Op, Logistic or Tanh, on a.N elements, a multiple
// of 8, 8 at a time.
//
//go:noescape
func sigmoidAVX2(a *Args)
