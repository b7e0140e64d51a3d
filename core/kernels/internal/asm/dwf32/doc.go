// Package dwf32 computes the output pixels of a float DEPTHWISE_CONV_2D
// (depth multiplier 1): for each pixel and channel, the bias plus the
// products of the filter's taps with the input, clamped to the fused
// activation's range.
//
// The kernels run in assembly where the CPU has a set (AVX-512F,
// AVX2+FMA, NEON) and in the pure-Go twin everywhere else and under the
// purego build tag; the tests hold every set to the twin. The assembly
// sets compute blocks of up to 16 pixels at once (8 in AVX2's 16
// registers, 4 in NEON), one accumulator per pixel and vector of
// channels, each tap's weights loaded once for the block: a fused
// multiply-add per load of input instead of one per two loads, and
// enough independent sums to hide the multiply-add's latency.
//
// The bits are those of the kernels this package replaces (f32's DW),
// set for set: every output element is one chain started from the bias,
// one multiply-add per tap in the caller's order, then max(lo), then
// min(hi), a NaN sum staying NaN. The assembly sets fuse each
// multiply-add (one rounding); the Go twin writes acc + x*w, which Go
// fuses on arm64 and rounds twice on amd64, as f32's twin does.
package dwf32
