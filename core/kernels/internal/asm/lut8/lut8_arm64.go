//go:build !purego

package lut8

// neon is the NEON kernel: a TBL and three TBX over the table in sixteen
// registers, 32 bytes at a time.
const neon Kernel = 1

// best is the NEON kernel, which every arm64 CPU runs.
const best = neon

// Kernels are the lookup kernels this CPU runs: NEON.
func Kernels() []Kernel { return []Kernel{neon} }

// String names k in test output.
func (k Kernel) String() string {
	if k == neon {
		return "NEON"
	}
	return "Go"
}

// run maps whole blocks of 32 bytes and returns how many it did.
func (k Kernel) run(table *[256]byte, src, dst []byte) int {
	n := len(src) &^ 31
	if k == neon && n > 0 {
		lookupNEON(table, &src[0], &dst[0], n)
		return n
	}
	return 0
}

// lookupNEON maps the n bytes at src (a multiple of 32) through table into
// dst: TBL over the first 64 entries, then TBX over each next 64 with the
// index moved down 64 (TBL gives 0 and TBX leaves the lane alone where
// the index is out of its 64).
//
//go:noescape
func lookupNEON(table *[256]byte, src, dst *byte, n int)
