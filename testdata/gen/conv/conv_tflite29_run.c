// conv_tflite29_run MODEL IN.raw OUT.raw META.json
//
// Runs a one-operator model once with TensorFlow Lite 2.9's builtin kernels
// (1 thread, no delegate), feeding IN.raw (the non-constant inputs' bytes
// concatenated) and writing the outputs' bytes to OUT.raw and their shapes to
// META.json. Exit status 3: AllocateTensors (Prepare) failed; 4: Invoke
// failed. Used by conv_tflite29_gen.py; build it against the library that
// /work/shared/tools/tflite-ref/setup.sh installs in $T:
//   gcc -O2 -o conv_tflite29_run conv_tflite29_run.c -I$T/include
//       -L$T/lib -ltensorflowlite_c -Wl,-rpath,$T/lib
#include <stdio.h>
#include <stdlib.h>
#include "tensorflow/lite/c/c_api.h"

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  TfLiteModel* model = TfLiteModelCreateFromFile(argv[1]);
  if (!model) return 1;
  TfLiteInterpreterOptions* opts = TfLiteInterpreterOptionsCreate();
  TfLiteInterpreterOptionsSetNumThreads(opts, 1);
  TfLiteInterpreter* it = TfLiteInterpreterCreate(model, opts);
  if (!it) return 1;
  if (TfLiteInterpreterAllocateTensors(it) != kTfLiteOk) return 3;
  FILE* in = fopen(argv[2], "rb");
  if (!in) return 1;
  for (int i = 0; i < TfLiteInterpreterGetInputTensorCount(it); i++) {
    TfLiteTensor* t = TfLiteInterpreterGetInputTensor(it, i);
    size_t n = TfLiteTensorByteSize(t);
    void* buf = malloc(n + 1);
    if (fread(buf, 1, n, in) != n) return 1;
    TfLiteTensorCopyFromBuffer(t, buf, n);
    free(buf);
  }
  fclose(in);
  if (TfLiteInterpreterInvoke(it) != kTfLiteOk) return 4;
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
  fclose(out);
  fclose(meta);
  TfLiteInterpreterDelete(it);
  TfLiteInterpreterOptionsDelete(opts);
  TfLiteModelDelete(model);
  return 0;
}
