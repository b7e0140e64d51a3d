package dwf32_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/dwf32"
	"github.com/delego/delego/core/kernels/internal/asm/f32"
)

// sets are the twin and every assembly set of this build.
func sets() []dwf32.Kernel { return append([]dwf32.Kernel{dwf32.Go}, dwf32.Kernels()...) }

// previous is the f32 depthwise kernel k replaces: the set of the same
// instruction set.
func previous(t testing.TB, k dwf32.Kernel) *f32.Kernels {
	name := strings.ToLower(strings.ReplaceAll(k.String(), "-", ""))
	for _, s := range append(f32.Sets(), f32.Go()) {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no f32 set %q to compare %v with", name, k)
	return nil
}

// specials are the floats a careless sum or clamp gets wrong.
var specials = []float32{
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 6, -1,
}

// values fills v with random floats, one in sixteen of them special
// when special is set.
func values(r *rand.Rand, v []float32, special bool) []float32 {
	for i := range v {
		if special && r.IntN(16) == 0 {
			v[i] = specials[r.IntN(len(specials))]
			continue
		}
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// guard is the value the tests put past an output.
const guard = float32(-12345.5)

// dwCall is one call of Pixels and the arrays it reads.
type dwCall struct {
	c, npix, ntaps, xstep int
	xoff, woff            []int
	in, w, bias           []float32
	lo, hi                float32
}

// newCall makes a call of c channels, npix pixels and ntaps taps at
// scattered offsets, as a row of an image with pixels xstep floats
// apart reads them.
func newCall(r *rand.Rand, c, npix, ntaps, xstep int, lo, hi float32, special bool) dwCall {
	d := dwCall{c: c, npix: npix, ntaps: ntaps, xstep: xstep, lo: lo, hi: hi}
	d.xoff, d.woff = make([]int, max(ntaps, 1)), make([]int, max(ntaps, 1))
	for i := range ntaps {
		d.xoff[i], d.woff[i] = r.IntN(3*c+5), r.IntN(ntaps)*c
	}
	d.in = values(r, make([]float32, (npix-1)*xstep+3*c+5+c), special)
	d.w = values(r, make([]float32, ntaps*c+c), special)
	d.bias = values(r, make([]float32, c), special)
	return d
}

// run calls k on d, the output followed by guards.
func (d *dwCall) run(k dwf32.Kernel) []float32 {
	out := make([]float32, d.npix*d.c+17)
	for i := range out {
		out[i] = guard
	}
	k.Pixels(d.c, d.npix, &out[0], &d.bias[0], &d.in[0], &d.w[0], &d.xoff[0], &d.woff[0], d.ntaps, d.xstep, d.lo, d.hi)
	return out
}

// old runs f32's kernel on d in the same way.
func (d *dwCall) old(s *f32.Kernels) []float32 {
	out := make([]float32, d.npix*d.c+17)
	for i := range out {
		out[i] = guard
	}
	s.DW(d.c, d.npix, &out[0], &d.bias[0], &d.in[0], &d.w[0], &d.xoff[0], &d.woff[0], d.ntaps, d.xstep, d.lo, d.hi)
	return out
}

// sameBits reports whether x and y have the same bits, or are both NaN.
func sameBits(x, y float32) bool {
	return math.Float32bits(x) == math.Float32bits(y) || x != x && y != y
}

// TestSameBitsAsF32 holds every set to the bits of the f32 depthwise
// kernel of its instruction set, which it replaces: channel counts
// around every vector width and block of pixels, 0 to 25 taps, pixels
// apart, overlapping (runs taken as one pixel) and at one place (xstep
// 0), clamps on and off, special values in the inputs; nothing written
// past the output.
func TestSameBitsAsF32(t *testing.T) {
	clamps := [][2]float32{{float32(math.Inf(-1)), float32(math.Inf(1))}, {0, 6}, {-1, 1}, {0, float32(math.Inf(1))}}
	for _, k := range sets() {
		prev := previous(t, k)
		for _, c := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 63, 64, 65, 96, 144} {
			for _, npix := range []int{1, 2, 3, 4, 5, 7, 8, 9, 13, 15, 16, 17, 31} {
				t.Run(fmt.Sprintf("%v/c%d/px%d", k, c, npix), func(t *testing.T) {
					r := rand.New(rand.NewPCG(uint64(c), uint64(npix)))
					for _, ntaps := range []int{0, 1, 2, 9, 25} {
						for ci, cl := range clamps {
							for _, xstep := range []int{c, 2 * c, c + 3, 0} {
								d := newCall(r, c, npix, ntaps, xstep, cl[0], cl[1], ci%2 == 0)
								got, want := d.run(k), d.old(prev)
								for i := range got {
									if !sameBits(got[i], want[i]) {
										t.Fatalf("taps %d, xstep %d, clamp %v: float %d (pixel %d channel %d) is %v (%#x), f32's %s kernel gives %v (%#x)",
											ntaps, xstep, cl, i, i/c, i%c, got[i], math.Float32bits(got[i]), prev.Name, want[i], math.Float32bits(want[i]))
									}
								}
							}
						}
					}
				})
			}
		}
	}
}
