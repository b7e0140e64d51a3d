package delegate

import "unsafe"

// Over-reading. Vector kernels (XNNPACK's among them) may read a few bytes
// past the end of a tensor; they never write there. That is harmless
// unless the tensor ends at the end of a mapped page and the next page is
// not mapped. A delegate that finds a tensor overreadable uses it in place;
// otherwise it copies it into a padded buffer of its own, which costs a
// copy on every run. So whoever lays tensors out in memory for delegates
// (the interpreter's arena, the plugin transport's shared region) places
// them with PlaceOverreadable, in memory whose offset 0 starts a page, and
// delegates check with Overreadable.

const (
	// Overread is how many bytes past a tensor's end a delegate may read
	// when Overreadable says so. XNNPACK reads at most 16 (XNN_EXTRA_BYTES).
	Overread = 64
	// Page is the smallest page size of the platforms delego runs on.
	// Memory laid out for delegates (the interpreter's arena, the plugin's
	// shared regions) starts one and is placed by PlaceOverreadable.
	Page = 4096
)

// PlaceOverreadable returns the lowest offset at or after off, off plus a
// multiple of 2*Overread, at which n bytes do not end within Overread bytes
// before a page boundary (or on one), in memory whose offset 0 starts a
// page. The move keeps off's alignment up to 2*Overread bytes.
func PlaceOverreadable(off, n int) int {
	if n == 0 {
		return off
	}
	if end := (off + n) % Page; end == 0 || end > Page-Overread {
		off += 2 * Overread
	}
	return off
}

// Overreadable reports whether Overread bytes past the end of b lie in the
// page b ends in, so that reading them cannot fault.
func Overreadable(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	end := uintptr(unsafe.Pointer(unsafe.SliceData(b))) + uintptr(len(b))
	return (end-1)/Page == (end+Overread-1)/Page
}
