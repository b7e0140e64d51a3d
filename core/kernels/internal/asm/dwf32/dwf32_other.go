//go:build !(amd64 || arm64) || purego

package dwf32

// best is the twin: there is no assembly for this architecture or build.
const best = Go

// Kernels is empty: there is no assembly for this architecture or build.
func Kernels() []Kernel { return nil }

// String names k in test output.
func (k Kernel) String() string { return "Go" }

// pixels computes nothing: the twin does it all.
func (k Kernel) pixels(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32) bool {
	return false
}
