// Package addrow runs the 8-bit ADD, SUB and MUL of rows of equal length
// in assembly (AVX-512BW, AVX2, NEON): each pair of bytes rescaled in full,
// as TFLite's reference kernels do. Its callers run their own Go loops
// where Best is 0, on other architectures and under the purego build tag,
// and the tests in core/kernels hold every kernel of Kernels to them.
package addrow
