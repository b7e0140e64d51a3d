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

// The float resize rows run the AVX-512 kernel, else the AVX2 one
// (GODEBUG=cpu.avx512f=off, cpu.avx2=off turn them off).
var (
	hasF32AVX512 = cpu.X86.HasAVX512F
	hasF32AVX2   = cpu.X86.HasAVX2
	hasAsmF32    = hasF32AVX512 || hasF32AVX2
)

// RowF32 computes one output row of the float bilinear resize.
func RowF32(a *ArgsF32) {
	switch {
	case hasF32AVX512:
		resizeRowF32AVX512(a)
	case hasF32AVX2:
		resizeRowF32AVX2(a)
	default:
		RowF32Go(a)
	}
}

// resizeRowF32AVX2 is RowF32Go in AVX2 assembly, 8 channels at a time
// and the channels after the last 8 one by one.
//
//go:noescape
func resizeRowF32AVX2(a *ArgsF32)

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
