package driver

import "encoding/binary"

// This file holds the bit and byte layouts of what the driver sends: the
// linker fields patched into instruction bitstreams, and the header before
// each DMA's data on the bulk-out endpoint.

// copyUint32 is ExecutableUtil::CopyUint32 (driver/executable_util.cc):
// the 32 bits of v, least significant first, into buf from bit offset bit
// (bit 0 is the least significant bit of buf[0]).
func copyUint32(buf []byte, bit int, v uint32) {
	for i := range 32 {
		at, shift := (bit+i)/8, uint((bit+i)%8)
		buf[at] = buf[at]&^(1<<shift) | byte((v>>i)&1)<<shift
	}
}

// header is UsbMlCommands::PrepareHeader (driver/usb/usb_ml_commands.cc):
// the 8 bytes sent on the single bulk-out endpoint before each DMA's data:
// its length (32 bits, little-endian), then its descriptor tag in the low
// 4 bits of byte 4, then zeros.
func header(tag byte, length int) []byte {
	h := make([]byte, 8)
	binary.LittleEndian.PutUint32(h, uint32(length))
	h[4] = tag & 0xf
	return h
}
