package minmax8_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/minmax8"
	"github.com/delego/delego/testsupport/kerneltest"
)

var ops = []minmax8.Op{minmax8.MaxU8, minmax8.MaxI8, minmax8.MinU8, minmax8.MinI8}

func kernelsOrSkip(t *testing.T) []minmax8.Kernel {
	ks := minmax8.Kernels()
	if len(ks) == 0 {
		t.Skip("no assembly MAXIMUM/MINIMUM kernel in this build: the twin is the kernel (the elementwise tests run it)")
	}
	return ks
}

// TestEveryPair holds each kernel to the twin on every pair of bytes.
func TestEveryPair(t *testing.T) {
	x, y := make([]byte, 1<<16), make([]byte, 1<<16)
	for i := range x {
		x[i], y[i] = byte(i), byte(i>>8)
	}
	for _, k := range kernelsOrSkip(t) {
		for _, op := range ops {
			got, want := make([]byte, len(x)), make([]byte, len(x))
			k.Run(op, got, x, y)
			minmax8.Kernel(0).Run(op, want, x, y)
			if i := kerneltest.FirstDiff(got, want); i >= 0 {
				t.Fatalf("%v op %d of %#x and %#x: %#x, the twin says %#x", k, op, x[i], y[i], got[i], want[i])
			}
		}
	}
}

// TestLengths holds each kernel to the twin on every length to 150,
// rows at every offset of one buffer done last-first, so that a kernel
// writing past its row spoils the row before.
func TestLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, k := range kernelsOrSkip(t) {
		for _, op := range ops {
			for n := 0; n <= 150; n++ {
				const rows = 33
				x, y := make([]byte, rows*(n+1)), make([]byte, rows*(n+1))
				for i := range x {
					x[i], y[i] = byte(r.Uint32()), byte(r.Uint32())
				}
				got := make([]byte, len(x))
				for i := range got {
					got[i] = byte(i)
				}
				want := slices.Clone(got)
				for row := rows - 1; row >= 0; row-- {
					o := row * (n + 1)
					k.Run(op, got[o:o+n], x[o:o+n], y[o:o+n])
					minmax8.Kernel(0).Run(op, want[o:o+n], x[o:o+n], y[o:o+n])
				}
				if i := kerneltest.FirstDiff(got, want); i >= 0 {
					t.Fatalf("%v op %d, rows of %d: byte %d is %#x, the twin says %#x", k, op, n, i, got[i], want[i])
				}
			}
		}
	}
}

// TestReadsNoFurther runs each kernel on rows that end at an unreadable
// page.
func TestReadsNoFurther(t *testing.T) {
	for _, k := range kernelsOrSkip(t) {
		for n := 0; n <= 130; n++ {
			t.Run(fmt.Sprintf("%v/n%d", k, n), func(t *testing.T) {
				x, y, z := kerneltest.BeforeGuardPage(t, n), kerneltest.BeforeGuardPage(t, n), kerneltest.BeforeGuardPage(t, n)
				for i := range x {
					x[i], y[i] = byte(i*5), byte(i*11)
				}
				want := make([]byte, n)
				minmax8.Kernel(0).Run(minmax8.MinI8, want, x, y)
				k.Run(minmax8.MinI8, z, x, y)
				if !slices.Equal(z, want) {
					t.Fatalf("got %x, the twin says %x", z, want)
				}
			})
		}
	}
}
