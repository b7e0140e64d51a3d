//go:build !purego

package kernels

// addRowSets are the 8-bit ADD row kernels of arm64: NEON, on every CPU.
func addRowSets() []addRowSet { return []addRowSet{{"NEON", addRowCPU}} }
