//go:build !(amd64 || arm64) || purego

package kernels

// qvBest is qvPortable without the assembly: the 8-bit convolution kernels
// run their portable layouts.
const qvBest = qvPortable

// qvAsmKernels lists the assembly kernels this CPU can run: none.
func qvAsmKernels() []qvKernel { return nil }

// qgemmTileAsm is qgemmTileGo where there is no assembly.
func qgemmTileAsm(_ qvKernel, t *qgemmTileArgs) { qgemmTileGo(t) }

// dwRowAsm is dwRowGo where there is no assembly.
func dwRowAsm(_ qvKernel, t *dwRowArgs) { dwRowGo(t) }
