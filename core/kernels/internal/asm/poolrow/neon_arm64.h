// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// poolrow_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define FMAX_4S(d, n, m) WORD $(0x4e20f400 | (m)<<16 | (n)<<5 | (d))  // FMAX Vd.4S, Vn.4S, Vm.4S
#define FMIN_4S(d, n, m) WORD $(0x4ea0f400 | (m)<<16 | (n)<<5 | (d))  // FMIN Vd.4S, Vn.4S, Vm.4S
#define FADD_4S(d, n, m) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))  // FADD Vd.4S, Vn.4S, Vm.4S
#define UMAX_16B(d, n, m) WORD $(0x6e206400 | (m)<<16 | (n)<<5 | (d)) // UMAX Vd.16B, Vn.16B, Vm.16B
#define SMAX_16B(d, n, m) WORD $(0x4e206400 | (m)<<16 | (n)<<5 | (d)) // SMAX Vd.16B, Vn.16B, Vm.16B
#define UADDW_8B(d, n, m) WORD $(0x2e201000 | (m)<<16 | (n)<<5 | (d)) // UADDW Vd.8H, Vn.8H, Vm.8B
#define UADDW2_16B(d, n, m) WORD $(0x6e201000 | (m)<<16 | (n)<<5 | (d)) // UADDW2 Vd.8H, Vn.8H, Vm.16B
