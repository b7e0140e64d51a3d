//go:build !(amd64 || arm64) || purego

package kernels

// byteSum returns the sum of the bytes of b, each XORed with xor. This
// build has no assembly for it: the Go twin.
func byteSum(b []uint8, xor uint8) int32 { return byteSumGo(b, xor) }

// byteSumKernels lists the byteSum kernels this build has in assembly:
// none.
func byteSumKernels() map[string]func([]uint8, uint8) int32 {
	return map[string]func([]uint8, uint8) int32{}
}

// byteSumsAsm reports that this build has no kernel for blocks of rows.
func byteSumsAsm([]uint8, int, int, uint8, int32, int32, []int32) bool { return false }
