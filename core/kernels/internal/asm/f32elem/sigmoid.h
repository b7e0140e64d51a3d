// The bits of the constants of sigmoid.go (checked by
// TestSigmoidConstants), and their offsets in the amd64 table sigm<>,
// which holds each one 16 times (64 bytes).
#define SC_SIGN 0x80000000
#define SC_EXPMIN 0xc2d00000
#define SC_LOG2E 0x3fb8aa3b
#define SC_MAGIC 0x4b400000
#define SC_LN2HI 0x3f318000
#define SC_LN2LO 0xb95e8083
#define SC_EXP0 0x39506967
#define SC_EXP1 0x3ab743ce
#define SC_EXP2 0x3c088908
#define SC_EXP3 0x3d2aa9c1
#define SC_EXP4 0x3e2aaaaa
#define SC_EXP5 0x3f000000
#define SC_ONE 0x3f800000
#define SC_BIAS 127
#define SC_NSMALL 0xbf200000 // -tanhSmall
#define SC_TANH0 0xbbbaf0ea
#define SC_TANH1 0x3ca9134e
#define SC_TANH2 0xbd5c1e2d
#define SC_TANH3 0x3e088393
#define SC_TANH4 0xbeaaaa99

#define SO_SIGN 0
#define SO_EXPMIN 64
#define SO_LOG2E 128
#define SO_MAGIC 192
#define SO_LN2HI 256
#define SO_LN2LO 320
#define SO_EXP0 384
#define SO_EXP1 448
#define SO_EXP2 512
#define SO_EXP3 576
#define SO_EXP4 640
#define SO_EXP5 704
#define SO_ONE 768
#define SO_BIAS 832
#define SO_NSMALL 896
#define SO_TANH0 960
#define SO_TANH1 1024
#define SO_TANH2 1088
#define SO_TANH3 1152
#define SO_TANH4 1216
#define SO_SIZE 1280
