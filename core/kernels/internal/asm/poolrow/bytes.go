package poolrow

import "unsafe"

// asBytes is s read as its raw bytes.
func asBytes(s []int8) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s))
}
