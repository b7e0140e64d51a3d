//go:build !purego

package bytesum

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The byte-sum kernels the CPU can run (bytesum_amd64.s).
var (
	byteSumAVX512OK = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW
	byteSumAVX2OK   = cpu.X86.HasAVX2
)

// Sum returns the sum of the bytes of b, each XORed with xor: the
// 8-bit GEMM's row sums where Sums has no block kernel (on AVX-512 it
// always has).
func Sum(b []uint8, xor uint8) int32 {
	if byteSumAVX2OK {
		return sumBlocks(b, xor, 32, byteSumAVX2)
	}
	return SumGo(b, xor)
}

// Kernels lists the Sum kernels this CPU runs in assembly: the
// AVX-512 block kernel on one row, and AVX2's.
func Kernels() map[string]func([]uint8, uint8) int32 {
	ks := map[string]func([]uint8, uint8) int32{}
	if byteSumAVX512OK {
		ks["avx512"] = func(b []uint8, xor uint8) int32 {
			var s [1]int32
			Sums(b, len(b), len(b), xor, 1, 0, s[:])
			return s[0]
		}
	}
	if byteSumAVX2OK {
		ks["avx2"] = Sum
	}
	return ks
}

// sumsAsm runs Sums' block of rows (n > 0, b holding exactly the
// rows' extent) as one AVX-512 call where the CPU has it.
func sumsAsm(b []uint8, stride, n int, xor uint8, mul, add int32, dst []int32) bool {
	if !byteSumAVX512OK {
		return false
	}
	byteSumsAVX512(unsafe.SliceData(b), stride, n, len(dst), xor, mul, add, unsafe.SliceData(dst))
	return true
}

// byteSumsAVX512 sets dst[i] to mul*s+add, s the sum of the n > 0 bytes
// at p+i*stride, each XORed with xor, for i < count > 0: VPSADBW 64 bytes
// at a time, the last part of a row through a masked load.
//
//go:noescape
func byteSumsAVX512(p *uint8, stride, n, count int, xor uint8, mul, add int32, dst *int32)

// byteSumAVX2 sums the n bytes at p (n a positive multiple of 32), each
// XORed with xor, with VPSADBW 32 bytes at a time.
//
//go:noescape
func byteSumAVX2(p *uint8, n int, xor uint8) uint64
