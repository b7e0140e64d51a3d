//go:build !purego

package kernels

// byteSum returns the sum of the bytes of b, each XORed with xor: the
// 8-bit GEMM's row sums. The NEON kernel takes the whole blocks of 16
// bytes, the Go twin the rest.
func byteSum(b []uint8, xor uint8) int32 { return byteSumBlocks(b, xor, 16, byteSumNEON) }

// byteSumKernels lists the byteSum kernels this build runs in assembly.
func byteSumKernels() map[string]func([]uint8, uint8) int32 {
	return map[string]func([]uint8, uint8) int32{"neon": byteSum}
}

// byteSumNEON sums the n bytes at p (n a positive multiple of 16), each
// XORed with xor, 16 at a time with UADDLV.
//
//go:noescape
func byteSumNEON(p *uint8, n int, xor uint8) uint64

// byteSumsAsm reports that NEON has no kernel for blocks of rows: each row
// goes through byteSum.
func byteSumsAsm([]uint8, int, int, uint8, int32, int32, []int32) bool { return false }
