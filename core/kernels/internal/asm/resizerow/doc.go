// Package resizerow computes output rows of the general UINT8 and FLOAT32
// RESIZE_BILINEAR: each output TFLite's float32 sum of its four weighted
// corners. The rows run in assembly where the CPU has a kernel (UINT8:
// AVX-512BW, NEON; FLOAT32: AVX-512F) and in the pure-Go twins RowGo and
// RowF32Go elsewhere and under the purego build tag; the tests hold the
// kernels to the twins.
package resizerow
