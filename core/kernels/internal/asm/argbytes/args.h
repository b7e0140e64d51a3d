// Offsets of args, which argbytes_amd64.s and argbytes_arm64.s read
// (checked by TestAsmLayout).
#define AB_SRC 0
#define AB_N 8
#define AB_SIZE 16
#define AB_MASK 24
#define AB_FILL 32
#define AB_MODE 40
#define AB_DST 48
