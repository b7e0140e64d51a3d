// tflite-ns: the median time of one TensorFlow Lite 2.9 Invoke in
// nanoseconds, for models too small for tflbench's millisecond figures
// (it prints three decimals: 0.002 ms is anything from 1.5 to 2.5 us).
// Built by scripts/tflite-ref.sh against the same library as tflbench.
//
// usage: tflite-ns MODEL THREADS XNNPACK(0/1) XNNPACK_FLAGS WARMUP ITERS
//
// Inputs are tflbench's seed:1 pattern; each Invoke is timed alone with
// CLOCK_MONOTONIC, as tflbench times them.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tensorflow/lite/c/c_api.h"

// The XNNPACK delegate's options as TF 2.9 lays them out (8 bytes: the npm
// package ships no header for them).
typedef struct {
  int32_t num_threads;
  uint32_t flags;
} TfLiteXNNPackDelegateOptions;
TfLiteXNNPackDelegateOptions TfLiteXNNPackDelegateOptionsDefault(void);
TfLiteDelegate* TfLiteXNNPackDelegateCreate(const TfLiteXNNPackDelegateOptions* options);

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: tflite-ns MODEL THREADS XNNPACK(0/1) XNNPACK_FLAGS WARMUP ITERS\n");
    return 2;
  }
  int threads = atoi(argv[2]), xnn = atoi(argv[3]), warm = atoi(argv[5]), iters = atoi(argv[6]);
  if (iters < 1) iters = 1;
  TfLiteModel* m = TfLiteModelCreateFromFile(argv[1]);
  if (!m) { fprintf(stderr, "tflite-ns: cannot load %s\n", argv[1]); return 1; }
  TfLiteInterpreterOptions* o = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetNumThreads(o, threads);
  if (xnn) {
    TfLiteXNNPackDelegateOptions xo = TfLiteXNNPackDelegateOptionsDefault();
    xo.num_threads = threads;
    xo.flags = (uint32_t)strtoul(argv[4], 0, 0);
    TfLiteInterpreterOptionsAddDelegate(o, TfLiteXNNPackDelegateCreate(&xo));
  }
  TfLiteInterpreter* it = TfLiteInterpreterCreate(m, o);
  if (!it || TfLiteInterpreterAllocateTensors(it) != kTfLiteOk) { fprintf(stderr, "tflite-ns: cannot create the interpreter\n"); return 1; }
  uint32_t s = 1;
  for (int i = 0; i < TfLiteInterpreterGetInputTensorCount(it); i++) {
    TfLiteTensor* t = TfLiteInterpreterGetInputTensor(it, i);
    size_t n = TfLiteTensorByteSize(t);
    unsigned char* p = TfLiteTensorData(t);
    if (TfLiteTensorType(t) == kTfLiteFloat32) {
      for (size_t k = 0; k < n / 4; k++) {
        s = s * 1664525u + 1013904223u;
        float v = (float)((s >> 8) / 16777216.0 * 2.0 - 1.0);
        memcpy(p + 4 * k, &v, 4);
      }
    } else {
      for (size_t k = 0; k < n; k++) { s = s * 1664525u + 1013904223u; p[k] = (unsigned char)(s >> 24); }
    }
  }
  for (int i = 0; i < warm; i++) TfLiteInterpreterInvoke(it);
  double* ts = malloc(sizeof(double) * iters);
  for (int i = 0; i < iters; i++) {
    double t0 = now_ns();
    if (TfLiteInterpreterInvoke(it) != kTfLiteOk) { fprintf(stderr, "tflite-ns: Invoke failed\n"); return 1; }
    ts[i] = now_ns() - t0;
  }
  qsort(ts, iters, sizeof(double), cmp);
  printf("median_ns=%.0f min_ns=%.0f\n", iters % 2 ? ts[iters / 2] : (ts[iters / 2 - 1] + ts[iters / 2]) / 2, ts[0]);
  return 0;
}
