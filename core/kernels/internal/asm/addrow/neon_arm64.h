// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// addrow_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define UXTL_8H(d, n) WORD $(0x2f08a400 | (n)<<5 | (d))   // UXTL Vd.8H, Vn.8B
#define UXTL2_8H(d, n) WORD $(0x6f08a400 | (n)<<5 | (d))  // UXTL2 Vd.8H, Vn.16B
#define SXTL_8H(d, n) WORD $(0x0f08a400 | (n)<<5 | (d))   // SXTL Vd.8H, Vn.8B
#define SXTL2_8H(d, n) WORD $(0x4f08a400 | (n)<<5 | (d))  // SXTL2 Vd.8H, Vn.16B
#define SXTL_4S(d, n) WORD $(0x0f10a400 | (n)<<5 | (d))   // SXTL Vd.4S, Vn.4H
#define SXTL2_4S(d, n) WORD $(0x4f10a400 | (n)<<5 | (d))  // SXTL2 Vd.4S, Vn.8H
#define XTN_4H(d, n) WORD $(0x0e612800 | (n)<<5 | (d))    // XTN Vd.4H, Vn.4S
#define XTN2_8H(d, n) WORD $(0x4e612800 | (n)<<5 | (d))   // XTN2 Vd.8H, Vn.4S
#define XTN_8B(d, n) WORD $(0x0e212800 | (n)<<5 | (d))    // XTN Vd.8B, Vn.8H
#define XTN2_16B(d, n) WORD $(0x4e212800 | (n)<<5 | (d))  // XTN2 Vd.16B, Vn.8H
#define ADD_4S(d, n, m) WORD $(0x4ea08400 | (m)<<16 | (n)<<5 | (d))       // ADD Vd.4S, Vn.4S, Vm.4S
#define MUL_4S(d, n, m) WORD $(0x4ea09c00 | (m)<<16 | (n)<<5 | (d))       // MUL Vd.4S, Vn.4S, Vm.4S
#define SUB_4S(d, n, m) WORD $(0x6ea08400 | (m)<<16 | (n)<<5 | (d))       // SUB Vd.4S, Vn.4S, Vm.4S
#define SQADD_4S(d, n, m) WORD $(0x4ea00c00 | (m)<<16 | (n)<<5 | (d))     // SQADD Vd.4S, Vn.4S, Vm.4S
#define SQRDMULH_4S(d, n, m) WORD $(0x6ea0b400 | (m)<<16 | (n)<<5 | (d))  // SQRDMULH Vd.4S, Vn.4S, Vm.4S
#define SSHL_4S(d, n, m) WORD $(0x4ea04400 | (m)<<16 | (n)<<5 | (d))      // SSHL Vd.4S, Vn.4S, Vm.4S
#define SRSHL_4S(d, n, m) WORD $(0x4ea05400 | (m)<<16 | (n)<<5 | (d))     // SRSHL Vd.4S, Vn.4S, Vm.4S
#define SSHR31_4S(d, n) WORD $(0x4f210400 | (n)<<5 | (d))                 // SSHR Vd.4S, Vn.4S, #31
#define SMAX_4S(d, n, m) WORD $(0x4ea06400 | (m)<<16 | (n)<<5 | (d))      // SMAX Vd.4S, Vn.4S, Vm.4S
#define SMIN_4S(d, n, m) WORD $(0x4ea06c00 | (m)<<16 | (n)<<5 | (d))      // SMIN Vd.4S, Vn.4S, Vm.4S
#define AND_16B(d, n, m) WORD $(0x4e201c00 | (m)<<16 | (n)<<5 | (d))   // AND
