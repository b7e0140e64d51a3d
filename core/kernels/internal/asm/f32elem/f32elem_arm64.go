//go:build !purego

package f32elem

// The NEON kernels (f32elem_arm64.s) take whole blocks of 8 elements.
var neonKernel = Kernel{Name: "neon", unit: 8, asm: 1}

// runAsm runs the NEON kernel on a, called directly so that a does not
// escape.
func runAsm(_ int, a *Args) { runNEON(a) }

// Sets lists the kernel sets this CPU can run, fastest first; the Go
// twins come last. Advanced SIMD is part of every arm64 core Go runs on,
// so NEON needs no feature check.
func Sets() []*Kernel { return []*Kernel{&neonKernel, &goKernel} }

// runNEON runs a.Op on a.N elements, a multiple of 8, 8 at a time.
//
//go:noescape
func runNEON(a *Args)
