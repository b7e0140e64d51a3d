//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// argBytesAsm says whether byte ARG_MAX/ARG_MIN runs the AVX-512 kernel
// (argbytes_amd64.s); GODEBUG=cpu.avx512bw=off turns it off.
var argBytesAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasBMI1

// argBytes runs the byte ARG_MAX/ARG_MIN kernel on a.
func argBytes(a *argBytesArgs) {
	if argBytesAsm {
		argBytesAVX512(a)
		return
	}
	argBytesGo(a)
}

// argBytesAVX512 is argBytesGo in AVX-512 assembly: a run in one register,
// its extreme by halving, its first index from a compare mask.
//
//go:noescape
func argBytesAVX512(a *argBytesArgs)
