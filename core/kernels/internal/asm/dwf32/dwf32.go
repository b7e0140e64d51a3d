package dwf32

import "unsafe"

// Kernel names a set of float depthwise kernels; Go is the pure-Go twin.
type Kernel int

// Go is the pure-Go twin, the kernel every assembly set is held to.
const Go Kernel = 0

// Best returns the kernel set of this process: the first of Kernels, or
// the twin when there is none.
func Best() Kernel { return best }

// Pixels computes npix output pixels of c channels, one after the other
// from out:
//
//	out[p*c+ch] = clamp(bias[ch] + sum_t in[p*xstep+xoff[t]+ch]*w[woff[t]+ch])
//
// summed in t order for taps t < ntaps (xoff and woff in floats), clamped
// to [lo, hi]. The caller guarantees that every element the formula names
// is in its array.
func (k Kernel) Pixels(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32) {
	if c <= 0 || npix <= 0 {
		return
	}
	if k == Go || !k.pixels(c, npix, out, bias, in, w, xoff, woff, ntaps, xstep, lo, hi) {
		pixelsGo(c, npix, out, bias, in, w, xoff, woff, ntaps, xstep, lo, hi)
	}
}

// pixelsGo is the pure-Go twin of Pixels: each tap's product added to
// the pixel's sums in turn, three taps to a pass over the channels.
func pixelsGo(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32) {
	xo := unsafe.Slice(xoff, ntaps)
	wo := unsafe.Slice(woff, ntaps)
	bs := unsafe.Slice(bias, c)
	wp := unsafe.Pointer(w)
	for p := range npix {
		o := floats(unsafe.Pointer(out), p*c, c)
		copy(o, bs)
		base := unsafe.Add(unsafe.Pointer(in), 4*p*xstep)
		t := 0
		for ; t+3 <= ntaps; t += 3 {
			xa, xb, xc := floats(base, xo[t], c), floats(base, xo[t+1], c), floats(base, xo[t+2], c)
			wa, wb, wc := floats(wp, wo[t], c), floats(wp, wo[t+1], c), floats(wp, wo[t+2], c)
			o, xb, xc, wa, wb, wc := o[:len(xa)], xb[:len(xa)], xc[:len(xa)], wa[:len(xa)], wb[:len(xa)], wc[:len(xa)]
			for ch, v := range xa {
				o[ch] = o[ch] + v*wa[ch] + xb[ch]*wb[ch] + xc[ch]*wc[ch]
			}
		}
		for ; t < ntaps; t++ {
			x, wt := floats(base, xo[t], c), floats(wp, wo[t], c)
			x, wt = x[:len(o)], wt[:len(o)]
			for ch, v := range x {
				o[ch] += v * wt[ch]
			}
		}
		for ch, v := range o {
			o[ch] = min(max(v, lo), hi)
		}
	}
}

// floats is the n floats at offset off (in floats) from p.
func floats(p unsafe.Pointer, off, n int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Add(p, 4*off)), n)
}
