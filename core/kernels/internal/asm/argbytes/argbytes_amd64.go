//go:build !purego

package argbytes

import "golang.org/x/sys/cpu"

// hasAsm says whether byte ARG_MAX/ARG_MIN runs the AVX-512 kernel
// (argbytes_amd64.s); GODEBUG=cpu.avx512bw=off turns it off.
var hasAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasBMI1

// run runs the byte ARG_MAX/ARG_MIN kernel on a.
func run(a *args) {
	if hasAsm {
		argBytesAVX512(a)
		return
	}
	runGo(a)
}

// argBytesAVX512 is runGo in AVX-512 assembly: a run in one register,
// its extreme by halving, its first index from a compare mask.
//
//go:noescape
func argBytesAVX512(a *args)
