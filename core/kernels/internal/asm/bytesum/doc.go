// Package bytesum sums rows of bytes, each XORed with a constant: the row
// terms of the 8-bit GEMM (the sum of each stored row of the input, times
// the weights' zero point). The sums run in assembly where the CPU has a
// kernel (AVX-512BW, AVX2, NEON) and in the pure-Go twin SumGo elsewhere
// and under the purego build tag; the tests hold both to the same plain
// sum.
package bytesum
