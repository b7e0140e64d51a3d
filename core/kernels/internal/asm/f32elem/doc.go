// Package f32elem runs the float element-wise kernels of the activation
// and binary ops (RELU, RELU6, RELU_N1_TO_1, LEAKY_RELU, HARD_SWISH,
// PRELU, LOGISTIC and TANH; ADD, SUB and MUL with their fused clamps,
// MAXIMUM, MINIMUM) in assembly: AVX-512F and AVX2 on amd64, NEON on
// arm64. Each kernel computes exactly what its pure-Go twin (f32elem.go,
// sigmoid.go) computes, bit for bit: every operation is one IEEE
// operation, a comparison or a bitwise select, never fused, and each
// comparison is the one the twin makes, so NaN, -0,
// infinities and denormals come out the same (where both operands of a
// binary op are NaN, which of them comes out follows the operand order,
// which the Go compiler may swap in the twin). The set a process uses is
// picked once at init from the CPU's features (GODEBUG=cpu.avx512f=off
// turns AVX-512 off), and the purego build tag forces the Go twins. The
// tests hold every kernel this CPU runs to the twins.
package f32elem
