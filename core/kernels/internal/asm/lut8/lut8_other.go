//go:build !(amd64 || arm64) || purego

package lut8

// best is the twin: there is no assembly for this architecture or build.
const best Kernel = 0

// Kernels is empty: there is no assembly for this architecture or build.
func Kernels() []Kernel { return nil }

// String names k in test output.
func (k Kernel) String() string { return "Go" }

// run does nothing: the twin takes every byte.
func (k Kernel) run(table *[256]byte, src, dst []byte) int { return 0 }
