package argbytes

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// TestArgBytesKernel holds the byte ARG_MAX/ARG_MIN kernel this build runs
// to its Go twin over every run length, both signednesses and directions,
// on random bytes and on runs full of ties.
func TestArgBytesKernel(t *testing.T) {
	if !hasAsm {
		t.Skip("no assembly ARG_MAX kernel in this build: the twin is the kernel (the ARG_MAX tests run it)")
	}
	r := rand.New(rand.NewPCG(7, 8))
	for size := 1; size <= 64; size++ {
		for _, mode := range []struct{ isMax, signed bool }{{true, false}, {true, true}, {false, false}, {false, true}} {
			t.Run(fmt.Sprintf("size%d/%+v", size, mode), func(t *testing.T) {
				const n = 300
				src := make([]uint8, n*size)
				for i := range src {
					switch {
					case i < n*size/3: // few values: ties
						src[i] = []uint8{0, 0x7f, 0x80, 0xff}[r.IntN(4)]
					default:
						src[i] = uint8(r.Uint32())
					}
				}
				want, got := make([]int32, n), make([]int32, n)
				a := newArgs(size, mode.isMax, mode.signed)
				a.src, a.n, a.dst = &src[0], n, &want[0]
				runGo(&a)
				a.dst = &got[0]
				run(&a)
				if !slices.Equal(got, want) {
					i := kerneltest.FirstDiff(got, want)
					t.Fatalf("run %d %v: index %d, the Go twin says %d", i, src[i*size:(i+1)*size], got[i], want[i])
				}
			})
		}
	}
}
