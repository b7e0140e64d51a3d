//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// resizeAsm says whether the UINT8 resize rows run the AVX-512 kernel
// (resize_amd64.s); GODEBUG=cpu.avx512bw=off turns it off.
var resizeAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW

// resizeRowU8 computes one output row of the UINT8 bilinear resize.
func resizeRowU8(a *resizeRowArgs) {
	if resizeAsm {
		resizeRowU8AVX512(a)
		return
	}
	resizeRowU8Go(a)
}

// resizeRowU8AVX512 is resizeRowU8Go in AVX-512 assembly, 16 channels at
// a time.
//
//go:noescape
func resizeRowU8AVX512(a *resizeRowArgs)
