package dwf32_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/delego/delego/testsupport/kerneltest"
)

// guarded returns n floats that end where an unreadable page begins.
func guarded(t *testing.T, n int) []float32 {
	b := kerneltest.BeforeGuardPage(t, 4*n)
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
}

// TestReadsNoFurther runs every set with the input, the weights, the bias
// and the output each ending where an unreadable page begins, the last
// tap reading the input's and the weights' last floats: the bits of the
// f32 kernel it replaces.
func TestReadsNoFurther(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, k := range sets() {
		prev := previous(t, k)
		for _, c := range []int{1, 3, 7, 8, 9, 16, 17, 33, 70} {
			for _, npix := range []int{1, 2, 3, 7, 8, 11} {
				t.Run(fmt.Sprintf("%v/c%d/px%d", k, c, npix), func(t *testing.T) {
					const ntaps = 3
					d := newCall(r, c, npix, ntaps, c+1, -1, 1, false)
					d.xoff[ntaps-1] = len(d.in) - c - (npix-1)*d.xstep
					d.woff[ntaps-1] = len(d.w) - c
					in, w, bias, out := guarded(t, len(d.in)), guarded(t, len(d.w)), guarded(t, c), guarded(t, npix*c)
					copy(in, d.in)
					copy(w, d.w)
					copy(bias, d.bias)
					k.Pixels(c, npix, &out[0], &bias[0], &in[0], &w[0], &d.xoff[0], &d.woff[0], ntaps, d.xstep, d.lo, d.hi)
					want := d.old(prev)
					for i := range out {
						if !sameBits(out[i], want[i]) {
							t.Fatalf("float %d is %v, f32's %s kernel gives %v", i, out[i], prev.Name, want[i])
						}
					}
				})
			}
		}
	}
}
