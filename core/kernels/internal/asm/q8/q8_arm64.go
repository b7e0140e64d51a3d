//go:build !purego

package q8

import "golang.org/x/sys/cpu"

// best is the NEON assembly, with SDOT where the CPU has it
// (FEAT_DotProd: Cortex-A76 and later, not the Cortex-A72 of a Raspberry
// Pi 4), else the pair kernel, 16 depth steps a load; decided once, from
// the CPU's features.
var best = func() Kernel {
	if cpu.ARM64.HasASIMDDP {
		return NEONDot
	}
	return NEONPair
}()

// Best is the fastest kernel this CPU runs: NEON with SDOT where the CPU
// has it, else NEONPair (which falls back to NEON on weights it cannot
// sum exactly, see Kernel.Fallback).
func Best() Kernel { return best }

// AsmKernels lists the assembly kernels this CPU can run.
func AsmKernels() []Kernel {
	if cpu.ARM64.HasASIMDDP {
		return []Kernel{NEON, NEONPair, NEONDot}
	}
	return []Kernel{NEON, NEONPair}
}

// tileAsm runs tile kernel k (NEON, NEONDot or NEONPair).
func tileAsm(k Kernel, t *TileArgs) {
	mode := uint8(0)
	switch k {
	case NEONDot:
		mode = 1
	case NEONPair:
		mode = 2
	}
	tileNEON(t, mode)
}

// rowAsm runs the NEON depthwise row kernel (one for all the NEON
// kernels: SDOT and pairs have nothing to add to a multiply per channel).
func rowAsm(_ Kernel, t *RowArgs) { rowNEON(t) }

// tileNEON is tileGo on int8 rows in NEON assembly: mode 0 SMULL and
// SADALP on groups of 4 depth steps, 1 SDOT (the CPU must have it), 2 the
// pair kernel on the deep layout.
//
//go:noescape
func tileNEON(t *TileArgs, mode uint8)

// rowNEON is rowGo in NEON assembly.
//
//go:noescape
func rowNEON(t *RowArgs)

// widen is WidenRows: in Go, which no kernel here needs faster.
func widen(dst []uint16, src []uint8, signed bool) { widenGo(dst, src, signed) }
