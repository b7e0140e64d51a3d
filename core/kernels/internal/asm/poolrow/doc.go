// Package poolrow folds the pixels of a pooling window's row into one
// accumulator per channel: the largest value (MAX_POOL_2D of float32,
// uint8 and int8) or the sum (AVERAGE_POOL_2D of float32, and of 8-bit
// values into 16-bit sums). The channels go through assembly where the
// CPU has a kernel (AVX-512, AVX2, NEON), whole vectors at a time, and
// the rest through the pure-Go twin, which is the kernel everywhere else
// and under the purego build tag; the tests hold every kernel to it.
//
// The float kernels give the twin's bits exactly, NaN payloads and zero
// signs included: the maximum and minimum are Go's max and min (on amd64
// the compiler's MINSS sequences, on arm64 FMAX and FMIN, repeated lane by
// lane), and each channel's sum is added in the same order. MaxF32 and
// MinF32 against rows of bounds clamp as kernel.ClampF32 does.
package poolrow
