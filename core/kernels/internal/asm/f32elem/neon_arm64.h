// NEON instructions Go's arm64 assembler lacks, written as WORDs for
// f32elem_arm64.s. Arguments are vector register numbers: d the
// destination, n and m the sources.

#define FADD_4S(d, n, m) WORD $(0x4e20d400 | (m)<<16 | (n)<<5 | (d))  // FADD Vd.4S, Vn.4S, Vm.4S
#define FSUB_4S(d, n, m) WORD $(0x4ea0d400 | (m)<<16 | (n)<<5 | (d))  // FSUB Vd.4S, Vn.4S, Vm.4S
#define FMUL_4S(d, n, m) WORD $(0x6e20dc00 | (m)<<16 | (n)<<5 | (d))  // FMUL Vd.4S, Vn.4S, Vm.4S
#define FCMGT_4S(d, n, m) WORD $(0x6ea0e400 | (m)<<16 | (n)<<5 | (d)) // FCMGT Vd.4S, Vn.4S, Vm.4S: all ones where n > m
#define BIT_16B(d, n, m) WORD $(0x6ea01c00 | (m)<<16 | (n)<<5 | (d))  // BIT Vd.16B, Vn.16B, Vm.16B: d = m ? n : d, bitwise
#define BIF_16B(d, n, m) WORD $(0x6ee01c00 | (m)<<16 | (n)<<5 | (d))  // BIF Vd.16B, Vn.16B, Vm.16B: d = m ? d : n, bitwise
#define FDIV_4S(d, n, m) WORD $(0x6e20fc00 | (m)<<16 | (n)<<5 | (d))  // FDIV Vd.4S, Vn.4S, Vm.4S
#define FCMEQ_4S(d, n, m) WORD $(0x4e20e400 | (m)<<16 | (n)<<5 | (d)) // FCMEQ Vd.4S, Vn.4S, Vm.4S: all ones where n == m
#define ADD_4S(d, n, m) WORD $(0x4ea08400 | (m)<<16 | (n)<<5 | (d))   // ADD Vd.4S, Vn.4S, Vm.4S (integer)
#define SUB_4S(d, n, m) WORD $(0x6ea08400 | (m)<<16 | (n)<<5 | (d))   // SUB Vd.4S, Vn.4S, Vm.4S (integer)
#define AND_16B(d, n, m) WORD $(0x4e201c00 | (m)<<16 | (n)<<5 | (d))  // AND Vd.16B, Vn.16B, Vm.16B
#define ORR_16B(d, n, m) WORD $(0x4ea01c00 | (m)<<16 | (n)<<5 | (d))  // ORR Vd.16B, Vn.16B, Vm.16B
#define SSHR_4S(d, n, s) WORD $(0x4f000400 | (64-(s))<<16 | (n)<<5 | (d)) // SSHR Vd.4S, Vn.4S, #s (1..32)
#define SHL_4S(d, n, s) WORD $(0x4f005400 | (32+(s))<<16 | (n)<<5 | (d))  // SHL Vd.4S, Vn.4S, #s (0..31)
