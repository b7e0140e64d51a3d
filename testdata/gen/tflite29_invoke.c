// tflite29_invoke MODEL IN.raw N RESET_AT
//
// Like testdata/gen/tflite29_run.c, but Invokes the model N times on the
// same inputs (IN.raw: the inputs' bytes concatenated), calling
// TfLiteInterpreterResetVariableTensors before Invoke number RESET_AT
// (counting from 0; -1: never), and prints to stdout, per Invoke, one JSON
// line: the outputs' shapes and bytes (hex). For state that lives across
// Invokes (resource variables, CALL_ONCE, hash tables). A STRING input's
// bytes are its string buffer preceded by its size (uint32,
// little-endian). Exit status 3: AllocateTensors failed; 4: an Invoke
// failed. Build:
//   gcc -O2 -o tflite29_invoke tflite29_invoke.c -I$T/include -L$T/lib
//       -ltensorflowlite_c -Wl,-rpath,$T/lib
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensorflow/lite/c/c_api.h"
// From c_api_experimental.h, which the installed headers leave out; the
// library exports it.
TfLiteStatus TfLiteInterpreterResetVariableTensors(TfLiteInterpreter* interpreter);
// From common.h's full version (the installed header leaves it out); the
// library exports it. Sizes a STRING input, which TFLite sizes by its
// contents.
void TfLiteTensorRealloc(size_t num_bytes, TfLiteTensor* tensor);
int main(int argc, char** argv) {
  if (argc < 5) return 2;
  int n = atoi(argv[3]), reset_at = atoi(argv[4]);
  TfLiteModel* m = TfLiteModelCreateFromFile(argv[1]);
  if (!m) { fprintf(stderr, "load failed\n"); return 1; }
  TfLiteInterpreterOptions* o = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetNumThreads(o, 1);
  TfLiteInterpreter* it = TfLiteInterpreterCreate(m, o);
  if (!it) { fprintf(stderr, "create failed\n"); return 1; }
  if (TfLiteInterpreterAllocateTensors(it) != kTfLiteOk) { fprintf(stderr, "alloc failed\n"); return 3; }
  FILE* f = fopen(argv[2], "rb");
  if (!f) { fprintf(stderr, "no input file\n"); return 1; }
  for (int i = 0; i < TfLiteInterpreterGetInputTensorCount(it); i++) {
    TfLiteTensor* t = TfLiteInterpreterGetInputTensor(it, i);
    size_t sz = TfLiteTensorByteSize(t);
    if (TfLiteTensorType(t) == kTfLiteString) {
      // A STRING input's buffer comes with its size (uint32, little-endian)
      // before it, as for tflite29_run.
      unsigned char len[4];
      if (fread(len, 1, 4, f) != 4) { fprintf(stderr, "short input\n"); return 1; }
      sz = len[0] | len[1] << 8 | len[2] << 16 | (size_t)len[3] << 24;
      TfLiteTensorRealloc(sz, t);
    }
    void* buf = malloc(sz + 1);
    if (fread(buf, 1, sz, f) != sz) { fprintf(stderr, "short input\n"); return 1; }
    if (sz) memcpy(TfLiteTensorData(t), buf, sz);
    free(buf);
  }
  fclose(f);
  for (int k = 0; k < n; k++) {
    if (k == reset_at && TfLiteInterpreterResetVariableTensors(it) != kTfLiteOk) { fprintf(stderr, "reset failed\n"); return 4; }
    if (TfLiteInterpreterInvoke(it) != kTfLiteOk) { fprintf(stderr, "invoke failed\n"); return 4; }
    printf("[");
    for (int i = 0; i < TfLiteInterpreterGetOutputTensorCount(it); i++) {
      const TfLiteTensor* t = TfLiteInterpreterGetOutputTensor(it, i);
      printf("%s{\"shape\": [", i ? "," : "");
      for (int d = 0; d < TfLiteTensorNumDims(t); d++) printf("%s%d", d ? "," : "", TfLiteTensorDim(t, d));
      printf("], \"hex\": \"");
      const unsigned char* p = TfLiteTensorData(t);
      for (size_t b = 0; b < TfLiteTensorByteSize(t); b++) printf("%02x", p[b]);
      printf("\"}");
    }
    printf("]\n");
  }
  TfLiteInterpreterDelete(it);
  TfLiteInterpreterOptionsDelete(o);
  TfLiteModelDelete(m);
  return 0;
}
