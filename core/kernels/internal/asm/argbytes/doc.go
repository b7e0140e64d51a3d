// Package argbytes finds the first index of the largest or smallest byte
// of runs of 1 to 64 bytes: ARG_MAX and ARG_MIN on 8-bit tensors along
// their last axis. The runs go through assembly where the CPU has a kernel
// (AVX-512BW, NEON) and through the pure-Go twin elsewhere and under the
// purego build tag; the tests hold the kernels to the twin.
package argbytes
