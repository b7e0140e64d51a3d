//go:build !(amd64 || arm64) || purego

package q8

// Best is Portable without the assembly: the 8-bit convolution kernels
// run their portable layouts.
func Best() Kernel { return Portable }

// AsmKernels lists the assembly kernels this CPU can run: none.
func AsmKernels() []Kernel { return nil }

// tileAsm is tileGo where there is no assembly.
func tileAsm(_ Kernel, t *TileArgs) { tileGo(t) }

// rowAsm is rowGo where there is no assembly.
func rowAsm(_ Kernel, t *RowArgs) { rowGo(t) }

// widen is WidenRows: in Go, which no kernel here needs faster.
func widen(dst []uint16, src []uint8, signed bool) { widenGo(dst, src, signed) }
