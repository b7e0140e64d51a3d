package f32elem

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/delego/delego/testsupport/kerneltest"
)

// TestKernelsStayInRows runs every set over rows that end at an
// unreadable page (the inputs) and rows of the output between guards:
// a kernel that reads past its inputs faults, one that writes past its
// output spoils the guard.
func TestKernelsStayInRows(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 2))
	for _, k := range Sets() {
		for n := 1; n <= 70; n++ {
			x := floats(kerneltest.BeforeGuardPage(t, 4*n))
			y := floats(kerneltest.BeforeGuardPage(t, 4*n))
			fill(r, x)
			fill(r, y)
			buf := make([]float32, n+32)
			for _, op := range []Op{MaxMin, Clamp, LeakyRelu, HardSwish, Add, Sub, Mul, Max, Min, PRelu} {
				for i := range buf {
					buf[i] = 12345
				}
				z := buf[16 : 16+n]
				if op.Binary() {
					k.Binary(op, z, x, y, -1, 1)
				} else {
					k.Unary(op, z, x, 0, 6, 0.5)
				}
				for i, v := range buf {
					if (i < 16 || i >= 16+n) && v != 12345 {
						t.Fatalf("%s %v, %d elements: wrote %g at %d of the guard", k.Name, op, n, v, i-16)
					}
				}
			}
		}
	}
}

// floats views b (a multiple of 4 bytes) as float32s.
func floats(b []byte) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}
