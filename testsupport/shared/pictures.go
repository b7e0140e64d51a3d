package shared

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// BMPHeader is a 24-bit BMP picture whose header claims w x h pixels,
// followed by one row of pixels at most: a picture whose decoding would
// take memory for every pixel the header claims.
func BMPHeader(w, h int32) []byte {
	row := (int(min(w, 64))*3 + 3) &^ 3
	b := make([]byte, 54, 54+row)
	copy(b, "BM")
	binary.LittleEndian.PutUint32(b[2:], uint32(54+row)) // file size
	binary.LittleEndian.PutUint32(b[10:], 54)            // pixel data offset
	binary.LittleEndian.PutUint32(b[14:], 40)            // BITMAPINFOHEADER
	binary.LittleEndian.PutUint32(b[18:], uint32(w))
	binary.LittleEndian.PutUint32(b[22:], uint32(h))
	binary.LittleEndian.PutUint16(b[26:], 1)  // planes
	binary.LittleEndian.PutUint16(b[28:], 24) // bits per pixel
	return append(b, make([]byte, row)...)
}

// PNGHeader is an 8-bit grayscale PNG picture whose header claims w x h
// pixels, with the first rows of pixels only (all zero), as a few KiB of
// compressed data that would decode into far more.
func PNGHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 0, 0, 0, 0) // depth 8, grayscale, deflate, no filter, no interlace
	pngChunk(&b, "IHDR", ihdr)
	var rows bytes.Buffer
	z := zlib.NewWriter(&rows)
	z.Write(make([]byte, 4*(int(min(w, 1<<16))+1))) // four rows: a filter byte, then the pixels
	z.Close()
	pngChunk(&b, "IDAT", rows.Bytes())
	pngChunk(&b, "IEND", nil)
	return b.Bytes()
}

// pngChunk appends a PNG chunk of type typ to b.
func pngChunk(b *bytes.Buffer, typ string, data []byte) {
	binary.Write(b, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.Write(b, binary.BigEndian, crc.Sum32())
}
