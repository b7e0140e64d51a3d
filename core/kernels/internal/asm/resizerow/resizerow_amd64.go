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

// hasAsmF32 says whether the float resize rows run the AVX-512 kernel;
// GODEBUG=cpu.avx512f=off turns it off.
var hasAsmF32 = cpu.X86.HasAVX512F

// RowF32 computes one output row of the float bilinear resize.
func RowF32(a *ArgsF32) {
	if hasAsmF32 {
		resizeRowF32AVX512(a)
		return
	}
	RowF32Go(a)
}

// resizeRowF32AVX512 is RowF32Go in AVX-512 assembly, 16 channels at a
// time.
//
//go:noescape
func resizeRowF32AVX512(a *ArgsF32)

// resizeRowU8AVX512 is RowGo in AVX-512 assembly, 16 channels at
// a time.
//
//go:noescape
func resizeRowU8AVX512(a *Args)
