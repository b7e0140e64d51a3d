//go:build !purego

package minmax8

// neon is the NEON kernel, which every arm64 CPU runs: 16 bytes at a
// time.
const neon Kernel = 1

// best is the NEON kernel.
const best = neon

// Kernels are the row kernels this CPU runs: NEON.
func Kernels() []Kernel { return []Kernel{neon} }

// String names k in test output.
func (k Kernel) String() string {
	if k == neon {
		return "NEON"
	}
	return "Go"
}

// run computes the whole blocks of 16 bytes and returns how many bytes
// that is.
func (k Kernel) run(op Op, z, x, y []byte) int {
	n := len(z) &^ 15
	if k == neon && n > 0 {
		rowNEON(op, &z[0], &x[0], &y[0], n)
		return n
	}
	return 0
}

// rowNEON is runGo on n bytes (a multiple of 16) in NEON.
//
//go:noescape
func rowNEON(op Op, z, x, y *byte, n int)
