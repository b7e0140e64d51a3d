//go:build !(amd64 || arm64) || purego

package bytesum

// Sum returns the sum of the bytes of b, each XORed with xor. This
// build has no assembly for it: the Go twin.
func Sum(b []uint8, xor uint8) int32 { return SumGo(b, xor) }

// Kernels lists the Sum kernels this build has in assembly:
// none.
func Kernels() map[string]func([]uint8, uint8) int32 {
	return map[string]func([]uint8, uint8) int32{}
}

// sumsAsm reports that this build has no kernel for blocks of rows.
func sumsAsm([]uint8, int, int, uint8, int32, int32, []int32) bool { return false }
