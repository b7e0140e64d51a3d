package driver

import (
	"bytes"
	"testing"
)

// readUint32 reads back what copyUint32 wrote.
func readUint32(buf []byte, bit int) uint32 {
	var v uint32
	for i := range 32 {
		at, shift := (bit+i)/8, uint((bit+i)%8)
		v |= uint32(buf[at]>>shift&1) << i
	}
	return v
}

// TestCopyUint32: ExecutableUtil::CopyUint32 writes the value's bits from
// the least significant, at any bit offset, leaving the others.
func TestCopyUint32(t *testing.T) {
	b := bytes.Repeat([]byte{0xff}, 6)
	copyUint32(b, 3, 0x12345678)
	// 0x12345678 << 3 = 0x91a2b3c0 in bits 3-34, with the old 0b111 below
	// and the old bits from 35 (byte 4: 0b11111000).
	if want := []byte{0xc7, 0xb3, 0xa2, 0x91, 0xf8, 0xff}; !bytes.Equal(b, want) {
		t.Errorf("got % x, want % x", b, want)
	}
	if v := readUint32(b, 3); v != 0x12345678 {
		t.Errorf("read back %#x", v)
	}
	if h := header(TagParameters, 566912); !bytes.Equal(h, []byte{0x80, 0xa6, 0x08, 0x00, 0x02, 0, 0, 0}) {
		t.Errorf("header % x", h)
	}
}
