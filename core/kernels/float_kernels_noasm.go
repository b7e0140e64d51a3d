//go:build (!amd64 && !arm64) || purego

package kernels

// floatKernelSets lists the float kernel sets this build can run on this
// CPU, the one to use first: without assembly, only the Go twins.
func floatKernelSets() []*floatKernels { return []*floatKernels{&goFloatKernels} }
