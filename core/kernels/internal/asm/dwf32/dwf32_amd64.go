//go:build !purego

package dwf32

import "golang.org/x/sys/cpu"

const (
	zmm Kernel = 1 + iota // AVX-512F: 16 channels to a vector, the last one masked
	ymm                   // AVX2+FMA: 8 channels to a vector, the last one masked
)

// best is the kernel set of this process: the first this CPU has, or the
// twin; GODEBUG=cpu.avx512f=off and cpu.avx2=off turn them off.
var best = func() Kernel {
	if ks := Kernels(); len(ks) > 0 {
		return ks[0]
	}
	return Go
}()

// Kernels are the assembly sets this CPU runs, fastest first.
func Kernels() []Kernel {
	var ks []Kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, zmm)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		ks = append(ks, ymm)
	}
	return ks
}

// String names k in test output.
func (k Kernel) String() string {
	switch k {
	case zmm:
		return "AVX-512"
	case ymm:
		return "AVX2"
	}
	return "Go"
}

// pixels runs k's assembly and reports whether there was one.
func (k Kernel) pixels(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32) bool {
	switch k {
	case zmm:
		pixelsAVX512(c, npix, out, bias, in, w, xoff, woff, ntaps, xstep, lo, hi)
	case ymm:
		pixelsAVX2(c, npix, out, bias, in, w, xoff, woff, ntaps, xstep, lo, hi)
	default:
		return false
	}
	return true
}

// The assembly kernels take c >= 1 and npix >= 1.

//go:noescape
func pixelsAVX512(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)

//go:noescape
func pixelsAVX2(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
