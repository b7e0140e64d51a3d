#!/usr/bin/env python3
"""conv_tflite29_gen.py: regenerate conv_tflite29.json.gz, the outputs of the
real TensorFlow Lite 2.9 that TestConvAgainstTFLite29 compares CONV_2D,
DEPTHWISE_CONV_2D and FULLY_CONNECTED with.

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc with core/schema/schema.fbs) run once by the runner built from
../tflite29_run.c (see its header) on pseudo-random inputs. The file keeps
the model, every input (constant ones too) and TFLite's outputs, or the
stage at which TFLite failed.

usage: conv_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, math, os, random, struct, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CASES = []
CODES = tflite29.builtin_codes(SCHEMA)
RANGE = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767)}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def tensor(typ, shape, vals, const=False, scale=None, zp=0, axis=0):
    """scale: None, a number, or a list (per-channel along axis)."""
    t = dict(type=typ, shape=shape, vals=vals, const=const, axis=axis)
    if scale is not None:
        t["scales"] = [f32(s) for s in (scale if isinstance(scale, list) else [scale])]
        zps = zp if isinstance(zp, list) else [zp] * len(t["scales"])
        t["zps"] = zps
    return t


def quant(t, is_input):
    if "scales" not in t:
        return None
    q = {"scale": t["scales"], "zero_point": t["zps"]}
    if is_input:
        q["quantized_dimension"] = t["axis"]
    return q


def run_case(name, op, version, inputs, outputs, options_type, options):
    model, raw = tflite29.model(op, CODES[op], version, inputs, outputs, quant, options_type, options)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw)
    case = {"name": name, "inputs": [], "outputs": []}
    for t in inputs:
        if t is None:
            case["inputs"].append(None)
            continue
        rec = {"type": t["type"], "shape": t["shape"], "const": t["const"]}
        if not t["const"]:  # constant data is in the model's buffers
            rec["data"] = base64.b64encode(pack(t["type"], t["vals"])).decode()
        if "scales" in t:
            rec.update(scales=t["scales"], zps=t["zps"], axis=t["axis"])
        case["inputs"].append(rec)
    if p.returncode != 0:
        case["error"] = tflite29.stage(p)
    else:
        for o, (mo, data) in zip(outputs, outs):
            rec = {"type": o["type"], "shape": mo["shape"], "data": base64.b64encode(data).decode()}
            if "scales" in o:
                rec.update(scales=o["scales"], zps=o["zps"])
            case["outputs"].append(rec)
    case["model"] = base64.b64encode(tfl).decode()
    CASES.append(case)
    return case


def rvals(rng, typ, n, lo=None, hi=None):
    if typ == "FLOAT32":
        # Multiples of 1/256 compress well and keep float sums meaningful.
        return [rng.randint(-512, 512) / 256 for _ in range(n)]
    a, b = RANGE.get(typ, (-1000, 1000))
    return [rng.randint(a if lo is None else lo, b if hi is None else hi) for _ in range(n)]


ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def quant_setup(rng, typ, K, ties):
    """Input, filter and output scales and zero points for a quantized op with
    depth K. ties: power-of-two scales whose ratio makes exact halves common."""
    if ties:
        in_s, f_s = 0.5, 0.25
        out_s = in_s * f_s * rng.choice([2, 4, 8, 16, 32]) * max(1, int(math.sqrt(K)))
    else:
        in_s, f_s = rng.uniform(0.005, 0.05), rng.uniform(0.002, 0.02)
        out_s = in_s * f_s * math.sqrt(K) * rng.uniform(20, 400)
        if rng.random() < 0.15:
            out_s /= 30  # saturates
    if typ == "UINT8":
        return in_s, rng.randint(90, 160), f_s, rng.randint(90, 160), out_s, rng.randint(60, 190)
    if typ == "INT8":
        return in_s, rng.randint(-40, 40), f_s, 0, out_s, rng.randint(-60, 60)
    return in_s / 100, 0, f_s, 0, out_s / 100, 0  # INT16


def gen_conv(rng, kind, depthwise, trial):
    b = rng.randint(1, 2)
    h, w = rng.randint(1, 9), rng.randint(1, 9)
    kh, kw = rng.choice([1, 1, 2, 3, 3, 5]), rng.choice([1, 2, 3, 3, 5])
    sh, sw = rng.choice([1, 1, 2, 3]), rng.choice([1, 1, 2, 3])
    dh, dw = (rng.choice([1, 2]), rng.choice([1, 2])) if rng.random() < 0.3 else (1, 1)
    pad = rng.choice(["SAME", "VALID"])
    if pad == "VALID":
        h, w = max(h, (kh - 1) * dh + 1), max(w, (kw - 1) * dw + 1)
    act = rng.choice(ACTS)
    groups, mult = 1, 1
    if depthwise:
        inC = rng.choice([1, 2, 3, 8, 17])
        mult = rng.choice([1, 1, 1, 2, 3])
        outC = inC * mult
        fshape = [1, kh, kw, outC]
        K = kh * kw
    else:
        inC = rng.choice([1, 3, 4, 8, 17])
        outC = rng.choice([1, 2, 5, 8, 13, 24])
        if kind in ("FLOAT32", "UINT8", "INT8pc") and rng.random() < 0.15:
            groups = rng.choice([2, 3])
            inC = rng.choice([1, 2, 4]) * groups
            outC = rng.choice([1, 2, 3]) * groups
        fshape = [outC, kh, kw, inC // groups]
        K = kh * kw * inC // groups
    ishape = [b, h, w, inC]
    ties = kind in ("UINT8", "INT8pc", "INT8pt") and trial % 3 == 0
    qaxis = 3 if depthwise else 0
    no_bias = rng.random() < 0.1
    if kind == "FLOAT32":
        inp = tensor("FLOAT32", ishape, rvals(rng, "FLOAT32", nelem(ishape)))
        flt = tensor("FLOAT32", fshape, rvals(rng, "FLOAT32", nelem(fshape)), const=True)
        bias = tensor("FLOAT32", [outC], rvals(rng, "FLOAT32", outC), const=True)
        out = dict(type="FLOAT32")
        ver = 1
    elif kind.startswith("HYBRID"):
        inp = tensor("FLOAT32", ishape, rvals(rng, "FLOAT32", nelem(ishape)))
        per = kind == "HYBRIDpc" or depthwise
        fs = [rng.uniform(0.005, 0.02) for _ in range(outC)] if per else rng.uniform(0.005, 0.02)
        flt = tensor("INT8", fshape, rvals(rng, "INT8", nelem(fshape), -127, 127), const=True,
                     scale=fs, zp=[0] * outC if per else 0, axis=qaxis)
        bias = tensor("FLOAT32", [outC], rvals(rng, "FLOAT32", outC), const=True)
        out = dict(type="FLOAT32")
        ver = 6 if depthwise else 5
    else:
        typ = {"UINT8": "UINT8", "INT8pc": "INT8", "INT8pt": "INT8", "INT16": "INT16"}[kind]
        in_s, in_zp, f_s, f_zp, out_s, out_zp = quant_setup(rng, typ, K, ties)
        small = trial % 4 == 1
        lo, hi = RANGE[typ]
        if small:
            lo, hi = max(lo, in_zp - 6), min(hi, in_zp + 6)
        inp = tensor(typ, ishape, rvals(rng, typ, nelem(ishape), lo, hi), scale=in_s, zp=in_zp)
        ftyp = "UINT8" if typ == "UINT8" else "INT8"
        fvals = rvals(rng, ftyp, nelem(fshape), -127 if ftyp == "INT8" else None, None)
        if kind in ("INT8pc", "INT16"):
            fss = [f32(f_s * rng.uniform(0.5, 2)) for _ in range(outC)]
            flt = tensor(ftyp, fshape, fvals, const=True, scale=fss, zp=[0] * outC, axis=qaxis)
            bscale = [in_s * s for s in fss]
        else:
            flt = tensor(ftyp, fshape, fvals, const=True, scale=f_s, zp=f_zp, axis=qaxis)
            bscale = f32(in_s) * f32(f_s)
        btyp = "INT64" if typ == "INT16" and (trial % 5 != 4) else "INT32"
        bias = tensor(btyp, [outC], rvals(rng, btyp, outC, -30 * K * 127, 30 * K * 127), const=True,
                      scale=bscale, zp=[0] * outC if isinstance(bscale, list) else 0, axis=0)
        out = dict(type=typ, scales=[f32(out_s)], zps=[out_zp])
        ver = {"UINT8": 1, "INT8pc": 3, "INT8pt": 3, "INT16": 4}[kind]
    if no_bias:
        bias = None
    inputs = [inp, flt] + ([bias] if bias is not None or rng.random() < 0.5 else [])
    if depthwise:
        opts = dict(padding=pad, stride_w=sw, stride_h=sh, depth_multiplier=mult, fused_activation_function=act,
                    dilation_w_factor=dw, dilation_h_factor=dh)
        name = "dw_%s_%d" % (kind, trial)
        run_case(name, "DEPTHWISE_CONV_2D", ver if ver != 1 or dw == 1 else 2, inputs, [out],
                 "DepthwiseConv2DOptions", opts)
    else:
        opts = dict(padding=pad, stride_w=sw, stride_h=sh, fused_activation_function=act,
                    dilation_w_factor=dw, dilation_h_factor=dh)
        name = "conv_%s_%d" % (kind, trial)
        run_case(name, "CONV_2D", ver, inputs, [out], "Conv2DOptions", opts)


def gen_fc(rng, kind, trial):
    depth = rng.choice([1, 3, 8, 16, 17, 64, 100])
    units = rng.choice([1, 3, 4, 8, 11, 24])
    rows = rng.choice([1, 1, 2, 3, 4, 7])
    rank = rng.choice([1, 2, 2, 3, 4]) if rows == 1 else rng.choice([2, 3, 4])
    if rank == 1:
        ishape = [depth]
    elif rank == 2:
        ishape = [rows, depth]
    elif rank == 3:
        ishape = [1, rows, depth]
    else:
        ishape = [rows, 1, 1, depth]
    keep = rng.random() < 0.3
    act = rng.choice(ACTS)
    no_bias = rng.random() < 0.15
    fmt = "DEFAULT"
    wshape = [units, depth]
    outs = None
    if kind == "FLOAT32":
        inp = tensor("FLOAT32", ishape, rvals(rng, "FLOAT32", nelem(ishape)))
        flt = tensor("FLOAT32", wshape, rvals(rng, "FLOAT32", nelem(wshape)), const=True)
        bias = tensor("FLOAT32", [units], rvals(rng, "FLOAT32", units), const=True)
        out = dict(type="FLOAT32")
        ver = 1
    elif kind.startswith("HYBRID"):
        inp = tensor("FLOAT32", ishape, rvals(rng, "FLOAT32", nelem(ishape)))
        flt = tensor("INT8", wshape, rvals(rng, "INT8", nelem(wshape), -127, 127), const=True,
                     scale=rng.uniform(0.005, 0.02), zp=0)
        bias = tensor("FLOAT32", [units], rvals(rng, "FLOAT32", units), const=True)
        out = dict(type="FLOAT32")
        ver = 3
    elif kind == "SHUFFLED":
        units = rng.choice([4, 8, 12])
        depth = rng.choice([16, 32, 64])
        rows = rng.choice([1, 4])
        ishape = [rows, depth]
        keep = False
        wshape = [units, depth]
        in_s, f_s = rng.uniform(0.005, 0.05), rng.uniform(0.002, 0.02)
        out_s = in_s * f_s * math.sqrt(depth) * rng.uniform(20, 400) / 256
        inp = tensor("UINT8", ishape, rvals(rng, "UINT8", nelem(ishape)), scale=in_s, zp=128)
        w = rvals(rng, "UINT8", nelem(wshape))
        # Store in 4x16 blocks, each value as int8(w ^ 0x80).
        sh = []
        for c in range(0, units, 4):
            for d in range(0, depth, 16):
                for r in range(4):
                    for j in range(16):
                        sh.append(w[(c + r) * depth + d + j])
        flt = tensor("UINT8", wshape, sh, const=True, scale=f_s, zp=128)
        bias = tensor("INT32", [units], rvals(rng, "INT32", units, -20000, 20000), const=True,
                      scale=f32(in_s) * f32(f_s), zp=0)
        out = dict(type="INT16", scales=[f32(out_s)], zps=[0])
        outs = [out, dict(type="UINT8", shape=[rows, depth])]  # the input workspace
        fmt = "SHUFFLED4x16INT8"
        ver = 2
        act = "NONE"
        no_bias = False
    else:
        typ, otyp = {"UINT8": ("UINT8", "UINT8"), "UINT8_16": ("UINT8", "INT16"), "INT8": ("INT8", "INT8"),
                     "INT16": ("INT16", "INT16")}[kind]
        in_s, in_zp, f_s, f_zp, out_s, out_zp = quant_setup(rng, typ, depth, kind in ("UINT8", "INT8") and trial % 3 == 0)
        if typ == "INT8":
            f_zp = rng.choice([0, 0, 3, -7])
        if otyp == "INT16" and typ == "UINT8":
            out_s, out_zp = out_s / 256, 0
        lo, hi = RANGE[typ]
        if trial % 4 == 1:
            lo, hi = max(lo, in_zp - 6), min(hi, in_zp + 6)
        inp = tensor(typ, ishape, rvals(rng, typ, nelem(ishape), lo, hi), scale=in_s, zp=in_zp)
        ftyp = "UINT8" if typ == "UINT8" else "INT8"
        flt = tensor(ftyp, wshape, rvals(rng, ftyp, nelem(wshape), -127 if ftyp == "INT8" else None),
                     const=True, scale=f_s, zp=f_zp)
        btyp = "INT64" if typ == "INT16" and trial % 5 != 4 else "INT32"
        bias = tensor(btyp, [units], rvals(rng, btyp, units, -30 * depth * 127, 30 * depth * 127), const=True,
                      scale=f32(in_s) * f32(f_s), zp=0)
        out = dict(type=otyp, scales=[f32(out_s)], zps=[out_zp])
        ver = {"UINT8": 1, "UINT8_16": 3, "INT8": 4, "INT16": 7}[kind]
    if no_bias:
        bias = None
    inputs = [inp, flt] + ([bias] if bias is not None or rng.random() < 0.5 else [])
    opts = dict(fused_activation_function=act, weights_format=fmt, keep_num_dims=keep,
                asymmetric_quantize_inputs=kind == "HYBRIDa")
    run_case("fc_%s_%d" % (kind, trial), "FULLY_CONNECTED", ver, inputs, outs or [out],
             "FullyConnectedOptions", opts)


def main():
    rng = tflite29.seeded(2029)
    for kind in ["FLOAT32", "UINT8", "INT8pc", "INT8pt", "INT16", "HYBRIDpt", "HYBRIDpc"]:
        for trial in range(30):
            gen_conv(rng, kind, False, trial)
    for kind in ["FLOAT32", "UINT8", "INT8pc", "INT8pt", "INT16", "HYBRIDpc"]:
        for trial in range(30):
            gen_conv(rng, kind, True, trial)
    for kind in ["FLOAT32", "UINT8", "UINT8_16", "INT8", "INT16", "HYBRID", "HYBRIDa", "SHUFFLED"]:
        for trial in range(30):
            gen_fc(rng, kind, trial)
    # MobileNet-like layers: large enough to use every kernel path.
    for typ in ["UINT8", "INT8pc"]:
        for i, (h, inC, outC, k, s) in enumerate([(14, 24, 40, 1, 1), (15, 3, 16, 3, 2)]):
            rng2 = tflite29.seeded(100 + i)
            gen_big(rng2, typ, h, inC, outC, k, s, i)
    gen_edges(tflite29.seeded(77))
    with gzip.open(OUT, "wt") as f:
        json.dump(CASES, f)
    print(len(CASES), "cases,", sum(1 for c in CASES if "error" in c), "TFLite errors")


def gen_edges(rng):
    """Deep sums (lane flushes), big filters, a depth_multiplier option that
    disagrees with the filter, and wide FULLY_CONNECTED layers."""
    for typ in ["UINT8", "INT8"]:
        for i, (h, inC, outC, k) in enumerate([(5, 40, 7, 3), (4, 130, 5, 2)]):
            K = k * k * inC
            in_s, in_zp, f_s, f_zp, out_s, out_zp = quant_setup(rng, typ, K, i == 1)
            inp = tensor(typ, [1, h, h, inC], rvals(rng, typ, h * h * inC), scale=in_s, zp=in_zp)
            flt = tensor(typ, [outC, k, k, inC], rvals(rng, typ, outC * K, -127 if typ == "INT8" else None),
                         const=True, scale=f_s, zp=f_zp)
            bias = tensor("INT32", [outC], rvals(rng, "INT32", outC, -9000, 9000), const=True,
                          scale=f32(in_s) * f32(f_s), zp=0)
            run_case("conv_deep_%s_%d" % (typ, i), "CONV_2D", 3 if typ == "INT8" else 1, [inp, flt, bias],
                     [dict(type=typ, scales=[f32(out_s)], zps=[out_zp])], "Conv2DOptions",
                     dict(padding="SAME", stride_w=1, stride_h=1, fused_activation_function="NONE"))
        for i, (k, mult, opt) in enumerate([(7, 1, 1), (6, 2, 2), (3, 2, 1), (3, 1, 2)]):
            C = 3
            outC = C * mult
            in_s, in_zp, f_s, f_zp, out_s, out_zp = quant_setup(rng, typ, k * k, i % 2 == 0)
            inp = tensor(typ, [1, 9, 8, C], rvals(rng, typ, 9 * 8 * C), scale=in_s, zp=in_zp)
            flt = tensor(typ, [1, k, k, outC], rvals(rng, typ, k * k * outC, -127 if typ == "INT8" else None),
                         const=True, scale=f_s, zp=f_zp, axis=3)
            bias = tensor("INT32", [outC], rvals(rng, "INT32", outC, -900, 900), const=True,
                          scale=f32(in_s) * f32(f_s), zp=0)
            run_case("dw_edge_%s_%d" % (typ, i), "DEPTHWISE_CONV_2D", 3 if typ == "INT8" else 1, [inp, flt, bias],
                     [dict(type=typ, scales=[f32(out_s)], zps=[out_zp])], "DepthwiseConv2DOptions",
                     dict(padding="SAME", stride_w=1, stride_h=2, depth_multiplier=opt,
                          fused_activation_function="RELU"))
        for i, (rows, depth, units) in enumerate([(1, 560, 10), (3, 300, 17)]):
            in_s, in_zp, f_s, f_zp, out_s, out_zp = quant_setup(rng, typ, depth, i == 0)
            inp = tensor(typ, [rows, depth], rvals(rng, typ, rows * depth), scale=in_s, zp=in_zp)
            flt = tensor(typ, [units, depth], rvals(rng, typ, units * depth, -127 if typ == "INT8" else None),
                         const=True, scale=f_s, zp=f_zp)
            bias = tensor("INT32", [units], rvals(rng, "INT32", units, -9000, 9000), const=True,
                          scale=f32(in_s) * f32(f_s), zp=0)
            run_case("fc_wide_%s_%d" % (typ, i), "FULLY_CONNECTED", 4 if typ == "INT8" else 1, [inp, flt, bias],
                     [dict(type=typ, scales=[f32(out_s)], zps=[out_zp])], "FullyConnectedOptions",
                     dict(fused_activation_function="NONE"))


def gen_big(rng, kind, h, inC, outC, k, s, i):
    typ = "UINT8" if kind == "UINT8" else "INT8"
    K = k * k * inC
    in_s, in_zp, f_s, f_zp, out_s, out_zp = quant_setup(rng, typ, K, False)
    ishape, fshape = [1, h, h, inC], [outC, k, k, inC]
    inp = tensor(typ, ishape, rvals(rng, typ, nelem(ishape)), scale=in_s, zp=in_zp)
    fvals = rvals(rng, typ, nelem(fshape), -127 if typ == "INT8" else None)
    if kind == "INT8pc":
        fss = [f32(f_s * rng.uniform(0.5, 2)) for _ in range(outC)]
        flt = tensor(typ, fshape, fvals, const=True, scale=fss, zp=[0] * outC)
        bscale = [in_s * x for x in fss]
    else:
        flt = tensor(typ, fshape, fvals, const=True, scale=f_s, zp=f_zp)
        bscale = f32(in_s) * f32(f_s)
    bias = tensor("INT32", [outC], rvals(rng, "INT32", outC, -20000, 20000), const=True, scale=bscale,
                  zp=[0] * outC if isinstance(bscale, list) else 0)
    out = dict(type=typ, scales=[f32(out_s)], zps=[out_zp])
    run_case("conv_big_%s_%d" % (kind, i), "CONV_2D", 3 if typ == "INT8" else 1, [inp, flt, bias], [out],
             "Conv2DOptions", dict(padding="SAME", stride_w=s, stride_h=s, fused_activation_function="RELU6"))
    dshape = [1, 3, 3, outC]
    dvals = rvals(rng, typ, nelem(dshape), -127 if typ == "INT8" else None)
    dinp = tensor(typ, [1, h, h, outC], rvals(rng, typ, h * h * outC), scale=in_s, zp=in_zp)
    if kind == "INT8pc":
        fss = [f32(f_s * rng.uniform(0.5, 2)) for _ in range(outC)]
        dflt = tensor(typ, dshape, dvals, const=True, scale=fss, zp=[0] * outC, axis=3)
        bscale = [in_s * x for x in fss]
    else:
        dflt = tensor(typ, dshape, dvals, const=True, scale=f_s, zp=f_zp, axis=3)
    dbias = tensor("INT32", [outC], rvals(rng, "INT32", outC, -2000, 2000), const=True, scale=bscale,
                   zp=[0] * outC if isinstance(bscale, list) else 0)
    dout = dict(type=typ, scales=[f32(in_s * f_s * 60)], zps=[out_zp])
    run_case("dw_big_%s_%d" % (kind, i), "DEPTHWISE_CONV_2D", 3 if typ == "INT8" else 1, [dinp, dflt, dbias], [dout],
             "DepthwiseConv2DOptions", dict(padding="SAME", stride_w=s, stride_h=s, depth_multiplier=1,
                                            fused_activation_function="RELU6"))


main()
