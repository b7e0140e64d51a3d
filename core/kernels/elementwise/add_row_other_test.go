//go:build !(amd64 || arm64) || purego

package elementwise

// addRowKernelsDiff has nothing to check: this build has no 8-bit ADD row
// kernel.
func addRowKernelsDiff[T int8 | uint8](*quantArith, bool, []T, []T, []T) error { return nil }

// mulRowKernelsDiff has nothing to check: this build has no 8-bit MUL row
// kernel.
func mulRowKernelsDiff[T int8 | uint8](*quantArith, []T, []T, []T) error { return nil }
