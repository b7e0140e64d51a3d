// Package q8 runs the byte-dot-product kernels of the 8-bit convolutions:
// the GEMM tile kernel behind CONV_2D and FULLY_CONNECTED (Tile) and the
// depthwise row kernel behind DEPTHWISE_CONV_2D (Row). Each runs in
// assembly (AVX-512 VNNI, AVX-VNNI, AVX-512BW and AVX2 on amd64, NEON with
// or without SDOT on arm64) or in its pure-Go twin, on the same layouts
// (see TileArgs and RowArgs), and every kernel gives the twin's bytes; the
// tests hold each kernel this CPU runs (AsmKernels) to the twins. The AVX2
// kernels, which multiply 16-bit values with VPMADDWD, read forms of those
// layouts prepared for them (Kernel.Wide: rows and weights widened to 16
// bits; Kernel.PairedTaps: two depthwise taps' weights in one int32), which
// the twins read too. NEON without SDOT multiplies 16 depth steps of a
// row and a channel at a time (NEONPair), on a third form of the weights
// (Kernel.Deep), and falls back to the plain NEON tile on weights it
// cannot sum exactly (PairSafe).
//
// A caller fixes a Kernel when it prepares an op: Best, decided once from
// the CPU's features, or Portable (none: the caller's own portable
// layouts) where Best is Portable, on other architectures and under the
// purego build tag.
//
// golang.org/x/sys/cpu reads GODEBUG, so a machine with AVX-512 VNNI runs
// the others as a CPU without it would, e.g. for the golden tests:
// GODEBUG=cpu.avx512vnni=off runs AVX-512BW; cpu.avx512bw=off runs
// AVX-VNNI (where the CPU has it) or AVX2, and adding cpu.avxvnni=off runs
// AVX2 (the Go runtime, which knows no such features, says so on stderr);
// cpu.avx512f=off in place of cpu.avx512bw=off turns the float kernels to
// AVX2 as well. On arm64, cpu.asimddp=off runs NEON without SDOT.
package q8
