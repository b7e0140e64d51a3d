package bytesum

import (
	"encoding/binary"
	"unsafe"
)

// SumGo returns the sum of the bytes of b, each XORed with xor: the Go
// twin of the Sum kernels, eight bytes at a time in 16-bit lanes.
func SumGo(b []uint8, xor uint8) int32 {
	var total uint64
	x8 := uint64(xor) * 0x0101010101010101
	for len(b) >= 8 {
		n := min(len(b)/8, 128) // 16-bit lanes hold 128 words of byte pairs
		var s uint64
		for i := range n {
			v := binary.LittleEndian.Uint64(b[8*i:]) ^ x8
			s += v&0x00ff00ff00ff00ff + (v>>8)&0x00ff00ff00ff00ff
		}
		s = s&0x0000ffff0000ffff + (s>>16)&0x0000ffff0000ffff
		total += s&0xffffffff + s>>32
		b = b[8*n:]
	}
	for _, x := range b {
		total += uint64(x ^ xor)
	}
	return int32(total)
}

// sumBlocks is Sum with kernel summing b's whole blocks of size
// bytes (a power of two) and the Go twin the rest.
func sumBlocks(b []uint8, xor uint8, size int, kernel func(p *uint8, n int, xor uint8) uint64) int32 {
	n := len(b) &^ (size - 1)
	s := SumGo(b[n:], xor)
	if n > 0 {
		s += int32(kernel(unsafe.SliceData(b), n, xor))
	}
	return s
}

// Sums sets dst[i] to mul*s+add, where s is the sum of the n bytes at
// b[i*stride:], each XORed with xor: Sum over a block of rows in one
// call, scaled as the GEMM's row terms are.
func Sums(b []uint8, stride, n int, xor uint8, mul, add int32, dst []int32) {
	if len(dst) == 0 {
		return
	}
	b = b[:(len(dst)-1)*stride+n] // the kernels read no further
	if n > 0 && sumsAsm(b, stride, n, xor, mul, add, dst) {
		return
	}
	for i := range dst {
		dst[i] = mul*Sum(b[i*stride:i*stride+n], xor) + add
	}
}

// RowTerms sets dst[i] to mul times the sum of the values of stored row
// i, the n bytes at b[i*stride:], read as int8 when signed, else as uint8.
func RowTerms(b []uint8, stride, n int, signed bool, mul int32, dst []int32) {
	if !signed {
		Sums(b, stride, n, 0, mul, 0, dst)
		return
	}
	Sums(b, stride, n, 0x80, mul, -128*int32(n)*mul, dst) // int8(x) = (x^0x80) - 128
}
