package resize

import (
	"fmt"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/resizerow"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestResizeRowReadsNoFurther runs the UINT8 resize row kernel on rows
// that end at an unreadable page, with the last source column weighted.
func TestResizeRowReadsNoFurther(t *testing.T) {
	for _, c := range []int{1, 15, 16, 21, 33} {
		t.Run(fmt.Sprintf("c%d", c), func(t *testing.T) {
			const inW, outW = 5, 17
			p := ResizeParams{AlignCorners: true}
			_, ws := resizeScales(p, 2, inW, 2, outW)
			var cols resizeCols
			cols.set(p, ws, inW, outW, c)
			top, bot := kerneltest.BeforeGuardPage(t, inW*c), kerneltest.BeforeGuardPage(t, inW*c)
			for i := range top {
				top[i], bot[i] = uint8(i*7), uint8(i*13)
			}
			want, got := make([]byte, outW*c), make([]byte, outW*c)
			for _, run := range []struct {
				kernel func(*resizerow.Args)
				dst    []byte
			}{{resizerow.RowGo, want}, {resizerow.Row, got}} {
				a := cols.rowArgs(c, inW)
				a.Top, a.Bot, a.WY, a.Dst = &top[0], &bot[0], [2]float32{0.25, 0.75}, &run.dst[0]
				run.kernel(&a)
			}
			if i := kerneltest.FirstDiff(got, want); i >= 0 {
				t.Fatalf("byte %d: kernel %d, Go %d", i, got[i], want[i])
			}
		})
	}
}
