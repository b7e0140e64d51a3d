//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// The byte-dot-product kernels in amd64 assembly: AVX-512 VNNI, and
// AVX-512BW for CPUs without VNNI (qvnni_amd64.s), and for CPUs without
// AVX-512 AVX2, with AVX-VNNI's 256-bit VPDPBUSD where present
// (qvnni_avx2_amd64.s). golang.org/x/sys/cpu reads GODEBUG, so a machine
// with AVX-512 VNNI runs the others as a CPU without it would, e.g. for the
// golden tests: GODEBUG=cpu.avx512vnni=off runs AVX-512BW;
// cpu.avx512bw=off runs AVX-VNNI (where the CPU has it) or AVX2, and adding
// cpu.avxvnni=off runs AVX2 (the Go runtime, which knows no such features,
// says so on stderr); cpu.avx512f=off in place of cpu.avx512bw=off turns
// the float kernels to AVX2 as well.

// qvBest is the fastest assembly this CPU runs: AVX-512 VNNI, AVX-VNNI,
// AVX-512BW, then AVX2; decided once, from the CPU's features.
var qvBest = func() qvKernel {
	if k := qvAsmKernels(); len(k) > 0 {
		return k[0]
	}
	return qvPortable
}()

// qvAsmKernels lists the assembly kernels this CPU can run, fastest first.
func qvAsmKernels() []qvKernel {
	var ks []qvKernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI {
		ks = append(ks, qvVNNI)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasAVXVNNI {
		ks = append(ks, qvAVXVNNI)
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL {
		ks = append(ks, qvAVX512BW)
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, qvAVX2)
	}
	return ks
}

// qgemmTileAsm runs assembly tile kernel k.
func qgemmTileAsm(k qvKernel, t *qgemmTileArgs) {
	switch k {
	case qvVNNI:
		qgemmTileVNNI(t)
	case qvAVXVNNI:
		qgemmTileAVXVNNI(t)
	case qvAVX512BW:
		qgemmTileAVX512BW(t)
	default:
		qgemmTileAVX2(t)
	}
}

// dwRowAsm runs assembly depthwise row kernel k. AVX-VNNI's VPDPWSSD would
// only fuse an add into the AVX2 kernel's VPMADDWD: it runs the AVX2 one.
func dwRowAsm(k qvKernel, t *dwRowArgs) {
	switch k {
	case qvVNNI:
		dwRowVNNI(t)
	case qvAVX512BW:
		dwRowAVX512BW(t)
	default:
		dwRowAVX2(t)
	}
}

// qgemmTileVNNI is qgemmTileGo on uint8 rows in AVX-512 VNNI assembly.
//
//go:noescape
func qgemmTileVNNI(t *qgemmTileArgs)

// dwRowVNNI is dwRowGo in AVX-512 VNNI assembly.
//
//go:noescape
func dwRowVNNI(t *dwRowArgs)

// qgemmTileAVX512BW is qgemmTileGo on uint8 rows in AVX-512BW assembly
// (VPMADDWD on the even and the odd bytes).
//
//go:noescape
func qgemmTileAVX512BW(t *qgemmTileArgs)

// dwRowAVX512BW is dwRowGo in AVX-512BW assembly.
//
//go:noescape
func dwRowAVX512BW(t *dwRowArgs)

// qgemmTileAVXVNNI is qgemmTileGo on uint8 rows in AVX2 assembly with
// AVX-VNNI's VEX-encoded VPDPBUSD.
//
//go:noescape
func qgemmTileAVXVNNI(t *qgemmTileArgs)

// qgemmTileAVX2 is qgemmTileGo on uint8 rows in AVX2 assembly.
//
//go:noescape
func qgemmTileAVX2(t *qgemmTileArgs)

// dwRowAVX2 is dwRowGo in AVX2 assembly.
//
//go:noescape
func dwRowAVX2(t *dwRowArgs)
