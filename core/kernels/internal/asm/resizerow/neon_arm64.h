// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// resizerow_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define UXTL_8H(d, n) WORD $(0x2f08a400 | (n)<<5 | (d))   // UXTL Vd.8H, Vn.8B
#define UXTL2_8H(d, n) WORD $(0x6f08a400 | (n)<<5 | (d))  // UXTL2 Vd.8H, Vn.16B
#define UXTL_4S(d, n) WORD $(0x2f10a400 | (n)<<5 | (d))   // UXTL Vd.4S, Vn.4H
#define UXTL2_4S(d, n) WORD $(0x6f10a400 | (n)<<5 | (d))  // UXTL2 Vd.4S, Vn.8H
#define XTN_4H(d, n) WORD $(0x0e612800 | (n)<<5 | (d))    // XTN Vd.4H, Vn.4S
#define XTN2_8H(d, n) WORD $(0x4e612800 | (n)<<5 | (d))   // XTN2 Vd.8H, Vn.4S
#define XTN_8B(d, n) WORD $(0x0e212800 | (n)<<5 | (d))    // XTN Vd.8B, Vn.8H
#define XTN2_16B(d, n) WORD $(0x4e212800 | (n)<<5 | (d))  // XTN2 Vd.16B, Vn.8H
#define FADD_4S(d, n, m) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))      // FADD Vd.4S, Vn.4S, Vm.4S
#define FMUL_4S_S0(d, n, m) WORD $(0x4f809000 | (m)<<16 | (n)<<5 | (d))   // FMUL Vd.4S, Vn.4S, Vm.S[0]
#define UCVTF_4S(d, n) WORD $(0x6e21d800 | (n)<<5 | (d))                  // UCVTF Vd.4S, Vn.4S
#define FCVTZS_4S(d, n) WORD $(0x4ea1b800 | (n)<<5 | (d))                 // FCVTZS Vd.4S, Vn.4S
