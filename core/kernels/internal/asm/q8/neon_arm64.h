// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// q8_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

// Widening and narrowing.
#define UXTL_8H(d, n) WORD $(0x2f08a400 | (n)<<5 | (d))   // UXTL Vd.8H, Vn.8B
#define UXTL2_8H(d, n) WORD $(0x6f08a400 | (n)<<5 | (d))  // UXTL2 Vd.8H, Vn.16B
#define SXTL_8H(d, n) WORD $(0x0f08a400 | (n)<<5 | (d))   // SXTL Vd.8H, Vn.8B
#define SXTL2_8H(d, n) WORD $(0x4f08a400 | (n)<<5 | (d))  // SXTL2 Vd.8H, Vn.16B
#define XTN_2S(d, n) WORD $(0x0ea12800 | (n)<<5 | (d))    // XTN Vd.2S, Vn.2D
#define XTN2_4S(d, n) WORD $(0x4ea12800 | (n)<<5 | (d))   // XTN2 Vd.4S, Vn.2D
#define XTN_4H(d, n) WORD $(0x0e612800 | (n)<<5 | (d))    // XTN Vd.4H, Vn.4S
#define XTN2_8H(d, n) WORD $(0x4e612800 | (n)<<5 | (d))   // XTN2 Vd.8H, Vn.4S
#define XTN_8B(d, n) WORD $(0x0e212800 | (n)<<5 | (d))    // XTN Vd.8B, Vn.8H
#define XTN2_16B(d, n) WORD $(0x4e212800 | (n)<<5 | (d))  // XTN2 Vd.16B, Vn.8H

// Integer arithmetic.
#define SMULL_8H(d, n, m) WORD $(0x0e20c000 | (m)<<16 | (n)<<5 | (d))     // SMULL Vd.8H, Vn.8B, Vm.8B
#define SMULL2_8H(d, n, m) WORD $(0x4e20c000 | (m)<<16 | (n)<<5 | (d))    // SMULL2 Vd.8H, Vn.16B, Vm.16B
#define SMULL_2D(d, n, m) WORD $(0x0ea0c000 | (m)<<16 | (n)<<5 | (d))     // SMULL Vd.2D, Vn.2S, Vm.2S
#define SMULL2_2D(d, n, m) WORD $(0x4ea0c000 | (m)<<16 | (n)<<5 | (d))    // SMULL2 Vd.2D, Vn.4S, Vm.4S
#define SMLAL2_8H(d, n, m) WORD $(0x4e208000 | (m)<<16 | (n)<<5 | (d))    // SMLAL2 Vd.8H, Vn.16B, Vm.16B
#define SMLAL_4S(d, n, m) WORD $(0x0e608000 | (m)<<16 | (n)<<5 | (d))     // SMLAL Vd.4S, Vn.4H, Vm.4H
#define SMLAL2_4S(d, n, m) WORD $(0x4e608000 | (m)<<16 | (n)<<5 | (d))    // SMLAL2 Vd.4S, Vn.8H, Vm.8H
#define SADDLP_4S(d, n) WORD $(0x4e602800 | (n)<<5 | (d))                 // SADDLP Vd.4S, Vn.8H
#define SADALP_4S(d, n) WORD $(0x4e606800 | (n)<<5 | (d))                 // SADALP Vd.4S, Vn.8H
#define ADDP_4S(d, n, m) WORD $(0x4ea0bc00 | (m)<<16 | (n)<<5 | (d))      // ADDP Vd.4S, Vn.4S, Vm.4S
#define ADD_4S(d, n, m) WORD $(0x4ea08400 | (m)<<16 | (n)<<5 | (d))       // ADD Vd.4S, Vn.4S, Vm.4S
#define ADD_2D(d, n, m) WORD $(0x4ee08400 | (m)<<16 | (n)<<5 | (d))       // ADD Vd.2D, Vn.2D, Vm.2D
#define NEG_2D(d, n) WORD $(0x6ee0b800 | (n)<<5 | (d))                    // NEG Vd.2D, Vn.2D
#define SSHL_4S(d, n, m) WORD $(0x4ea04400 | (m)<<16 | (n)<<5 | (d))      // SSHL Vd.4S, Vn.4S, Vm.4S
#define SSHL_2D(d, n, m) WORD $(0x4ee04400 | (m)<<16 | (n)<<5 | (d))      // SSHL Vd.2D, Vn.2D, Vm.2D
#define SMAX_4S(d, n, m) WORD $(0x4ea06400 | (m)<<16 | (n)<<5 | (d))      // SMAX Vd.4S, Vn.4S, Vm.4S
#define SMIN_4S(d, n, m) WORD $(0x4ea06c00 | (m)<<16 | (n)<<5 | (d))      // SMIN Vd.4S, Vn.4S, Vm.4S
#define AND_16B(d, n, m) WORD $(0x4e201c00 | (m)<<16 | (n)<<5 | (d))      // AND Vd.16B, Vn.16B, Vm.16B
#define CMLT0_4S(d, n) WORD $(0x4ea0a800 | (n)<<5 | (d))                  // CMLT Vd.4S, Vn.4S, #0
#define SQADD_4S(d, n, m) WORD $(0x4ea00c00 | (m)<<16 | (n)<<5 | (d))     // SQADD Vd.4S, Vn.4S, Vm.4S
#define SQRDMULH_4S(d, n, m) WORD $(0x6ea0b400 | (m)<<16 | (n)<<5 | (d))  // SQRDMULH Vd.4S, Vn.4S, Vm.4S
#define SRSHL_4S(d, n, m) WORD $(0x4ea05400 | (m)<<16 | (n)<<5 | (d))     // SRSHL Vd.4S, Vn.4S, Vm.4S
#define ZIP1_2D(d, n, m) WORD $(0x4ec03800 | (m)<<16 | (n)<<5 | (d))      // ZIP1 Vd.2D, Vn.2D, Vm.2D
#define ZIP2_2D(d, n, m) WORD $(0x4ec07800 | (m)<<16 | (n)<<5 | (d))      // ZIP2 Vd.2D, Vn.2D, Vm.2D

// SDOT Vd.4S, Vn.16B, Vm.4B[i] (FEAT_DotProd): lane j of d += the dot
// product of bytes 4j..4j+3 of n with bytes 4i..4i+3 of m, all signed.
#define SDOT_4S(d, n, m, i) WORD $(0x4f80e000 | ((i)&1)<<21 | ((i)>>1)<<11 | (m)<<16 | (n)<<5 | (d))

