//go:build (!amd64 && !arm64) || purego

package f32

// Sets lists the float kernel sets this build can run on this
// CPU, the one to use first: without assembly, only the Go twins.
func Sets() []*Kernels { return []*Kernels{&goKernels} }
