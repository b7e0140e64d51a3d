//go:build (amd64 || arm64) && !purego

package elementwise

import (
	"fmt"

	"github.com/delego/delego/core/kernels/internal/asm/addrow"
	"github.com/delego/delego/testsupport/kerneltest"
)

// addRowKernelsDiff runs every 8-bit ADD row kernel this CPU has (through
// addRowWith, which leaves a row's last elements to the tables) over x
// and y (see rowKernelsDiff), and says where one differs from want.
func addRowKernelsDiff[T int8 | uint8](q *quantArith, sub bool, x, y, want []T) error {
	return rowKernelsDiff(func(k addrow.Kernel, z, x, y []T) { addRowWith(k, q, sub, z, x, y) }, x, y, want)
}

// mulRowKernelsDiff is addRowKernelsDiff for the 8-bit MUL row kernels
// (through mulRowWith).
func mulRowKernelsDiff[T int8 | uint8](q *quantArith, x, y, want []T) error {
	return rowKernelsDiff(func(k addrow.Kernel, z, x, y []T) { mulRowWith(k, q, z, x, y) }, x, y, want)
}

// rowKernelsDiff runs run with every row kernel this CPU has over x and y
// cut into rows of 1 to 40 bytes, and says where one differs from want.
// The rows go last first: a kernel writing past its row spoils the one
// after it, already done.
func rowKernelsDiff[T int8 | uint8](run func(k addrow.Kernel, z, x, y []T), x, y, want []T) error {
	var cuts []int
	for lo, n := 0, 1; lo < len(x); lo, n = lo+n, n%40+1 {
		cuts = append(cuts, lo)
	}
	got := make([]T, len(x))
	for _, k := range addrow.Kernels() {
		clear(got)
		for i, hi := len(cuts)-1, len(x); i >= 0; i, hi = i-1, cuts[i] {
			lo := cuts[i]
			run(k, got[lo:hi], x[lo:hi], y[lo:hi])
		}
		if i := kerneltest.FirstDiff(got, want); i >= 0 {
			return fmt.Errorf("x %d, y %d: the %v row kernel gives %d, in full %d", x[i], y[i], k, got[i], want[i])
		}
	}
	return nil
}
