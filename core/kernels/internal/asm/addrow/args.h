// Offsets of Args (checked by TestAsmLayout), and of the fields of each
// of its Terms: off, mul, rshift, mask, half.
#define AR_X 0
#define AR_Y 8
#define AR_Z 16
#define AR_N 24
#define AR_SIGNED 32
#define AR_LS 36
#define AR_T1 40
#define AR_T2 60
#define AR_TO 80
#define AR_NEG 100
#define AR_LO 104
#define AR_HI 108
#define T_OFF 0
#define T_MUL 4
#define T_RS 8
#define T_MASK 12
#define T_HALF 16
