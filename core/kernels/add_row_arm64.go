//go:build !purego

package kernels

// addRowAsm says that 8-bit ADD and SUB on rows of equal length run the
// NEON kernel (add_row_arm64.s).
const addRowAsm = true

// addRowBlock is the row kernel's unit: whole blocks of 16 elements.
const addRowBlock = 16

// addRowKernel is quantAddRow's 8-bit rescaling in full, in NEON assembly,
// 16 elements at a time; a.n is a multiple of 16.
//
//go:noescape
func addRowKernel(a *addRowArgs)
