//go:build !purego

package f32elem

// The NEON kernels (f32elem_arm64.s) take whole blocks of 8 elements.
var neonKernel = Kernel{Name: "neon", unit: 8, asm: 1}

// runAsm runs the NEON kernel on a, called directly so that a does not
// escape: Logistic and Tanh are in sigmoid_arm64.s.
func runAsm(_ int, a *Args) {
	if a.Op >= int32(Logistic) {
		sigmoidNEON(a)
		return
	}
	runNEON(a)
}

// Sets lists the kernel sets this CPU can run, fastest first; the Go
// twins come last. Advanced SIMD is part of every arm64 core Go runs on,
// so NEON needs no feature check.
func Sets() []*Kernel { return []*Kernel{&neonKernel, &goKernel} }

// runNEON runs a.Op on a.N elements, a multiple of 8, 8 at a time.
//
//go:noescape
func runNEON(a *Args)

// sigmoidNEON runs a.Op, Logistic or Tanh, on a.N elements, a multiple of
// 4, 4 at a time.
//
//go:noescape
func sigmoidNEON(a *Args)
