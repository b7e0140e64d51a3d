#!/usr/bin/env python3
"""conv3d_tflite29_gen.py: regenerate conv3d_tflite29.json.gz, the outputs of
the real TensorFlow Lite 2.9 that TestConv3DAgainstTFLite29 compares CONV_3D
and CONV_3D_TRANSPOSE with.

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc with model/schema/schema.fbs) run once by the runner built from
../tflite29_run.c (see its header) on pseudo-random inputs: random shapes,
strides, dilations, paddings and every fused activation, bias present or
not, constant or not, filters constant or not, output shapes constant or
computed (dynamic outputs), empty batches, and the inputs TFLite refuses
(other types, mismatched shapes, version 2). Float values are multiples of
1/256 so that every sum is exact whatever its order. The file keeps the
model, the non-constant inputs and TFLite's outputs, or the stage at which
TFLite failed.

usage: conv3d_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CASES = []
CODES = tflite29.builtin_codes(SCHEMA)
ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1", "TANH", "SIGN_BIT"]


def tensor(typ, shape, vals, const=False):
    return dict(type=typ, shape=shape, vals=vals, const=const)


def quant(t, is_input):
    if t["type"] in ("INT8", "UINT8"):
        return {"scale": [0.25], "zero_point": [0]}
    return None


def run_case(name, op, version, inputs, out_type="FLOAT32", options=None):
    model, raw = tflite29.model(op, CODES[op], version, inputs, [dict(type=out_type)], quant,
                                "Conv3DOptions" if options is not None else None, options)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw)
    case = {"name": name, "inputs": [], "outputs": [], "options": options or {},
            "out_shape": inputs[0]["vals"] if op == "CONV_3D_TRANSPOSE" else None}
    for t in inputs:
        if t is None:
            case["inputs"].append(None)
            continue
        rec = {"type": t["type"], "shape": t["shape"], "const": t["const"]}
        if not t["const"]:  # constant data is in the model's buffers
            rec["data"] = base64.b64encode(pack(t["type"], t["vals"])).decode()
        if t["type"] in ("INT8", "UINT8"):
            rec.update(scales=[0.25], zps=[0], axis=0)
        case["inputs"].append(rec)
    if p.returncode < 0:
        case["crash"] = True
    if p.returncode != 0:
        case["error"] = tflite29.stage(p)
    else:
        for mo, data in outs:
            case["outputs"].append({"type": out_type, "shape": mo["shape"], "data": base64.b64encode(data).decode()})
    case["model"] = base64.b64encode(tfl).decode()
    CASES.append(case)
    return case


def fvals(rng, n):
    return [rng.randint(-512, 512) / 256 for _ in range(n)]


def ivals(rng, typ, n):
    lo, hi = {"INT8": (-128, 127), "UINT8": (0, 255), "INT32": (-100, 100)}[typ]
    return [rng.randint(lo, hi) for _ in range(n)]


def options(pad, s, d, act):
    return dict(padding=pad, stride_d=s[0], stride_h=s[1], stride_w=s[2], fused_activation_function=act,
                dilation_d_factor=d[0], dilation_h_factor=d[1], dilation_w_factor=d[2])


def out_size(pad, i, k, s, d):
    """TFLite's ComputeOutSize."""
    eff = (k - 1) * d + 1
    return (i + s - 1) // s if pad == "SAME" else (i + s - eff) // s


def rand_geometry(rng, transpose):
    k = [rng.choice([1, 1, 2, 3]) for _ in range(3)]
    s = [rng.choice([1, 1, 2, 3]) for _ in range(3)]
    d = [rng.choice([1, 2]) for _ in range(3)] if rng.random() < 0.35 else [1, 1, 1]
    pad = rng.choice(["SAME", "VALID"])
    sp = []
    for i in range(3):
        lo = (k[i] - 1) * d[i] + 1 if pad == "VALID" else 1
        sp.append(rng.randint(lo, lo + 4))
    return k, s, d, pad, sp


