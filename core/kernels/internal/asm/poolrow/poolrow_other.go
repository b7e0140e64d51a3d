//go:build !(amd64 || arm64) || purego

package poolrow

// best is the twin: there is no assembly for this architecture or build.
const best Kernel = 0

// Kernels is empty: there is no assembly for this architecture or build.
func Kernels() []Kernel { return nil }

// String names k in test output.
func (k Kernel) String() string { return "Go" }

// The kernels do no channel: the twin takes them all.

func (k Kernel) maxF32(acc, span []float32, npx int) int                 { return 0 }
func (k Kernel) minF32(acc, span []float32, npx int) int                 { return 0 }
func (k Kernel) addF32(acc, span []float32, npx int) int                 { return 0 }
func (k Kernel) maxU8(acc, span []uint8, npx int, signed bool) int       { return 0 }
func (k Kernel) addU8(acc []uint16, span []byte, npx int, flip byte) int { return 0 }
