// Package elementwise holds the elementwise kernels: the binary
// arithmetic ops with broadcasting (ADD, SUB, MUL, DIV, MAXIMUM, …), the
// unary math ops (ABS, EXP, SQRT, RSQRT, …) and CAST, with TensorFlow
// Lite 2.9's quantized arithmetic.
package elementwise
