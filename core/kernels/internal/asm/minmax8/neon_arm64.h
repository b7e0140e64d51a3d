// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// minmax8_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define UMAX_16B(d, n, m) WORD $(0x6e206400 | (m)<<16 | (n)<<5 | (d)) // UMAX Vd.16B, Vn.16B, Vm.16B
#define SMAX_16B(d, n, m) WORD $(0x4e206400 | (m)<<16 | (n)<<5 | (d)) // SMAX
#define UMIN_16B(d, n, m) WORD $(0x6e206c00 | (m)<<16 | (n)<<5 | (d)) // UMIN
#define SMIN_16B(d, n, m) WORD $(0x4e206c00 | (m)<<16 | (n)<<5 | (d)) // SMIN
