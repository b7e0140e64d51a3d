package kernels

import (
	"github.com/delego/delego/core/kernels/internal/asm/f32"
	"github.com/delego/delego/core/kernels/internal/asm/q8"
)

// InstructionSets names the kernel sets the convolution kernels chose for
// this CPU and build, once at init from the CPU's features, for reports
// that record what a timing ran on.
type InstructionSets struct {
	// Q8 is the 8-bit GEMM and depthwise set: vnni, avxvnni, avx512bw,
	// avx2, neon-dot, or neon-pair (NEON without SDOT, whose GEMMs take
	// neon's tile where a weight is -128), or portable where no assembly
	// runs (a purego build, another CPU).
	Q8 string `json:"q8"`
	// Float is the float GEMM and depthwise set: avx512, avx2, neon, or go
	// for the pure-Go twins.
	Float string `json:"float"`
}

// Sets returns the kernel sets this process runs.
func Sets() InstructionSets {
	return InstructionSets{Q8: q8.Best().String(), Float: f32.Best().Name}
}
