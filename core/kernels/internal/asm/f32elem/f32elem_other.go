//go:build (!amd64 && !arm64) || purego

package f32elem

// Sets lists the kernel sets this build can run: without assembly, only
// the Go twins.
func Sets() []*Kernel { return []*Kernel{&goKernel} }

// runAsm is never called: no kernel set of this build has assembly.
func runAsm(int, *Args) {}
