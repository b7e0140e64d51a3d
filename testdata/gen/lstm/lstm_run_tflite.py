#!/usr/bin/env python3
"""lstm_run_tflite.py MODEL INPUT_RAW OUT_PREFIX [invokes]: run a model with the
TFLite C library named by $TFLITE_C_LIB (1 thread, no delegate) and write the
outputs of each invoke to OUT_PREFIX.N.raw. Exit status 3: AllocateTensors
(Prepare) failed; 4: Invoke failed; 1: the model did not load."""
import ctypes, sys
import os
lib = ctypes.CDLL(os.environ.get('TFLITE_C_LIB', 'libtensorflowlite_c.so'))
vp = ctypes.c_void_p
lib.TfLiteVersion.restype = ctypes.c_char_p
lib.TfLiteModelCreateFromFile.restype = vp
lib.TfLiteModelCreateFromFile.argtypes = [ctypes.c_char_p]
lib.TfLiteInterpreterOptionsCreate.restype = vp
lib.TfLiteInterpreterOptionsSetNumThreads.argtypes = [vp, ctypes.c_int]
lib.TfLiteInterpreterCreate.restype = vp
lib.TfLiteInterpreterCreate.argtypes = [vp, vp]
lib.TfLiteInterpreterAllocateTensors.argtypes = [vp]
lib.TfLiteInterpreterInvoke.argtypes = [vp]
lib.TfLiteInterpreterGetInputTensorCount.argtypes = [vp]
lib.TfLiteInterpreterGetOutputTensorCount.argtypes = [vp]
lib.TfLiteInterpreterGetInputTensor.restype = vp
lib.TfLiteInterpreterGetInputTensor.argtypes = [vp, ctypes.c_int]
lib.TfLiteInterpreterGetOutputTensor.restype = vp
lib.TfLiteInterpreterGetOutputTensor.argtypes = [vp, ctypes.c_int]
lib.TfLiteTensorByteSize.restype = ctypes.c_size_t
lib.TfLiteTensorByteSize.argtypes = [vp]
lib.TfLiteTensorCopyFromBuffer.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t]
lib.TfLiteTensorCopyToBuffer.argtypes = [vp, ctypes.c_char_p, ctypes.c_size_t]
model_path, in_path, out_prefix = sys.argv[1], sys.argv[2], sys.argv[3]
invokes = int(sys.argv[4]) if len(sys.argv) > 4 else 1
m = lib.TfLiteModelCreateFromFile(model_path.encode())
assert m, 'model'
o = lib.TfLiteInterpreterOptionsCreate()
lib.TfLiteInterpreterOptionsSetNumThreads(o, 1)
it = lib.TfLiteInterpreterCreate(m, o)
if not it:
    sys.exit('interpreter not created')
st = lib.TfLiteInterpreterAllocateTensors(it)
if st != 0:
    print('alloc failed', file=sys.stderr)
    sys.exit(3)
data = open(in_path, 'rb').read()
off = 0
for i in range(lib.TfLiteInterpreterGetInputTensorCount(it)):
    t = lib.TfLiteInterpreterGetInputTensor(it, i)
    n = lib.TfLiteTensorByteSize(t)
    assert lib.TfLiteTensorCopyFromBuffer(t, data[off:off+n], n) == 0
    off += n
assert off == len(data), (off, len(data))
for k in range(invokes):
    st = lib.TfLiteInterpreterInvoke(it)
    if st != 0:
        print('invoke failed', file=sys.stderr)
        sys.exit(4)
    out = b''
    for i in range(lib.TfLiteInterpreterGetOutputTensorCount(it)):
        t = lib.TfLiteInterpreterGetOutputTensor(it, i)
        n = lib.TfLiteTensorByteSize(t)
        buf = ctypes.create_string_buffer(n)
        lib.TfLiteTensorCopyToBuffer(t, buf, n)
        out += buf.raw
    open('%s.%d.raw' % (out_prefix, k + 1), 'wb').write(out)
print('ok', lib.TfLiteVersion().decode())
