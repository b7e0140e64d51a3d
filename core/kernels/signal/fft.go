package signal

import (
	"math"
	"math/bits"
)

// fft is a forward discrete Fourier transform of one power-of-two length
// n, X[k] = sum_j x[j] exp(-2 pi i j k / n), in complex128. TFLite's
// kernels call Ooura's fft2d in double precision; any double-precision FFT
// agrees with it to about 1e-16 of the signal's norm, far below what the
// rounding of the results to float32 keeps.
type fft struct {
	n       int
	twiddle []complex128 // exp(-2 pi i k / n) for k < n/2, each from math.Sincos
}

// newFFT returns the transform of length n, a power of two (1 included).
func newFFT(n int) *fft {
	f := &fft{n: n, twiddle: make([]complex128, n/2)}
	for k := range f.twiddle {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		f.twiddle[k] = complex(c, s)
	}
	return f
}

// transform replaces x (length n) with its DFT: an iterative radix-2
// Cooley-Tukey transform over bit-reversed input.
func (f *fft) transform(x []complex128) {
	n := f.n
	if n < 2 {
		return
	}
	shift := 64 - uint(bits.TrailingZeros(uint(n)))
	for i := range n {
		if j := int(bits.Reverse64(uint64(i)) >> shift); j > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	for size := 2; size <= n; size <<= 1 {
		half, step := size/2, n/size
		for start := 0; start < n; start += size {
			for k := range half {
				a, b := x[start+k], x[start+k+half]*f.twiddle[k*step]
				x[start+k], x[start+k+half] = a+b, a-b
			}
		}
	}
}

// isPowerOfTwo is TFLite's IsPowerOfTwo over the value as a uint32.
func isPowerOfTwo(v int32) bool {
	u := uint32(v)
	return u != 0 && u&(u-1) == 0
}
