//go:build !purego

package q8

import "golang.org/x/sys/cpu"

// The byte-dot-product kernels in amd64 assembly: AVX-512 VNNI, and
// AVX-512BW for CPUs without VNNI (q8_amd64.s), and for CPUs without
// AVX-512 AVX2, with AVX-VNNI's 256-bit VPDPBUSD where present
// (q8_avx2_amd64.s).

// best is the fastest assembly this CPU runs: AVX-512 VNNI, AVX-VNNI,
// AVX-512BW, then AVX2; decided once, from the CPU's features.
var best = func() Kernel {
	if k := AsmKernels(); len(k) > 0 {
		return k[0]
	}
	return Portable
}()

// Best is the fastest kernel this CPU runs: AVX-512 VNNI, AVX-VNNI,
// AVX-512BW, then AVX2, or Portable for none.
func Best() Kernel { return best }

// AsmKernels lists the assembly kernels this CPU can run, fastest first.
func AsmKernels() []Kernel {
	var ks []Kernel
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI {
		ks = append(ks, VNNI)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasAVXVNNI {
		ks = append(ks, AVXVNNI)
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL {
		ks = append(ks, AVX512BW)
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, AVX2)
	}
	return ks
}

// tileAsm runs assembly tile kernel k, or its variant for unsigned
// weights where t says so (UnsignedW: not AVX2's).
func tileAsm(k Kernel, t *TileArgs) {
	unsignedW := t.UnsignedW != 0
	switch {
	case k == VNNI && unsignedW:
		tileVNNIUW(t)
	case k == VNNI:
		tileVNNI(t)
	case k == AVXVNNI && unsignedW:
		tileAVXVNNIUW(t)
	case k == AVXVNNI:
		tileAVXVNNI(t)
	case k == AVX512BW && unsignedW:
		tileAVX512BWUW(t)
	case k == AVX512BW:
		tileAVX512BW(t)
	default:
		tileAVX2(t)
	}
}

// rowAsm runs assembly depthwise row kernel k. AVX-VNNI's VPDPWSSD would
// only fuse an add into the AVX2 kernel's VPMADDWD: it runs the AVX2 one.
func rowAsm(k Kernel, t *RowArgs) {
	switch k {
	case VNNI:
		rowVNNI(t)
	case AVX512BW:
		rowAVX512BW(t)
	default:
		rowAVX2(t)
	}
}

// tileVNNI is tileGo on uint8 rows in AVX-512 VNNI assembly.
//
//go:noescape
func tileVNNI(t *TileArgs)

// tileVNNIUW is tileGo on int8 rows and uint8 weights (UnsignedW) in
// AVX-512 VNNI assembly.
//
//go:noescape
func tileVNNIUW(t *TileArgs)

// rowVNNI is rowGo in AVX-512 VNNI assembly.
//
//go:noescape
func rowVNNI(t *RowArgs)

// tileAVX512BW is tileGo on uint8 rows in AVX-512BW assembly (VPMADDWD
// on the even and the odd bytes).
//
//go:noescape
func tileAVX512BW(t *TileArgs)

// tileAVX512BWUW is tileGo on int8 rows and uint8 weights (UnsignedW)
// in AVX-512BW assembly.
//
//go:noescape
func tileAVX512BWUW(t *TileArgs)

// rowAVX512BW is rowGo in AVX-512BW assembly.
//
//go:noescape
func rowAVX512BW(t *RowArgs)

// tileAVXVNNI is tileGo on uint8 rows in AVX2 assembly with AVX-VNNI's
// VEX-encoded VPDPBUSD.
//
//go:noescape
func tileAVXVNNI(t *TileArgs)

// tileAVXVNNIUW is tileGo on int8 rows and uint8 weights (UnsignedW) in
// AVX2 assembly with AVX-VNNI's VPDPBUSD.
//
//go:noescape
func tileAVXVNNIUW(t *TileArgs)

// tileAVX2 is tileGo on the wide layout in AVX2 assembly.
//
//go:noescape
func tileAVX2(t *TileArgs)

// rowAVX2 is rowGo on paired weights (PairTaps) in AVX2 assembly.
//
//go:noescape
func rowAVX2(t *RowArgs)

// widen is WidenRows, in AVX2 assembly where the CPU has it.
func widen(dst []uint16, src []uint8, signed bool) {
	if cpu.X86.HasAVX2 {
		widenAVX2(&dst[0], &src[0], len(src), signed)
		return
	}
	widenGo(dst, src, signed)
}

// widenAVX2 is widenGo on n bytes in AVX2 assembly.
//
//go:noescape
func widenAVX2(dst *uint16, src *uint8, n int, signed bool)
