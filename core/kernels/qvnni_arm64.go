//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// qvBest is the NEON assembly, with SDOT where the CPU has it (FEAT_DotProd:
// Cortex-A76 and later, not the Cortex-A72 of a Raspberry Pi 4); decided
// once, from the CPU's features.
var qvBest = func() qvKernel {
	if cpu.ARM64.HasASIMDDP {
		return qvNEONDot
	}
	return qvNEON
}()

// qvAsmKernels lists the assembly kernels this CPU can run.
func qvAsmKernels() []qvKernel {
	if cpu.ARM64.HasASIMDDP {
		return []qvKernel{qvNEON, qvNEONDot}
	}
	return []qvKernel{qvNEON}
}

// qgemmTileAsm runs tile kernel k (qvNEON or qvNEONDot).
func qgemmTileAsm(k qvKernel, t *qgemmTileArgs) { qgemmTileNEON(t, k == qvNEONDot) }

// dwRowAsm runs the NEON depthwise row kernel (one for both NEON kernels:
// SDOT has nothing to add to a multiply per channel).
func dwRowAsm(_ qvKernel, t *dwRowArgs) { dwRowNEON(t) }

// qgemmTileNEON is qgemmTileGo on int8 rows in NEON assembly, with SDOT
// when dot is set (the CPU must have it).
//
//go:noescape
func qgemmTileNEON(t *qgemmTileArgs, dot bool)

// dwRowNEON is dwRowGo in NEON assembly.
//
//go:noescape
func dwRowNEON(t *dwRowArgs)
