// Package f32 holds the float micro-kernels behind CONV_2D, FULLY_CONNECTED and
// DEPTHWISE_CONV_2D. Each exists as a pure-Go twin (f32.go) and in
// assembly: AVX-512F and AVX2+FMA on amd64 (f32_amd64.s), NEON
// on arm64 (f32_arm64.s). The set a process uses is picked once
// at init from the CPU's features, and the purego build tag forces the Go
// twins. Every set works on the same layouts:
//
//   - GEMM weights in panels of NR channels, [ceil(N/NR)][K][NR], the
//     last one padded with zeros, and the bias padded the same way;
//   - a GEMM tile's rows interleaved by k, [K][MR] (MR is the set's);
//   - a depthwise filter as TFLite stores it, [kh*kw][C].
//
// Every output element is one sequential sum over k started from zero,
// then bias, then the clamp, whichever kernel of a set (tile or row)
// computes it: how a GEMM is cut into tiles or among threads never changes
// a bit. The assembly sets fuse each multiply-add (one rounding), the Go
// twins round twice; they agree within float tolerance, not bit for bit.

package f32
