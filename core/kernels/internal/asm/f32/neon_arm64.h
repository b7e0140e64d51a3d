// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// f32_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define FADD_4S(d, n, m) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))      // FADD Vd.4S, Vn.4S, Vm.4S
#define FMAX_4S(d, n, m) WORD $(0x4e20f400 | (m)<<16 | (n)<<5 | (d))      // FMAX Vd.4S, Vn.4S, Vm.4S
#define FMIN_4S(d, n, m) WORD $(0x4ea0f400 | (m)<<16 | (n)<<5 | (d))      // FMIN Vd.4S, Vn.4S, Vm.4S
#define FMLA_4S_S(d, n, m, i) WORD $(0x4f801000 | ((i)&1)<<21 | ((i)>>1)<<11 | (m)<<16 | (n)<<5 | (d)) // FMLA Vd.4S, Vn.4S, Vm.S[i]
