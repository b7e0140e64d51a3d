//go:build !purego

package q8

import "golang.org/x/sys/cpu"

// best is the NEON assembly, with SDOT where the CPU has it
// (FEAT_DotProd: Cortex-A76 and later, not the Cortex-A72 of a Raspberry
// Pi 4); decided once, from the CPU's features.
var best = func() Kernel {
	if cpu.ARM64.HasASIMDDP {
		return NEONDot
	}
	return NEON
}()

// Best is the fastest kernel this CPU runs: NEON with SDOT where the CPU
// has it, else NEON.
func Best() Kernel { return best }

// AsmKernels lists the assembly kernels this CPU can run.
func AsmKernels() []Kernel {
	if cpu.ARM64.HasASIMDDP {
		return []Kernel{NEON, NEONDot}
	}
	return []Kernel{NEON}
}

// tileAsm runs tile kernel k (NEON or NEONDot).
func tileAsm(k Kernel, t *TileArgs) { tileNEON(t, k == NEONDot) }

// rowAsm runs the NEON depthwise row kernel (one for both NEON kernels:
// SDOT has nothing to add to a multiply per channel).
func rowAsm(_ Kernel, t *RowArgs) { rowNEON(t) }

// tileNEON is tileGo on int8 rows in NEON assembly, with SDOT when dot is
// set (the CPU must have it).
//
//go:noescape
func tileNEON(t *TileArgs, dot bool)

// rowNEON is rowGo in NEON assembly.
//
//go:noescape
func rowNEON(t *RowArgs)

// widen is WidenRows: in Go, which no kernel here needs faster.
func widen(dst []uint16, src []uint8, signed bool) { widenGo(dst, src, signed) }
