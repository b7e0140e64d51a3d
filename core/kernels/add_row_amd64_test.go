//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// addRowSets are the 8-bit ADD row kernels this CPU can run.
func addRowSets() []addRowSet {
	var sets []addRowSet
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2 {
		sets = append(sets, addRowSet{"AVX-512", addRowZMM})
	}
	if cpu.X86.HasAVX2 {
		sets = append(sets, addRowSet{"AVX2", addRowYMM})
	}
	return sets
}
