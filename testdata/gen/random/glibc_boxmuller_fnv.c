// glibc_boxmuller_fnv: the FNV-1a 64-bit hash that TestBoxMullerMathIsGlibcs
// (core/kernels/random) expects. For every 23-bit k, in order, it hashes
// the little-endian bits of logf(max(u, 1e-7f)), then of the sine and the
// cosine of (float)(2*pi*u) by sincosf, u = k*2^-23: every argument that
// TFLite 2.9's Box-Muller transform (tensorflow/core/lib/random/
// random_distributions_utils.h, BoxMullerFloat) gives those functions.
// Build and run with the C library TFLite runs on (glibc 2.36, x86-64 with
// FMA, gave 0xc33e95558873741e):
//   gcc -O2 -o glibc_boxmuller_fnv glibc_boxmuller_fnv.c -lm && ./glibc_boxmuller_fnv
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t hash = 0xcbf29ce484222325ULL;

static void add(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  for (int i = 0; i < 4; i++) {
    hash ^= (u >> (8 * i)) & 0xff;
    hash *= 0x100000001b3ULL;
  }
}

int main(void) {
  for (uint32_t k = 0; k < (1u << 23); k++) {
    float u = (float)k * 0x1p-23f;
    float s, c;
    add(logf(u < 1e-7f ? 1e-7f : u));
    sincosf((float)(2.0 * M_PI * (double)u), &s, &c);
    add(s);
    add(c);
  }
  printf("%#018llx\n", (unsigned long long)hash);
  return 0;
}
