//go:build !linux

package kernels

// osYield does nothing here: the spinning thread relies on Go's scheduler
// alone.
func osYield() {}
