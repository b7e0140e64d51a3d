//go:build !purego

package resizerow

import "golang.org/x/sys/cpu"

// hasAsm says whether the UINT8 resize rows run the AVX-512 kernel
// (resize_amd64.s); GODEBUG=cpu.avx512bw=off turns it off.
var hasAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// Row computes one output row of the UINT8 bilinear resize.
func Row(a *Args) {
	if hasAsm {
		resizeRowU8AVX512(a)
		return
	}
	RowGo(a)
}

// resizeRowU8AVX512 is RowGo in AVX-512 assembly, 16 channels at
// a time.
//
//go:noescape
func resizeRowU8AVX512(a *Args)
