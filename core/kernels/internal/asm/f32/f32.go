package f32

import "unsafe"

// NR is the number of channels in a GEMM weight panel.
const NR = 16

// Kernels is one implementation of the float micro-kernels.
type Kernels struct {
	// Name names the set in test output.
	Name string
	// MR is the number of rows a tile computes.
	MR int
	// Tile computes c[r*ldc+j] = clamp(sum_k a[k*MR+r]*b[k*NR+j] + bias[j])
	// for r < MR, j < NR.
	Tile func(k int, a, b, bias, c *float32, ldc int, lo, hi float32)
	// Rows is Tile with row r of a at a[r*lda:] (rows read in place, not
	// interleaved): a direct GEMM's rows, which need no packing.
	Rows func(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32)
	// Window is Rows over a convolution's windows read in place from
	// its input, for tiles tiles in a row (tile i's a at a[i*astep:],
	// its output rows from c[i*MR*ldc:]), storing the first cols (1 to
	// NR) channels of each row. Row r's k values are nseg segments of
	// kseg floats, segment s at a[s*sega+r*lda:] (one filter row's taps,
	// whose channels lie side by side in an NHWC input), summed segment
	// after segment as Rows sums one row of their concatenation, to the
	// same bits. With nseg = 1 it is Rows over tiles, partial panels too.
	// nil in a set that has none (its callers copy the windows' rows out
	// and call Rows).
	Window func(kseg, nseg int, a *float32, lda, sega int, b, bias, c *float32, ldc, cols, tiles, astep int, lo, hi float32)
	// Row4 computes c[j] = clamp(sum_k a[k]*b[q*ldb+k*NR+j%NR] + bias[j])
	// for j < 4*NR, q = j/NR: one row against four consecutive panels,
	// ldb floats apart.
	Row4 func(k int, a, b, bias, c *float32, ldb int, lo, hi float32)
	// Row1 is Row4 for a single panel.
	Row1 func(k int, a, b, bias, c *float32, lo, hi float32)
	// DW computes npix depthwise output pixels of c channels:
	// out[p*c+ch] = clamp(bias[ch] + sum_t in[p*xstep+xoff[t]+ch]*w[woff[t]+ch])
	// summed in t order, for taps t < ntaps (offsets in floats).
	DW func(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)
}

// goMR is the number of rows the Go twins' tiles compute.
const goMR = 6

// goKernels is the pure-Go twin of every assembly set.
var goKernels = Kernels{Name: "go", MR: goMR, Tile: fTileGo, Rows: fTileRowsGo, Window: fTileWindowGo, Row4: fRow4Go, Row1: fRow1Go, DW: dwFloatGo}

// fTileRowsGo is the Go twin of the rows kernels (a 6x16 tile whose rows
// are read in place, lda floats apart): each row as fRow1Go computes it.
func fTileRowsGo(k int, a *float32, lda int, b, bias, c *float32, ldc int, lo, hi float32) {
	fTileWindowGo(k, 1, a, lda, 0, b, bias, c, ldc, NR, 1, 0, lo, hi)
}

// fTileWindowGo is the Go twin of the window kernels: each row of each
// tile as fRowGo computes it.
func fTileWindowGo(kseg, nseg int, a *float32, lda, sega int, b, bias, c *float32, ldc, cols, tiles, astep int, lo, hi float32) {
	var row [NR]float32
	for r := range tiles * goMR {
		t := r / goMR
		ar := (*float32)(unsafe.Add(unsafe.Pointer(a), 4*(t*astep+(r%goMR)*lda)))
		cr := (*float32)(unsafe.Add(unsafe.Pointer(c), 4*r*ldc))
		if cols == NR {
			fRowGo(kseg, nseg, ar, sega, b, bias, cr, lo, hi)
			continue
		}
		fRowGo(kseg, nseg, ar, sega, b, bias, &row[0], lo, hi)
		copy(unsafe.Slice(cr, cols), row[:])
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
	bs := unsafe.Slice(b, k*NR)
	biases := unsafe.Slice(bias, NR)
	cs := unsafe.Slice(c, (mr-1)*ldc+NR)
	for r := 0; r < mr; r += 3 {
		for j := 0; j < NR; j += 2 {
			acc := fSub3x2(as[r:], bs[j:], k)
			for i := range 3 {
				o := cs[(r+i)*ldc+j:]
				o[0] = clamp(acc[2*i]+biases[j], lo, hi)
				o[1] = clamp(acc[2*i+1]+biases[j+1], lo, hi)
			}
		}
	}
}

// fSub3x2 returns acc[2i+j] = sum_k a[k*6+i]*b[k*NR+j] for i < 3, j < 2.
func fSub3x2(a, b []float32, k int) (acc [6]float32) {
	var c00, c01, c10, c11, c20, c21 float32
	for i := range k {
		w := b[i*NR : i*NR+2 : i*NR+2]
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
			(*float32)(unsafe.Add(unsafe.Pointer(bias), 4*q*NR)),
			(*float32)(unsafe.Add(unsafe.Pointer(c), 4*q*NR)), lo, hi)
	}
}

// fRow1Go is the Go twin of the 1x16 row kernels.
func fRow1Go(k int, a, b, bias, c *float32, lo, hi float32) {
	fRowGo(k, 1, a, 0, b, bias, c, lo, hi)
}

// fRowGo is fRow1Go over nseg segments of kseg values of a, sega floats
// apart, summed one after the other as one row of k = nseg*kseg values.
func fRowGo(kseg, nseg int, a *float32, sega int, b, bias, c *float32, lo, hi float32) {
	if kseg <= 0 {
		nseg = 0
	}
	bs := unsafe.Slice(b, max(nseg*kseg, 0)*NR)
	biases := unsafe.Slice(bias, NR)
	cs := unsafe.Slice(c, NR)
	for j := 0; j < NR; j += 4 {
		var a0, a1, a2, a3 float32
		for s := range nseg {
			as := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(a), 4*s*sega)), kseg)
			for i, x := range as {
				w := bs[(s*kseg+i)*NR+j : (s*kseg+i)*NR+j+4]
				a0 += x * w[0]
				a1 += x * w[1]
				a2 += x * w[2]
				a3 += x * w[3]
			}
		}
		cs[j] = clamp(a0+biases[j], lo, hi)
		cs[j+1] = clamp(a1+biases[j+1], lo, hi)
		cs[j+2] = clamp(a2+biases[j+2], lo, hi)
		cs[j+3] = clamp(a3+biases[j+3], lo, hi)
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
			o[ch] = clamp(v, lo, hi)
		}
	}
}

// dwTap is the c floats at offset off (in floats) from p.
func dwTap(p unsafe.Pointer, off, c int) []float32 {
	return unsafe.Slice((*float32)(unsafe.Add(p, 4*off)), c)
}

// best is the float kernel set of this process, fixed at init.
var best = Sets()[0]

// Best returns the float kernel set of this process: the first of Sets.
func Best() *Kernels { return best }

// clamp limits v to [lo, hi].
func clamp(v, lo, hi float32) float32 { return min(max(v, lo), hi) }

// Go returns the pure-Go twins, the set every assembly set is held to.
func Go() *Kernels { return &goKernels }
