// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// argbytes_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define UMAX_16B(d, n, m) WORD $(0x6e206400 | (m)<<16 | (n)<<5 | (d))  // UMAX Vd.16B, Vn.16B, Vm.16B
#define SMAX_16B(d, n, m) WORD $(0x4e206400 | (m)<<16 | (n)<<5 | (d))  // SMAX
#define UMIN_16B(d, n, m) WORD $(0x6e206c00 | (m)<<16 | (n)<<5 | (d))  // UMIN
#define SMIN_16B(d, n, m) WORD $(0x4e206c00 | (m)<<16 | (n)<<5 | (d))  // SMIN
#define UMAXV_B(d, n) WORD $(0x6e30a800 | (n)<<5 | (d))                // UMAXV Bd, Vn.16B
#define SMAXV_B(d, n) WORD $(0x4e30a800 | (n)<<5 | (d))                // SMAXV Bd, Vn.16B
#define UMINV_B(d, n) WORD $(0x6e31a800 | (n)<<5 | (d))                // UMINV Bd, Vn.16B
#define SMINV_B(d, n) WORD $(0x4e31a800 | (n)<<5 | (d))                // SMINV Bd, Vn.16B
#define DUP_B0(d, n) WORD $(0x4e010400 | (n)<<5 | (d))                 // DUP Vd.16B, Vn.B[0]
#define CMEQ_16B(d, n, m) WORD $(0x6e208c00 | (m)<<16 | (n)<<5 | (d))  // CMEQ Vd.16B, Vn.16B, Vm.16B
#define CMHI_16B(d, n, m) WORD $(0x6e203400 | (m)<<16 | (n)<<5 | (d))  // CMHI: Vd = Vn > Vm, unsigned
#define ORN_16B(d, n, m) WORD $(0x4ee01c00 | (m)<<16 | (n)<<5 | (d))   // ORN: Vd = Vn | ^Vm
#define BIF_16B(d, n, m) WORD $(0x6ee01c00 | (m)<<16 | (n)<<5 | (d))   // BIF: Vd = Vm ? Vd : Vn, bitwise
