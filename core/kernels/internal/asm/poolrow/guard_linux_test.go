package poolrow_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/delego/delego/testsupport/kerneltest"
)

// TestReadsNoFurther runs every kernel on spans and accumulators that end
// at an unreadable page.
func TestReadsNoFurther(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, k := range kernelsOrSkip(t) {
		for c := 1; c <= 70; c++ {
			t.Run(fmt.Sprintf("%v/c%d", k, c), func(t *testing.T) {
				const npx = 3
				span := kerneltest.BeforeGuardPage(t, npx*c*4)
				for i := range span {
					span[i] = genByte(r)
				}
				f32 := func(b []byte) []float32 { return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4) }
				acc := kerneltest.BeforeGuardPage(t, c*4)
				k.MaxF32(f32(acc), f32(span))
				k.MinF32(f32(acc), f32(span))
				k.AddF32(f32(acc), f32(span))
				bs := span[len(span)-npx*c:]
				k.MaxU8(acc[len(acc)-c:], bs)
				k.MaxI8(asInt8(acc[len(acc)-c:]), asInt8(bs))
				k.AddU8(unsafe.Slice((*uint16)(unsafe.Pointer(&acc[len(acc)-2*c])), c), bs, 0x80)
			})
		}
	}
}
