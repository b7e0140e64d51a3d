package lut8_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/lut8"
	"github.com/delego/delego/testsupport/kerneltest"
)

// kernelsOrSkip returns the kernels of this build, or skips the test
// when the twin is the only one (the activation tests run the twin).
func kernelsOrSkip(t *testing.T) []lut8.Kernel {
	ks := lut8.Kernels()
	if len(ks) == 0 {
		t.Skip("no assembly lookup kernel in this build: the twin is the kernel (the activation tests run it)")
	}
	return ks
}

// TestEveryByte holds each kernel to the twin on all 256 bytes, in
// every order a vector might see them, through random tables and the
// identity.
func TestEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	all := make([]byte, 256*4)
	for i := range all {
		all[i] = byte(i)
	}
	r.Shuffle(len(all[512:]), func(i, j int) { all[512+i], all[512+j] = all[512+j], all[512+i] })
	var tables [4][256]byte
	for i := range tables[0] {
		tables[0][i] = byte(i)
		tables[1][i] = ^byte(i)
	}
	for i := range tables[2] {
		tables[2][i] = byte(r.Uint32())
		tables[3][i] = byte(r.Uint32())
	}
	for _, k := range kernelsOrSkip(t) {
		for ti := range tables {
			want, got := make([]byte, len(all)), make([]byte, len(all))
			lut8.ApplyGo(&tables[ti], all, want)
			k.Apply(&tables[ti], all, got)
			if !slices.Equal(got, want) {
				i := kerneltest.FirstDiff(got, want)
				t.Fatalf("%v, table %d: byte %#x maps to %#x, the twin says %#x", k, ti, all[i], got[i], want[i])
			}
		}
	}
}

// TestLengths holds each kernel to the twin on every length to 200 at
// every alignment of a 64-byte line, rows done last-first into one
// buffer so that a kernel writing past its row's end is caught.
func TestLengths(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var table [256]byte
	for i := range table {
		table[i] = byte(r.Uint32())
	}
	for _, k := range kernelsOrSkip(t) {
		for n := 0; n <= 200; n++ {
			t.Run(fmt.Sprintf("%v/n%d", k, n), func(t *testing.T) {
				const rows = 64
				src := make([]byte, rows*(n+1)+64)
				for i := range src {
					src[i] = byte(r.Uint32())
				}
				want, got := make([]byte, len(src)), make([]byte, len(src))
				for i := range got {
					got[i] = byte(i)
					want[i] = byte(i)
				}
				for row := rows - 1; row >= 0; row-- { // row starts at byte row*(n+1): every alignment
					o := row * (n + 1)
					lut8.ApplyGo(&table, src[o:o+n], want[o:o+n])
					k.Apply(&table, src[o:o+n], got[o:o+n])
				}
				if !slices.Equal(got, want) {
					i := kerneltest.FirstDiff(got, want)
					t.Fatalf("byte %d (row of %d): %#x, the twin says %#x", i, n, got[i], want[i])
				}
			})
		}
	}
}
