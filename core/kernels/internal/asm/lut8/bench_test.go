package lut8_test

import (
	"fmt"
	"testing"

	"github.com/delego/delego/core/kernels/internal/asm/lut8"
)

// BenchmarkApply measures the twin and each kernel of this CPU on rows
// of a small, a cache-sized and a large activation.
func BenchmarkApply(b *testing.B) {
	var table [256]byte
	for i := range table {
		table[i] = byte(255 - i)
	}
	for _, n := range []int{64, 4096, 1 << 18} {
		src, dst := make([]byte, n), make([]byte, n)
		for i := range src {
			src[i] = byte(i * 31)
		}
		for _, k := range append([]lut8.Kernel{0}, lut8.Kernels()...) {
			b.Run(fmt.Sprintf("%v/n%d", k, n), func(b *testing.B) {
				b.SetBytes(int64(n))
				for b.Loop() {
					k.Apply(&table, src, dst)
				}
			})
		}
	}
}
