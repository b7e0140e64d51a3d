//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// qvBest is the AVX-512 VNNI assembly where the CPU has it; decided once,
// from the CPU's features.
var qvBest = func() qvKernel {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI {
		return qvVNNI
	}
	return qvPortable
}()

// qvAsmKernels lists the assembly kernels this CPU can run.
func qvAsmKernels() []qvKernel {
	if qvBest == qvVNNI {
		return []qvKernel{qvVNNI}
	}
	return nil
}

// qgemmTileAsm runs the assembly tile kernel (there is one: AVX-512 VNNI).
func qgemmTileAsm(_ qvKernel, t *qgemmTileArgs) { qgemmTileVNNI(t) }

// dwRowAsm runs the assembly depthwise row kernel.
func dwRowAsm(_ qvKernel, t *dwRowArgs) { dwRowVNNI(t) }

// qgemmTileVNNI is qgemmTileGo on uint8 rows in AVX-512 VNNI assembly.
//
//go:noescape
func qgemmTileVNNI(t *qgemmTileArgs)

// dwRowVNNI is dwRowGo in AVX-512 VNNI assembly.
//
//go:noescape
func dwRowVNNI(t *dwRowArgs)
