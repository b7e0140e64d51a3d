// Package lut8 maps bytes through a 256-entry table: the 8-bit
// activations (RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, HARD_SWISH,
// LOGISTIC, TANH, ...) whose every input byte has its output byte
// computed once, in Prepare. The lookup runs in assembly where the CPU
// has a kernel (AVX-512 VBMI, AVX2, NEON) and through the pure-Go twin
// elsewhere and under the purego build tag; the tests hold every kernel
// to the twin.
package lut8