def gen_conv3d(rng, trial):
    k, s, d, pad, sp = rand_geometry(rng, False)
    b = 0 if trial % 25 == 7 else rng.randint(1, 2)
    inC, outC = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 3, 5, 8, 9])
    if d != [1, 1, 1]:
        inC = sp[0]  # see tflite29_wrong
    act = ACTS[trial % len(ACTS)]
    x = tensor("FLOAT32", [b] + sp + [inC], fvals(rng, b * nelem(sp) * inC))
    f = tensor("FLOAT32", k + [inC, outC], fvals(rng, nelem(k) * inC * outC), const=trial % 5 != 3)
    ins = [x, f]
    bias = trial % 4
    if bias != 0:  # 0: absent, 1: left out as -1, 2: constant, 3: computed
        ins.append(None if bias == 1 else tensor("FLOAT32", [outC], fvals(rng, outC), const=bias == 2))
    run_case("c3_%d" % trial, "CONV_3D", 1, ins, options=options(pad, s, d, act))


def gen_transpose(rng, trial):
    k, s, d, pad, sp = rand_geometry(rng, True)
    b = 0 if trial % 25 == 7 else rng.randint(1, 2)
    inC, outC = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 3, 5, 8])
    bias = trial % 4  # 0: absent, 1: left out as -1, 2: constant, 3: computed
    if bias >= 2 and trial % 8 < 6:
        # TFLite 2.9 wants one bias per input channel and reads one per
        # output channel (see tflite29_wrong); else both refuse.
        outC = rng.choice([o for o in (1, 2, 3, 5, 8) if o <= inC])
    act = ACTS[trial % len(ACTS)]
    isp = [out_size(pad, sp[i], k[i], s[i], d[i]) for i in range(3)]
    shape = tensor("INT32", [5], [b] + sp + [outC], const=trial % 3 != 1)
    f = tensor("FLOAT32", k + [outC, inC], fvals(rng, nelem(k) * inC * outC), const=trial % 5 != 3)
    x = tensor("FLOAT32", [b] + isp + [inC], fvals(rng, b * nelem(isp) * inC))
    ins = [shape, f, x]
    if bias != 0:
        ins.append(None if bias == 1 else tensor("FLOAT32", [inC], fvals(rng, inC), const=bias == 2))
    run_case("t3_%d" % trial, "CONV_3D_TRANSPOSE", 1, ins, options=options(pad, s, d, act))


