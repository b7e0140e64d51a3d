// Package dwf32 computes the output pixels of a float DEPTHWISE_CONV_2D
// (depth multiplier 1): for each pixel and channel, the bias plus the
// products of the filter's taps with the input, clamped to the fused
// activation's range.
//
// The kernels run in assembly where the CPU has a set (AVX-512F,
// AVX2+FMA, NEON) and in the pure-Go twin everywhere else and under the
// purego build tag. The tests hold every set, the twin included, to the
// bits of f32's kernel of the same instruction set. The assembly
// sets compute blocks of pixels at once, 16 sums in flight (8 pixels by
// 2 vectors of channels, or 16 by 1, in AVX-512; 8 by 1 in AVX2; 4 by 4
// in NEON), each tap's weights loaded once for the block: about one
// load per fused multiply-add where f32's kernel took two, and enough
// independent sums to hide the multiply-add's latency.
//
// The bits are those of the kernels this package replaces (f32's DW),
// set for set: every output element is one chain started from the bias,
// one multiply-add per tap in the caller's order, then max(lo), then
// min(hi), a NaN sum staying NaN. The assembly sets fuse each
// multiply-add (one rounding); the Go twin writes acc + x*w, which Go
// fuses on arm64 and rounds twice on amd64, as f32's twin does.
package dwf32
