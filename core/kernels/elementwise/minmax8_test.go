package elementwise

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/delego/delego/tensor"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestMinMax8MatchesGeneric holds the 8-bit MAXIMUM and MINIMUM to the
// generic minMaxRows they replace, on shapes of equal rows, of a scalar on
// either side (long rows: the table; short ones: the loop) and of a
// per-channel broadcast, both 8-bit types.
func TestMinMax8MatchesGeneric(t *testing.T) {
	shapes := [][2][]int{
		{{1, 300}, {1, 300}}, {{5, 67}, {5, 67}}, {{0}, {0}},
		{{1, 600}, {1}}, {{1}, {1, 600}}, {{1, 40}, {1}}, {{1}, {1, 40}},
		{{3, 10, 33}, {1, 1, 33}}, {{3, 300, 1}, {3, 1, 1}},
	}
	r := rand.New(rand.NewPCG(15, 16))
	for _, sh := range shapes {
		for _, mx := range []bool{true, false} {
			name := fmt.Sprintf("%v/max=%v", sh, mx)
			out, err := tensor.BroadcastShape(sh[0], sh[1])
			if err != nil {
				t.Fatal(err)
			}
			p := newBcastPlan(sh[0], sh[1], out)
			a, b := make([]byte, tensor.NumElements(sh[0])), make([]byte, tensor.NumElements(sh[1]))
			for i := range a {
				a[i] = byte(r.Uint32())
			}
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			var st scalarTable
			got, want := make([]uint8, p.n), make([]uint8, p.n)
			minMax8Rows(&st, mx, p, a, b, got)
			minMaxRows(mx, p, a, b, want)
			if i := kerneltest.FirstDiff(got, want); i >= 0 {
				t.Fatalf("%s uint8: element %d is %#x, want %#x", name, i, got[i], want[i])
			}
			ai, bi, gi, wi := make([]int8, len(a)), make([]int8, len(b)), make([]int8, p.n), make([]int8, p.n)
			for i, v := range a {
				ai[i] = int8(v)
			}
			for i, v := range b {
				bi[i] = int8(v)
			}
			minMax8Rows(&st, mx, p, ai, bi, gi)
			minMaxRows(mx, p, ai, bi, wi)
			if i := kerneltest.FirstDiff(gi, wi); i >= 0 {
				t.Fatalf("%s int8: element %d is %d, want %d", name, i, gi[i], wi[i])
			}
		}
	}
}
