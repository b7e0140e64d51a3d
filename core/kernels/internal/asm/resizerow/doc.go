// Package resizerow computes output rows of the general UINT8
// RESIZE_BILINEAR: each output byte TFLite's float32 sum of its four
// weighted corners. The rows run in assembly where the CPU has a kernel
// (AVX-512BW, NEON) and in the pure-Go twin RowGo elsewhere and under the
// purego build tag; the tests hold the kernels to the twin.
package resizerow
