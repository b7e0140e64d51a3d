package resize

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/resizerow"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestResizeRowAsmMatchesGo holds the row kernel this build runs to its
// pure-Go twin, byte for byte, over channel counts around the vector width,
// upscales and downscales, both pixel conventions and random rows; bytes
// after the row stay untouched.
func TestResizeRowAsmMatchesGo(t *testing.T) {
	if !resizerow.HasAsm() {
		t.Skip("no assembly row kernel in this build: the twin is the kernel (the resize tests run it)")
	}
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []int{1, 3, 8, 15, 16, 17, 21, 32, 40} {
		for _, sz := range [][2]int{{3, 10}, {10, 3}, {33, 513}, {7, 7}, {1, 5}} {
			for _, p := range []ResizeParams{{}, {HalfPixelCenters: true}, {AlignCorners: true}} {
				t.Run(fmt.Sprintf("c%d/%dto%d/%+v", c, sz[0], sz[1], p), func(t *testing.T) {
					inW, outW := sz[0], sz[1]
					_, ws := resizeScales(p, 2, inW, 2, outW)
					var cols resizeCols
					cols.set(p, ws, inW, outW, c)
					top, bot := make([]uint8, inW*c), make([]uint8, inW*c)
					for i := range top {
						top[i], bot[i] = uint8(r.Uint32()), uint8(r.Uint32())
					}
					dy := r.Float32()
					out := func(kernel func(*resizerow.Args)) []byte {
						dst := bytes.Repeat([]byte{0xa5}, outW*c+32)
						a := cols.rowArgs(c, inW)
						a.Top, a.Bot, a.WY, a.Dst = &top[0], &bot[0], [2]float32{1 - dy, dy}, &dst[0]
						kernel(&a)
						return dst
					}
					want, got := out(resizerow.RowGo), out(resizerow.Row)
					if i := kerneltest.FirstDiff(got, want); i >= 0 {
						t.Fatalf("byte %d: assembly %d, Go %d", i, got[i], want[i])
					}
					if !bytes.Equal(got[outW*c:], bytes.Repeat([]byte{0xa5}, 32)) {
						t.Fatalf("the assembly wrote past the row")
					}
				})
			}
		}
	}
}