def gen_edges(rng):
    """What TFLite refuses or computes at the edges."""
    x = tensor("FLOAT32", [1, 3, 3, 3, 2], fvals(rng, 54))
    f = tensor("FLOAT32", [2, 2, 2, 2, 3], fvals(rng, 48), const=True)
    same = options("SAME", [1, 1, 1], [1, 1, 1], "NONE")
    for v in (1, 2):
        run_case("c3_version%d" % v, "CONV_3D", v, [x, f], options=same)
    run_case("c3_no_options", "CONV_3D", 1, [x, f])
    run_case("c3_stride0", "CONV_3D", 1, [x, f], options=options("SAME", [0, 1, 1], [1, 1, 1], "NONE"))
    # A filter laid out OIDHW-like (channels first) does not match DHWIO.
    run_case("c3_filter_dhwoi", "CONV_3D", 1, [x, tensor("FLOAT32", [2, 2, 2, 3, 2], fvals(rng, 48), const=True)], options=same)
    run_case("c3_dilation0", "CONV_3D", 1, [x, f], options=options("VALID", [1, 2, 1], [0, 1, 2], "NONE"))
    run_case("c3_stride_neg", "CONV_3D", 1, [x, f], options=options("SAME", [1, -1, 1], [1, 1, 1], "NONE"))
    run_case("c3_filter_4d", "CONV_3D", 1, [x, tensor("FLOAT32", [2, 2, 2, 3], fvals(rng, 24), const=True)], options=same)
    run_case("c3_input_4d", "CONV_3D", 1, [tensor("FLOAT32", [3, 3, 3, 2], fvals(rng, 54)), f], options=same)
    run_case("c3_bias_size", "CONV_3D", 1, [x, f, tensor("FLOAT32", [2], fvals(rng, 2), const=True)], options=same)
    run_case("c3_bias_int32", "CONV_3D", 1, [x, f, tensor("INT32", [3], [1, 2, 3], const=True)], options=same)
    run_case("c3_valid_too_big", "CONV_3D", 1, [x, tensor("FLOAT32", [4, 2, 2, 2, 3], fvals(rng, 96), const=True)],
             options=options("VALID", [1, 1, 1], [1, 1, 1], "NONE"))
    for typ in ("INT8", "UINT8"):
        run_case("c3_%s" % typ, "CONV_3D", 1, [tensor(typ, [1, 3, 3, 3, 2], ivals(rng, typ, 54)),
                                                tensor(typ, [2, 2, 2, 2, 3], ivals(rng, typ, 48), const=True)],
                 out_type=typ, options=same)
    run_case("c3_hybrid", "CONV_3D", 1, [x, tensor("INT8", [2, 2, 2, 2, 3], ivals(rng, "INT8", 48), const=True)], options=same)
    # A larger layer: many GEMM tiles and row blocks.
    x2 = tensor("FLOAT32", [1, 6, 10, 10, 8], fvals(rng, 4800))
    f2 = tensor("FLOAT32", [3, 3, 3, 8, 16], fvals(rng, 3456), const=True)
    run_case("c3_big", "CONV_3D", 1, [x2, f2, tensor("FLOAT32", [16], fvals(rng, 16), const=True)],
             options=options("SAME", [1, 1, 1], [1, 1, 1], "RELU"))

    shp = tensor("INT32", [5], [1, 4, 4, 4, 3], const=True)
    tf = tensor("FLOAT32", [2, 2, 2, 3, 2], fvals(rng, 48), const=True)
    tx = tensor("FLOAT32", [1, 2, 2, 2, 2], fvals(rng, 16))
    s2 = options("SAME", [2, 2, 2], [1, 1, 1], "NONE")
    for v in (1, 2):
        run_case("t3_version%d" % v, "CONV_3D_TRANSPOSE", v, [shp, tf, tx], options=s2)
    run_case("t3_no_options", "CONV_3D_TRANSPOSE", 1, [shp, tf, tx])
    run_case("t3_shape_mismatch", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [5], [1, 6, 4, 4, 3], const=True), tf, tx], options=s2)
    run_case("t3_shape_mismatch_dyn", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [5], [1, 6, 4, 4, 3]), tf, tx], options=s2)
    run_case("t3_shape_batch", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [5], [2, 4, 4, 4, 3], const=True), tf, tx], options=s2)
    run_case("t3_shape_4", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [4], [1, 4, 4, 4], const=True), tf, tx], options=s2)
    run_case("t3_shape_int64", "CONV_3D_TRANSPOSE", 1, [tensor("INT64", [5], [1, 4, 4, 4, 3], const=True), tf, tx], options=s2)
    run_case("t3_channels_multiple", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [5], [1, 4, 4, 4, 6], const=True), tf, tx], options=s2)
    run_case("t3_channels_other", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [5], [1, 4, 4, 4, 4], const=True), tf, tx], options=s2)
    run_case("t3_filter_inC", "CONV_3D_TRANSPOSE", 1, [shp, tensor("FLOAT32", [2, 2, 2, 2, 3], fvals(rng, 48), const=True), tx], options=s2)
    run_case("t3_bias_per_output", "CONV_3D_TRANSPOSE", 1, [shp, tf, tx, tensor("FLOAT32", [3], [1, 2, 3], const=True)], options=s2)
    run_case("t3_bias_short", "CONV_3D_TRANSPOSE", 1, [shp, tf, tx, tensor("FLOAT32", [2], [1, 2], const=True)], options=s2)
    run_case("t3_dilation", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [5], [1, 5, 6, 4, 3]), tf,
                                                     tensor("FLOAT32", [1, 3, 3, 2, 2], fvals(rng, 36)), None],
             options=options("SAME", [2, 2, 2], [2, 1, 2], "RELU_N1_TO_1"))
    run_case("t3_int8", "CONV_3D_TRANSPOSE", 1, [shp, tensor("INT8", [2, 2, 2, 3, 2], ivals(rng, "INT8", 48), const=True),
                                                  tensor("INT8", [1, 2, 2, 2, 2], ivals(rng, "INT8", 16))], out_type="INT8", options=s2)
    x3 = tensor("FLOAT32", [1, 4, 6, 6, 8], fvals(rng, 1152))
    f3 = tensor("FLOAT32", [3, 3, 3, 8, 8], fvals(rng, 1728), const=True)
    run_case("t3_big", "CONV_3D_TRANSPOSE", 1, [tensor("INT32", [5], [1, 8, 12, 12, 8], const=True), f3, x3,
                                                tensor("FLOAT32", [8], fvals(rng, 8), const=True)],
             options=options("SAME", [2, 2, 2], [1, 1, 1], "RELU6"))


