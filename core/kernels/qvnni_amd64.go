//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// useVNNI says whether the 8-bit convolution kernels run the AVX-512 VNNI
// assembly; decided once, from the CPU's features.
var useVNNI = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL &&
	cpu.X86.HasAVX512VNNI

// qgemmTile is qgemmTileGo in AVX-512 VNNI assembly.
//
//go:noescape
func qgemmTile(t *qgemmTileArgs)

// dwRow is dwRowGo in AVX-512 VNNI assembly.
//
//go:noescape
func dwRow(t *dwRowArgs)
