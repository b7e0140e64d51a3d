//go:build !purego

package addrow

// Kernel names an 8-bit ADD row kernel; 0 is none.
type Kernel int

// best is the kernel 8-bit ADD and SUB on rows of equal length run:
// NEON (add_row_arm64.s), on every arm64 CPU.
const best Kernel = 1

// Best is the kernel 8-bit ADD and SUB on rows of equal length run:
// NEON.
func Best() Kernel { return best }

// Kernels are the row kernels this CPU runs: NEON.
func Kernels() []Kernel { return []Kernel{best} }

// String names the kernel in test output.
func (Kernel) String() string { return "NEON" }

// Unit is how many elements k takes at a time: whole blocks of 16.
func (Kernel) Unit() int { return 16 }

// Run calls the NEON kernel.
func (Kernel) Run(a *Args) { addRowNEON(a) }

// RunMul calls the NEON MUL kernel (see the amd64 RunMul).
func (Kernel) RunMul(a *Args) { mulRowNEON(a) }

// addRowNEON is the 8-bit ADD.s rescaling in full, in NEON assembly,
// 16 elements at a time; a.n is a multiple of 16.
//
//go:noescape
func addRowNEON(a *Args)

// mulRowNEON is the 8-bit MUL's rescaling in full, in NEON assembly, 16
// elements at a time; a.n is a multiple of 16.
//
//go:noescape
func mulRowNEON(a *Args)
