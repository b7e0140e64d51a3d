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

// realFFT is the DFT of real input of one power-of-two length n >= 2, up
// to the Nyquist term (X[k] for k <= n/2; the rest are their conjugates),
// through a complex transform of half the length: the even samples as
// real parts and the odd ones as imaginary parts, split again after the
// transform. Half the work of a complex transform of length n, in double
// precision as well.
type realFFT struct {
	n    int
	half *fft
	tw   []complex128 // exp(-2 pi i k / n) for k <= n/2
	z    []complex128 // the packed samples, n/2
}

// newRealFFT returns the transform of real input of length n, a power of
// two of at least 2.
func newRealFFT(n int) *realFFT {
	r := &realFFT{n: n, half: newFFT(n / 2), tw: make([]complex128, n/2+1), z: make([]complex128, n/2)}
	for k := range r.tw {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		r.tw[k] = complex(c, s)
	}
	return r
}

// transform writes to dst (n/2+1 long) the DFT of the real samples x,
// zero-padded or cut to n.
func (r *realFFT) transform(x []float32, dst []complex128) {
	h := r.n / 2
	sample := func(j int) float64 {
		if j < len(x) {
			return float64(x[j])
		}
		return 0
	}
	for m := range r.z {
		r.z[m] = complex(sample(2*m), sample(2*m+1))
	}
	r.half.transform(r.z)
	for k := 0; k <= h; k++ {
		zk, zc := r.z[k%h], r.z[(h-k)%h]
		zc = complex(real(zc), -imag(zc))
		even := (zk + zc) * 0.5
		d := zk - zc
		odd := complex(imag(d)*0.5, -real(d)*0.5) // d / 2i
		dst[k] = even + r.tw[k]*odd
	}
}
