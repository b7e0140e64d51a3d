package kernels

import "unsafe"

// The float micro-kernels behind CONV_2D, FULLY_CONNECTED and
// DEPTHWISE_CONV_2D. Each exists as a pure-Go twin (this file) and in
// assembly: AVX-512F and AVX2+FMA on amd64 (float_kernels_amd64.s), NEON
// on arm64 (float_kernels_arm64.s). The set a process uses is picked once
// at init from the CPU's features, and the purego build tag forces the Go
// twins. Every set works on the same layouts:
//
//   - GEMM weights in panels of fNR channels, [ceil(N/fNR)][K][fNR], the
//     last one padded with zeros, and the bias padded the same way;
//   - a GEMM tile's rows interleaved by k, [K][mr] (mr is the set's);
//   - a depthwise filter as TFLite stores it, [kh*kw][C].
//
// Every output element is one sequential sum over k started from zero,
// then bias, then the clamp, whichever kernel of a set (tile or row)
// computes it: how a GEMM is cut into tiles or among threads never changes
// a bit. The assembly sets fuse each multiply-add (one rounding), the Go
// twins round twice; they agree within float tolerance, not bit for bit.

// fNR is the number of channels in a GEMM weight panel.
const fNR = 16

// floatKernels is one implementation of the float micro-kernels.
type floatKernels struct {
	name string
	// mr is the number of rows a tile computes.
	mr int
	// tile computes c[r*ldc+j] = clamp(sum_k a[k*mr+r]*b[k*fNR+j] + bias[j])
	// for r < mr, j < fNR.
	tile func(k int, a, b, bias, c *float32, ldc int, lo, hi float32)
	// rows is tile with row r of a at a[r*lda:] (rows read in place, not
	// interleaved): a direct GEMM's rows, which need no packing.
	rows func(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)
	// row4 computes c[j] = clamp(sum_k a[k]*b[q*ldb+k*fNR+j%fNR] + bias[j])
	// for j < 4*fNR, q = j/fNR: one row against four consecutive panels,
	// ldb floats apart.
	row4 func(k int, a, b, bias, c *float32, ldb int, lo, hi float32)
	// row1 is row4 for a single panel.
	row1 func(k int, a, b, bias, c *float32, lo, hi float32)
	// dw computes npix depthwise output pixels of c channels:
	// out[p*c+ch] = clamp(bias[ch] + sum_t in[p*xstep+xoff[t]+ch]*w[woff[t]+ch])
	// summed in t order, for taps t < ntaps (offsets in floats).
	dw func(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
}

// goMR is the number of rows the Go twins' tiles compute.
const goMR = 6

// goFloatKernels is the pure-Go twin of every assembly set.
var goFloatKernels = floatKernels{name: "go", mr: goMR, tile: fTileGo, rows: fTileRowsGo, row4: fRow4Go, row1: fRow1Go, dw: dwFloatGo}

// fTileRowsGo is the Go twin of the rows kernels (a 6x16 tile whose rows
// are read in place, lda floats apart): each row as fRow1Go computes it.
func fTileRowsGo(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32) {
	for r := range goMR {
		ar := (*float32)(unsafe.Add(unsafe.Pointer(a), 4*r*lda))
		fRow1Go(k, ar, b, bias, (*float32)(unsafe.Add(unsafe.Pointer(c), 4*r*ldc)), lo, hi)
	}
}

// fTileGo is the Go twin of the 6x16 tile kernels, computed as 3x2
// sub-tiles (the shape Go's register allocator keeps in registers).
func fTileGo(k int, a, b, bias, c *float32, ldc int, lo, hi float32) {
	const mr = goMR
	if k == 0 { // no products: every row is the clamped bias
		for r := range mr {
			fRow1Go(0, a, b, bias, (*float32)(unsafe.Add(unsafe.Pointer(c), 4*r*ldc)), lo, hi)
		}
		return
	}
	as := unsafe.Slice(a, k*mr)
	bs := unsafe.Slice(b, k*fNR)
	biases := unsafe.Slice(bias, fNR)
	cs := unsafe.Slice(c, (mr-1)*ldc+fNR)
	for r := 0; r < mr; r += 3 {
		for j := 0; j < fNR; j += 2 {
			acc := fSub3x2(as[r:], bs[j:], k)
			for i := range 3 {
				o := cs[(r+i)*ldc+j:]
				o[0] = ClampF32(acc[2*i]+biases[j], lo, hi)
				o[1] = ClampF32(acc[2*i+1]+biases[j+1], lo, hi)
			}
		}
	}
}

// fSub3x2 returns acc[2i+j] = sum_k a[k*6+i]*b[k*fNR+j] for i < 3, j < 2.
func fSub3x2(a, b []float32, k int) (acc [6]float32) {
	var c00, c01, c10, c11, c20, c21 float32
	for i := range k {
		w := b[i*fNR : i*fNR+2 : i*fNR+2]
		x := a[i*6 : i*6+3 : i*6+3]
		c00 += x[0] * w[0]
		c01 += x[0] * w[1]
		c10 += x[1] * w[0]
		c11 += x[1] * w[1]
		c20 += x[2] * w[0]
		c21 += x[2] * w[1]
	}
	return [6]float32{c00, c01, c10, c11, c20, c21}
}

// fRow4Go is the Go twin of the 1x64 row kernels.
func fRow4Go(k int, a, b, bias, c *float32, ldb int, lo, hi float32) {
	for q := range 4 {
		fRow1Go(k, a, (*float32)(unsafe.Add(unsafe.Pointer(b), 4*q*ldb)),
			(*float32)(unsafe.Add(unsafe.Pointer(bias), 4*q*fNR)),
			(*float32)(unsafe.Add(unsafe.Pointer(c), 4*q*fNR)), lo, hi)
	}
}

// fRow1Go is the Go twin of the 1x16 row kernels.
func fRow1Go(k int, a, b, bias, c *float32, lo, hi float32) {
	as := unsafe.Slice(a, k)
	bs := unsafe.Slice(b, k*fNR)
	biases := unsafe.Slice(bias, fNR)
	cs := unsafe.Slice(c, fNR)
	for j := 0; j < fNR; j += 4 {
		var a0, a1, a2, a3 float32
		for i, x := range as {
			w := bs[i*fNR+j : i*fNR+j+4]
			a0 += x * w[0]
			a1 += x * w[1]
			a2 += x * w[2]
			a3 += x * w[3]
		}
		cs[j] = ClampF32(a0+biases[j], lo, hi)
		cs[j+1] = ClampF32(a1+biases[j+1], lo, hi)
		cs[j+2] = ClampF32(a2+biases[j+2], lo, hi)
		cs[j+3] = ClampF32(a3+biases[j+3], lo, hi)
	}
}

// dwFloatGo is the Go twin of the depthwise pixel kernels.
func dwFloatGo(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32) {
	if npix <= 0 || c <= 0 {
		return
	}
	xo := unsafe.Slice(xoff, ntaps)
	wo := unsafe.Slice(woff, ntaps)
	bs := unsafe.Slice(bias, c)
	for p := range npix {
		o := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(out), 4*p*c)), c)
		copy(o, bs)
		base := unsafe.Add(unsafe.Pointer(in), 4*p*xstep)
		t := 0
		for ; t+3 <= ntaps; t += 3 {
			xa, xb, xc := dwTap(base, xo[t], c), dwTap(base, xo[t+1], c), dwTap(base, xo[t+2], c)
			wa, wb, wc := dwTap(unsafe.Pointer(w), wo[t], c), dwTap(unsafe.Pointer(w), wo[t+1], c), dwTap(unsafe.Pointer(w), wo[t+2], c)
			o, xb, xc, wa, wb, wc := o[:len(xa)], xb[:len(xa)], xc[:len(xa)], wa[:len(xa)], wb[:len(xa)], wc[:len(xa)]
			for ch, v := range xa {
				o[ch] = o[ch] + v*wa[ch] + xb[ch]*wb[ch] + xc[ch]*wc[ch]
			}
		}
		for ; t < ntaps; t++ {
			x, wt := dwTap(base, xo[t], c), dwTap(unsafe.Pointer(w), wo[t], c)
			for ch, v := range x {
				o[ch] += v * wt[ch]
			}
		}
		for ch, v := range o {
			o[ch] = ClampF32(v, lo, hi)
		}
	}
}

// dwTap is the c floats at offset off (in floats) from p.
func dwTap(p unsafe.Pointer, off, c int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Add(p, 4*off)), c)
}

// fk is the float kernel set of this process, fixed at init.
var fk = floatKernelSets()[0]
