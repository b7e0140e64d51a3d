// tflite29_run MODEL IN.raw OUT.raw META.json
//
// Runs a model once with TensorFlow Lite 2.9's builtin kernels (1 thread, no
// delegate), feeding IN.raw (the non-constant inputs' bytes concatenated)
// and writing the outputs' bytes to OUT.raw and their shapes, taken after
// Invoke so dynamic outputs are right, to META.json. Exit status 3:
// AllocateTensors (Prepare) failed; 4: Invoke failed; the reason goes to
// stderr. A STRING input's bytes in IN.raw are its string buffer preceded
// by the buffer's size as a little-endian uint32. Used by every *_tflite29_gen.py (through tflite29.py); build it
// against the library that /work/shared/tools/tflite-ref/setup.sh installs
// in $T:
//   gcc -O2 -o tflite29_run tflite29_run.c -I$T/include -L$T/lib
//       -ltensorflowlite_c -Wl,-rpath,$T/lib
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tensorflow/lite/c/c_api.h"
// From common.h, which c_api.h does not include; the library exports it.
void TfLiteTensorRealloc(size_t num_bytes, TfLiteTensor* tensor);
int main(int argc, char** argv) {
  if (argc < 5) return 2;
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
    size_t n = TfLiteTensorByteSize(t);
    if (TfLiteTensorType(t) == kTfLiteString) {
      // A STRING input's buffer comes with its size (uint32, little-endian)
      // before it; TFLite sizes string tensors by their contents.
      unsigned char len[4];
      if (fread(len, 1, 4, f) != 4) { fprintf(stderr, "short input\n"); return 1; }
      n = len[0] | len[1] << 8 | len[2] << 16 | (size_t)len[3] << 24;
      TfLiteTensorRealloc(n, t);
    }
    void* buf = malloc(n + 1);
    if (fread(buf, 1, n, f) != n) { fprintf(stderr, "short input\n"); return 1; }
    if (n) memcpy(TfLiteTensorData(t), buf, n);
    free(buf);
  }
  fclose(f);
  if (TfLiteInterpreterInvoke(it) != kTfLiteOk) { fprintf(stderr, "invoke failed\n"); return 4; }
  FILE* out = fopen(argv[3], "wb");
  FILE* meta = fopen(argv[4], "w");
  fprintf(meta, "[");
  for (int i = 0; i < TfLiteInterpreterGetOutputTensorCount(it); i++) {
    const TfLiteTensor* t = TfLiteInterpreterGetOutputTensor(it, i);
    fwrite(TfLiteTensorData(t), 1, TfLiteTensorByteSize(t), out);
    fprintf(meta, "%s{\"bytes\": %zu, \"shape\": [", i ? "," : "", TfLiteTensorByteSize(t));
    for (int d = 0; d < TfLiteTensorNumDims(t); d++) fprintf(meta, "%s%d", d ? "," : "", TfLiteTensorDim(t, d));
    fprintf(meta, "]}");
  }
  fprintf(meta, "]\n");
  fclose(out); fclose(meta);
  TfLiteInterpreterDelete(it);
  TfLiteInterpreterOptionsDelete(o);
  TfLiteModelDelete(m);
  return 0;
}
