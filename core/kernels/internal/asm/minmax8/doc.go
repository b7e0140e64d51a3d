// Package minmax8 takes the larger or smaller of two rows of 8-bit
// values, element by element: MAXIMUM and MINIMUM of uint8 and int8
// tensors. The rows go through assembly where the CPU has a kernel
// (AVX-512BW, AVX2, NEON) and through the pure-Go twin elsewhere and
// under the purego build tag; the tests hold every kernel to the twin.
package minmax8
