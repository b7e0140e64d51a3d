//go:build !purego

package kernels

// addRowKernel names an 8-bit ADD row kernel; 0 is none.
type addRowKernel int

// addRowCPU is the kernel 8-bit ADD and SUB on rows of equal length run:
// NEON (add_row_arm64.s), on every arm64 CPU.
const addRowCPU addRowKernel = 1

// addRowKernels are the row kernels this CPU runs: NEON.
func addRowKernels() []addRowKernel { return []addRowKernel{addRowCPU} }

// String names the kernel in test output.
func (addRowKernel) String() string { return "NEON" }

// unit is how many elements k takes at a time: whole blocks of 16.
func (addRowKernel) unit() int { return 16 }

// run calls the NEON kernel.
func (addRowKernel) run(a *addRowArgs) { addRowNEON(a) }

// addRowNEON is quantAddRow's 8-bit rescaling in full, in NEON assembly,
// 16 elements at a time; a.n is a multiple of 16.
//
//go:noescape
func addRowNEON(a *addRowArgs)
