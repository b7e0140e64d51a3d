"""transpose_conv_bias_reference.py: a TensorFlow Lite 2.9 reference for a
model that carries MediaPipe's Convolution2DTransposeBias custom op, which
TFLite's own library cannot run.

    python3 transpose_conv_bias_reference.py SCHEMA.fbs RUNNER MODEL.tflite IN.raw WORKDIR OUT.raw

It rewrites every Convolution2DTransposeBias node of MODEL into TFLite's
builtin TRANSPOSE_CONV version 3 (output shape, weights, input, bias: the
same OHWI weights and per-channel bias), which computes the same values
where MediaPipe's padding and TFLite's agree, then runs the rewritten model
once through the TFLite 2.9 runner (tflite29_run.c) on IN.raw and writes
its outputs to OUT.raw. The rest of the model runs on TFLite 2.9's own
builtin kernels, so OUT.raw is a whole-model reference for delego's run of
the original model (integration/selfie_segmentation_test.go).

MediaPipe (transpose_conv_bias.cc) pads a SAME node by
pad = max(0, filter - (in - 1) % stride - 1) and cuts pad/2 off the start of
the full transposed convolution; TFLite 2.9 derives its padding from the
output shape. The rewrite is made only where MediaPipe's pad is 0 (the
selfie segmentation models: 2x2 filter, stride 2), where both take the
full result as it is; elsewhere the script stops with an error.
"""
import json, os, struct, subprocess, sys


def out_size(padding, size, filt, stride):
    pad = max(0, filt - (size - 1) % stride - 1) if padding == 1 else 0
    return stride * (size - 1) + filt - pad, pad


def rewrite(m):
    codes = m["operator_codes"]
    custom = [i for i, c in enumerate(codes) if c.get("custom_code") == "Convolution2DTransposeBias"]
    codes.append({"deprecated_builtin_code": 67, "builtin_code": "TRANSPOSE_CONV", "version": 3})
    tconv = len(codes) - 1
    n = 0
    for sg in m["subgraphs"]:
        tensors = sg["tensors"]
        for op in sg.get("operators", []):
            if op.get("opcode_index", 0) not in custom:
                continue
            padding, stride_w, stride_h = struct.unpack("<3i", bytes(op["custom_options"][:12]))
            inp, weights, bias = op["inputs"]
            ishape, wshape = tensors[inp]["shape"], tensors[weights]["shape"]
            oh, ph = out_size(padding, ishape[1], wshape[1], stride_h)
            ow, pw = out_size(padding, ishape[2], wshape[2], stride_w)
            if ph or pw:
                sys.exit("a Convolution2DTransposeBias node pads (%d, %d): TFLite's TRANSPOSE_CONV does not pad as MediaPipe does there" % (ph, pw))
            m["buffers"].append({"data": list(struct.pack("<4i", ishape[0], oh, ow, wshape[0]))})
            tensors.append({"shape": [4], "type": "INT32", "buffer": len(m["buffers"]) - 1, "name": "tconv_output_shape_%d" % n})
            op.update({"opcode_index": tconv, "inputs": [len(tensors) - 1, weights, inp, bias],
                       "builtin_options_type": "TransposeConvOptions",
                       "builtin_options": {"padding": "VALID", "stride_w": stride_w, "stride_h": stride_h}})
            op.pop("custom_options", None)
            op.pop("custom_options_format", None)
            n += 1
    if n == 0:
        sys.exit("the model has no Convolution2DTransposeBias node")
    return n


def main():
    schema, runner, model, inraw, work, outraw = sys.argv[1:7]
    os.makedirs(work, exist_ok=True)
    subprocess.run(["flatc", "-t", "--strict-json", "--defaults-json", "--raw-binary", "-o", work, schema, "--", model],
                   check=True, capture_output=True)
    base = os.path.join(work, os.path.splitext(os.path.basename(model))[0])
    m = json.load(open(base + ".json"))
    n = rewrite(m)
    json.dump(m, open(base + ".json", "w"))
    subprocess.run(["flatc", "-b", "-o", work, schema, base + ".json"], check=True, capture_output=True)
    p = subprocess.run([runner, base + ".tflite", inraw, outraw, base + ".meta.json"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("TFLite 2.9 failed on the rewritten model (exit %d): %s" % (p.returncode, p.stderr.strip()))
    print("rewrote %d node(s); TFLite 2.9 outputs %s" % (n, open(base + ".meta.json").read().strip()))


if __name__ == "__main__":
    main()