def tflite29_wrong(case):
    """Whether TFLite 2.9 gives no oracle for the case: where it computes
    something else than the convolution, or reads past a tensor's end, delego
    computes the convolution (TFLite's reference kernels, TensorFlow's
    Conv3D and Conv3DBackpropInputV2) or refuses. Each is left out of the
    file:
    - a dilated CONV_3D whose input depth differs from its channels: 2.9's
      DilatedIm2col3D copies and zeroes depth values per pixel instead of
      channels (b/512611805, fixed after 2.9);
    - a CONV_3D_TRANSPOSE without dilation (TFLite's optimized kernel) whose
      SAME padding in depth leaves col2im fewer planes than the input has:
      2.9's col2im takes the depth padding's offset alone as the trailing
      depth padding, so it drops the input's last planes;
    - a CONV_3D_TRANSPOSE whose bias (2.9 wants one value per input
      channel, and adds value c to output channel c) is shorter than the
      output channels (TFLite reads past it, or crashes; delego refuses), or
      that is dilated with input and output channels that differ (2.9's
      reference kernel then adds the bias by flat output index);
    - a CONV_3D_TRANSPOSE output with a multiple of the filter's output
      channels: TFLite reads past the filter, delego refuses;
    - a run that crashed TFLite."""
    if case.get("crash"):
        return True
    if "error" in case:
        return False
    ins = case["inputs"]
    if case["name"].startswith("c3_"):
        x, f = ins[0]["shape"], ins[1]["shape"]
        o = case["options"]
        return tuple(o.get(k, 1) for k in ("dilation_d_factor", "dilation_h_factor", "dilation_w_factor")) != (1, 1, 1) and x[1] != x[4]
    shape, f, x = case["out_shape"], ins[1]["shape"], ins[2]["shape"]
    if len(shape) != 5:
        return False
    if shape[4] != f[3]:
        return True
    o = case["options"]
    dilated = tuple(o.get(k, 1) for k in ("dilation_d_factor", "dilation_h_factor", "dilation_w_factor")) != (1, 1, 1)
    if len(ins) == 4 and ins[3] is not None and (f[3] > f[4] or dilated and f[3] != f[4]):
        return True
    s, out, k, n = o.get("stride_d", 0), shape[1], f[0], x[1]
    total = max((n - 1) * s + k - out, 0)
    num = out + total // 2 + total % 2 - k  # 2.9's planes, the trailing padding the offset alone
    return not dilated and s > 0 and int(num / s) + 1 != n


def main():
    rng = random.Random(3029)
    for trial in range(90):
        gen_conv3d(rng, trial)
    for trial in range(130):
        gen_transpose(rng, trial)
    gen_edges(rng)
    kept = [c for c in CASES if not tflite29_wrong(c)]
    print(len(CASES) - len(kept), "cases left out")
    for c in kept:
        del c["options"], c["out_shape"]
    CASES[:] = kept
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps(CASES, separators=(",", ":")).encode())
    print(len(CASES), "cases,", sum(1 for c in CASES if "error" in c), "TFLite errors")


if __name__ == "__main__":
    main()
