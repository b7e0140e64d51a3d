// Offsets of Args (checked by TestAsmLayout) and the Op codes of
// f32elem.go.
#define AR_X 0
#define AR_Y 8
#define AR_Z 16
#define AR_N 24
#define AR_XSTEP 32
#define AR_YSTEP 40
#define AR_OP 48
#define AR_LO 52
#define AR_HI 56
#define AR_ALPHA 60
#define AR_BUF 64

#define OP_MAXMIN 0
#define OP_CLAMP 1
#define OP_LEAKY 2
#define OP_HARDSWISH 3
#define OP_ADD 4
#define OP_SUB 5
#define OP_MUL 6
#define OP_MAX 7
#define OP_MIN 8
#define OP_PRELU 9
#define OP_ADDMAXMIN 10
#define OP_SUBMAXMIN 11
#define OP_MULMAXMIN 12
#define OP_LOGISTIC 13
#define OP_TANH 14
