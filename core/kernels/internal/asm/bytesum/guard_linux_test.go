package bytesum

import (
	"testing"

	"github.com/delego/delego/testsupport/kerneltest"
)

// TestByteSumReadsNoFurther runs every Sum kernel, and Sums, on
// rows that end at an unreadable page: every length to 130.
func TestByteSumReadsNoFurther(t *testing.T) {
	kernels := Kernels()
	if len(kernels) == 0 {
		t.Skip("no assembly Sum kernel in this build")
	}
	for name, sum := range kernels {
		for n := 1; n <= 130; n++ {
			b := kerneltest.BeforeGuardPage(t, n)
			for i := range b {
				b[i] = uint8(i * 31)
			}
			if got, want := sum(b, 0x80), plainByteSum(b, 0x80); got != want {
				t.Fatalf("%s, %d bytes: %d, want %d", name, n, got, want)
			}
		}
	}
	for n := 1; n <= 130; n++ { // byteSums: three rows, 5 bytes apart
		b := kerneltest.BeforeGuardPage(t, 2*(n+5)+n)
		got := make([]int32, 3)
		Sums(b, n+5, n, 0, 1, 0, got)
		if want := plainByteSum(b[2*(n+5):], 0); got[2] != want {
			t.Fatalf("Sums, rows of %d bytes: the last sums to %d, want %d", n, got[2], want)
		}
	}
}
