package dwf32_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// BenchmarkPixels times a row of interior output pixels of MobileNet
// and MediaPipe depthwise layers (k x k taps, stride s, c channels, w
// pixels) with each set, beside f32's kernel of the same set ("f32"):
// GMAC/s over the clock gives MACs per cycle; best-GMAC/s is the fastest
// call's, the one a shared machine's other work slowed least.
func BenchmarkPixels(b *testing.B) {
	layers := []struct{ c, k, s, w int }{
		{32, 3, 1, 112}, {96, 3, 2, 56}, {144, 3, 1, 56}, {192, 3, 1, 28}, {384, 3, 1, 14},
		{576, 3, 1, 14}, {960, 3, 1, 7}, {16, 5, 1, 64}, {24, 5, 2, 32}, {128, 5, 1, 16},
		{64, 3, 1, 8}, // in the first level cache
	}
	for _, k := range sets() {
		prev := previous(b, k)
		for _, l := range layers {
			r := rand.New(rand.NewPCG(1, 2))
			inW := l.w*l.s + l.k
			rowLen := inW * l.c
			in := values(r, aligned(l.k*rowLen), false)
			w := values(r, aligned(l.k*l.k*l.c), false)
			bias := values(r, aligned(l.c), false)
			out := aligned(l.w * l.c)
			var xoff, woff []int
			for ky := range l.k {
				for kx := range l.k {
					xoff = append(xoff, ky*rowLen+kx*l.c)
					woff = append(woff, (ky*l.k+kx)*l.c)
				}
			}
			macs := float64(l.w * l.c * l.k * l.k)
			run := func(b *testing.B, dw func(c, npix int, out, bias, in, w *float32, xoff, woff *int, ntaps, xstep int, lo, hi float32)) {
				fastest := time.Duration(1 << 62)
				for b.Loop() {
					start := time.Now()
					dw(l.c, l.w, &out[0], &bias[0], &in[0], &w[0], &xoff[0], &woff[0], len(xoff), l.s*l.c, 0, 6)
					fastest = min(fastest, time.Since(start))
				}
				b.ReportMetric(macs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
				b.ReportMetric(macs/fastest.Seconds()/1e9, "best-GMAC/s")
			}
			name := fmt.Sprintf("%v/c%d/k%d/s%d/w%d", k, l.c, l.k, l.s, l.w)
			b.Run(name, func(b *testing.B) { run(b, k.Pixels) })
			b.Run(name+"/f32", func(b *testing.B) { run(b, prev.DW) })
		}
	}
}

// aligned returns n floats that start a 64-byte cache line, as the
// interpreter's arena places tensors.
func aligned(n int) []float32 {
	s := make([]float32, n+16)
	off := int(uintptr(unsafe.Pointer(&s[0]))%64) / 4
	return s[(16-off)%16:][:n]
}
