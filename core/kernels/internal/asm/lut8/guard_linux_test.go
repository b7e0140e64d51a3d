package lut8_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/lut8"
	"github.com/delego/delego/testsupport/kerneltest"
)

// TestReadsNoFurther runs each kernel on rows that end at an unreadable
// page, and writes them into rows that end at one too.
func TestReadsNoFurther(t *testing.T) {
	var table [256]byte
	for i := range table {
		table[i] = byte(i*7 + 3)
	}
	for _, k := range kernelsOrSkip(t) {
		for n := 0; n <= 130; n++ {
			t.Run(fmt.Sprintf("%v/n%d", k, n), func(t *testing.T) {
				src := kerneltest.BeforeGuardPage(t, n)
				for i := range src {
					src[i] = byte(i * 13)
				}
				want := make([]byte, n)
				lut8.ApplyGo(&table, src, want)
				got := kerneltest.BeforeGuardPage(t, n)
				k.Apply(&table, src, got)
				if !slices.Equal(got, want) {
					t.Fatalf("got %x, the twin says %x", got, want)
				}
			})
		}
	}
}
