// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// dwf32_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define FMAX_4S(d, n, m) WORD $(0x4e20f400 | (m)<<16 | (n)<<5 | (d)) // FMAX Vd.4S, Vn.4S, Vm.4S
#define FMIN_4S(d, n, m) WORD $(0x4ea0f400 | (m)<<16 | (n)<<5 | (d)) // FMIN Vd.4S, Vn.4S, Vm.4S
