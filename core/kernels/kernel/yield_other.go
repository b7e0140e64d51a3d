//go:build !linux

package kernel

// osYield does nothing here: the spinning thread relies on Go's scheduler
// alone.
func osYield() {}
