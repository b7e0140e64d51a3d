//go:build !purego

package dwf32

// neon is the NEON kernel set, which every arm64 CPU runs (Advanced SIMD
// is part of every arm64 core Go runs on).
const neon Kernel = 1

// best is the NEON kernel set.
const best = neon

// Kernels are the assembly sets this CPU runs: NEON.
func Kernels() []Kernel { return []Kernel{neon} }

// String names k in test output.
func (k Kernel) String() string {
	if k == neon {
		return "NEON"
	}
	return "Go"
}

// pixels runs k's assembly and reports whether there was one.
func (k Kernel) pixels(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32) bool {
	if k != neon {
		return false
	}
	pixelsNEON(c, npix, out, bias, in, w, xoff, woff, ntaps, xstep, lo, hi)
	return true
}

// pixelsNEON takes c >= 1 and npix >= 1.
//
//go:noescape
func pixelsNEON(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
