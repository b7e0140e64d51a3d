//go:build !purego

package bytesum

// Sum returns the sum of the bytes of b, each XORed with xor: the
// 8-bit GEMM's row sums. The NEON kernel takes the whole blocks of 16
// bytes, the Go twin the rest.
func Sum(b []uint8, xor uint8) int32 { return sumBlocks(b, xor, 16, byteSumNEON) }

// Kernels lists the Sum kernels this build runs in assembly.
func Kernels() map[string]func([]uint8, uint8) int32 {
	return map[string]func([]uint8, uint8) int32{"neon": Sum}
}

// byteSumNEON sums the n bytes at p (n a positive multiple of 16), each
// XORed with xor, 16 at a time with UADDLV.
//
//go:noescape
func byteSumNEON(p *uint8, n int, xor uint8) uint64

// sumsAsm reports that NEON has no kernel for blocks of rows: each row
// goes through Sum.
func sumsAsm([]uint8, int, int, uint8, int32, int32, []int32) bool { return false }
