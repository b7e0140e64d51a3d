package argbytes

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// TestArgBytesReadsNoFurther runs the byte ARG_MAX/ARG_MIN kernel on runs
// that end at an unreadable page: every run length, few runs and many.
func TestArgBytesReadsNoFurther(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for size := 1; size <= 64; size++ {
		for _, n := range []int{1, 2, 3, 70} {
			t.Run(fmt.Sprintf("size%d/runs%d", size, n), func(t *testing.T) {
				src := kerneltest.BeforeGuardPage(t, n*size)
				for i := range src {
					src[i] = uint8(r.Uint32())
				}
				want, got := make([]int32, n), make([]int32, n)
				a := newArgs(size, true, false)
				a.src, a.n, a.dst = &src[0], n, &want[0]
				runGo(&a)
				a.dst = &got[0]
				run(&a)
				if !slices.Equal(got, want) {
					t.Fatalf("indices %v, the Go twin says %v", got, want)
				}
			})
		}
	}
}
