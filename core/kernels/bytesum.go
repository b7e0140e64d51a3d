package kernels

import "encoding/binary"

// byteSumGo returns the sum of the bytes of b, each XORed with xor: the Go
// twin of the byteSum kernels, eight bytes at a time in 16-bit lanes.
func byteSumGo(b []uint8, xor uint8) int32 {
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
