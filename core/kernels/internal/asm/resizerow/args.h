// Offsets of Args (checked by TestAsmLayout).
#define RA_TOP 0
#define RA_BOT 8
#define RA_X0 16
#define RA_X1 24
#define RA_OMX 32
#define RA_DX 40
#define RA_WY 48
#define RA_C 56
#define RA_FULL 64
#define RA_TAIL 72
#define RA_N 80
#define RA_DST 88
// ArgsF32 only:
#define RA_FULL8 104
