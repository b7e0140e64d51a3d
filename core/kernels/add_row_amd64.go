//go:build !purego

package kernels

import "golang.org/x/sys/cpu"

// addRowAsm says whether 8-bit ADD and SUB on rows of equal length run the
// AVX-512 kernel (add_row_amd64.s); GODEBUG=cpu.avx512bw=off turns it off.
var addRowAsm = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasBMI2

// addRowBlock is the row kernel's unit: it takes rows of any length,
// masking the last 16 elements.
const addRowBlock = 1

// addRowKernel is quantAddRow's 8-bit rescaling in full, in AVX-512
// assembly, 16 elements at a time.
//
//go:noescape
func addRowKernel(a *addRowArgs)
