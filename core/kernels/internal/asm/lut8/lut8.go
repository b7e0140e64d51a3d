package lut8

// Kernel names a table-lookup kernel; 0 is the pure-Go twin.
type Kernel int

// Apply maps every byte of src through table into dst, which is at least
// as long as src, with the fastest kernel this CPU has.
func Apply(table *[256]byte, src, dst []byte) { best.Apply(table, src, dst) }

// Best is the kernel Apply runs: the first of Kernels, or 0 for the
// pure-Go twin.
func Best() Kernel { return best }

// Apply maps every byte of src through table into dst, which is at least
// as long as src: the whole blocks through k, the rest through the twin.
func (k Kernel) Apply(table *[256]byte, src, dst []byte) {
	dst = dst[:len(src)]
	done := 0
	if k != 0 {
		done = k.run(table, src, dst)
	}
	applyGo(table, src[done:], dst[done:])
}

// applyGo is the pure-Go twin of the kernels: dst is as long as src.
func applyGo(table *[256]byte, src, dst []byte) {
	dst = dst[:len(src)]
	for i, b := range src {
		dst[i] = table[b]
	}
}
