// Offsets of the argument structs that the kernels' assembly reads, on
// amd64 and arm64 alike (every field is placed as on any 64-bit target);
// TestAsmLayout checks them against the Go structs.

// Offsets of TileArgs (checked by TestAsmLayout).
#define TA_A 0
#define TA_LDA 8
#define TA_ROWS 16
#define TA_K4 24
#define TA_W 32
#define TA_WSTRIDE 40
#define TA_NB 48
#define TA_TAIL 56
#define TA_ROWTERM 64
#define TA_QP 72
#define TA_OUT 80
#define TA_LDO 88
#define TA_ZP 96
#define TA_LO 104
#define TA_HI 112

// Offsets of Block (checked by TestAsmLayout) and its size.
#define QB_CST 0
#define QB_LEFT 64
#define QB_MULT 128
#define QB_ADDE 192
#define QB_ADDO 256
#define QB_SHE 320
#define QB_SHO 384
#define QB_NEGE 448
#define QB_NEGO 512
#define QB_BADDE 576
#define QB_BADDO 640
#define QB_CORR 704
#define QB_NEGR 768
#define QB_SIZE 832

// Offsets of RowArgs (checked by TestAsmLayout).
#define DA_ROWS 0
#define DA_KH 8
#define DA_KW 16
#define DA_TAPSTEP 24
#define DA_PIXSTEP 32
#define DA_NPIX 40
#define DA_NB 48
#define DA_TAIL 56
#define DA_W 64
#define DA_WSTRIDE 72
#define DA_QP 80
#define DA_OUT 88
#define DA_OUTC 96
#define DA_ZP 104
#define DA_LO 112
#define DA_HI 120
#define DA_SIGNED 128
