//go:build !purego

package kernels

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

// The byteSum kernels the CPU can run (bytesum_amd64.s).
var (
	byteSumAVX512OK = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW
	byteSumAVX2OK   = cpu.X86.HasAVX2
)

// byteSum returns the sum of the bytes of b, each XORed with xor: the
// 8-bit GEMM's row sums. It runs the fastest kernel the CPU has.
func byteSum(b []uint8, xor uint8) int32 {
	switch {
	case byteSumAVX512OK:
		return byteSum512(b, xor)
	case byteSumAVX2OK:
		return byteSum256(b, xor)
	}
	return byteSumGo(b, xor)
}

// byteSum512 is byteSum on AVX-512BW: every byte, the last block through
// a masked load.
func byteSum512(b []uint8, xor uint8) int32 {
	if len(b) == 0 {
		return 0
	}
	return int32(byteSumAVX512(unsafe.SliceData(b), len(b), xor))
}

// byteSum256 is byteSum on AVX2: whole blocks of 32 bytes, the rest in Go.
func byteSum256(b []uint8, xor uint8) int32 { return byteSumBlocks(b, xor, 32, byteSumAVX2) }

// byteSumKernels lists the byteSum kernels this CPU runs in assembly.
func byteSumKernels() map[string]func([]uint8, uint8) int32 {
	ks := map[string]func([]uint8, uint8) int32{}
	if byteSumAVX512OK {
		ks["avx512"] = byteSum512
	}
	if byteSumAVX2OK {
		ks["avx2"] = byteSum256
	}
	return ks
}

// byteSumsAsm runs byteSums' block of rows (n > 0, b holding exactly the
// rows' extent) as one AVX-512 call where the CPU has it.
func byteSumsAsm(b []uint8, stride, n int, xor uint8, mul, add int32, dst []int32) bool {
	if !byteSumAVX512OK {
		return false
	}
	byteSumsAVX512(unsafe.SliceData(b), stride, n, len(dst), xor, mul, add, unsafe.SliceData(dst))
	return true
}

// byteSumsAVX512 sets dst[i] to mul*s+add, s the sum of the n > 0 bytes
// at p+i*stride, each XORed with xor, for i < count > 0; it sums a row as
// byteSumAVX512 does.
//
//go:noescape
func byteSumsAVX512(p *uint8, stride, n, count int, xor uint8, mul, add int32, dst *int32)

// byteSumAVX512 sums the n > 0 bytes at p, each XORed with xor, with
// VPSADBW 64 bytes at a time.
//
//go:noescape
func byteSumAVX512(p *uint8, n int, xor uint8) uint64

// byteSumAVX2 sums the n bytes at p (n a positive multiple of 32), each
// XORed with xor, with VPSADBW 32 bytes at a time.
//
//go:noescape
func byteSumAVX2(p *uint8, n int, xor uint8) uint64
