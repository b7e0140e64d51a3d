#!/usr/bin/env python3
"""conformance_tflite29_gen.py: the op conformance suite's table for the
builtins that the family generators beside it do not record, run through
the real TensorFlow Lite 2.9.

Each entry of OPS names an op, the types its inputs are tried with and a
maker that builds one random case (shapes, options, inputs, quantization)
for a type. Every type is tried at every version TFLite 2.9's resolver
registers for the op (testdata/gen/tflite29_resolver.json) and at the
version above it, so the recording says which (op, version, type) TFLite
2.9 runs and what it answers, and which it refuses. Cases per (op,
version, type): tflite29.trials() ($TFLITE29_TRIALS, default 2); the
first trial of each op's lowest version also tries an empty tensor where
the maker has one.

One file per kernel family: conformance/<family>_tflite29.json.gz, replayed
by core/kernels/conformance_test.go.

usage: conformance_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUTDIR
"""
import gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem

SCHEMA, RUNNER, WORK, OUTDIR = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)
CODES = tflite29.builtin_codes(SCHEMA)
RESOLVER = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tflite29_resolver.json")))

QUANTIZED = ("UINT8", "INT8", "INT16")
ACTS = ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"]


def vals(typ, n, rng, lo=None, hi=None):
    """n random values of typ (within lo..hi when given)."""
    if typ in ("FLOAT32", "FLOAT16", "FLOAT64"):
        return [rng.uniform(-4 if lo is None else lo, 4 if hi is None else hi) for _ in range(n)]
    if typ == "BOOL":
        return [rng.random() < 0.5 for _ in range(n)]
    full = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767),
            "INT32": (-100000, 100000), "INT64": (-10 ** 12, 10 ** 12), "UINT32": (0, 4000000000)}[typ]
    return [rng.randint(full[0] if lo is None else lo, full[1] if hi is None else hi) for _ in range(n)]


def qp(typ, rng):
    """Random quantization for the quantized types, extremes included."""
    if typ == "UINT8":
        return dict(scale=rng.choice([rng.uniform(0.002, 0.2), 1.0 / 256, 1e-3]), zp=rng.randint(0, 255))
    if typ == "INT8":
        return dict(scale=rng.choice([rng.uniform(0.002, 0.2), 1.0 / 256, 1e-3]), zp=rng.randint(-128, 127))
    if typ == "INT16":
        return dict(scale=rng.choice([rng.uniform(1e-4, 1e-2), 1.0 / 32768]), zp=0)
    return {}


def shape(rng, lo=0, hi=4, empty=False):
    s = [rng.randint(1, 4) for _ in range(rng.randint(lo, hi))]
    if empty and s:
        s[rng.randrange(len(s))] = 0
    return s


def t(typ, shp, rng, q=True, **kw):
    """A non-constant input of typ and shape shp with random values."""
    lo, hi, v = kw.pop("lo", None), kw.pop("hi", None), kw.pop("v", None)
    d = dict(type=typ, shape=shp, vals=vals(typ, nelem(shp), rng, lo, hi) if v is None else v)
    if q and typ in QUANTIZED:
        d.update(qp(typ, rng))
    d.update(kw)
    return d


def const(typ, shp, v):
    return dict(type=typ, shape=shp, vals=v, const=True)


def out(typ, rng, q=True, **kw):
    d = dict(type=typ)
    if q and typ in QUANTIZED:
        d.update(qp(typ, rng))
    d.update(kw)
    return d


def same_q(o, i):
    """o with i's quantization (ops that require equal parameters)."""
    o.update({k: i[k] for k in ("scale", "zp") if k in i})
    return o


# Makers: (rng, type, empty) -> (inputs, outputs, options_type, options).

def unary(rng, typ, empty, lo=None, hi=None):
    x = t(typ, shape(rng, empty=empty), rng, lo=lo, hi=hi)
    return [x], [out(typ, rng)], None, None


def positive(rng, typ, empty):
    return unary(rng, typ, empty, lo=0.01 if typ == "FLOAT32" else None, hi=9 if typ == "FLOAT32" else None)


def with_opts(maker, opt_type, opts):
    def m(rng, typ, empty):
        i, o, _, _ = maker(rng, typ, empty)
        return i, o, opt_type, opts(rng)
    return m


def bcast(rng):
    a = shape(rng, 0, 4)
    b = [d if rng.random() < 0.6 else 1 for d in a]
    b = b[rng.randint(0, len(b)):] if b else b
    return (a, b) if rng.random() < 0.5 else (b, a)


def binary(opt_type, act=True, nonzero=False):
    def m(rng, typ, empty):
        a, b = bcast(rng)
        if empty and a:
            a[0] = 0
            b = []
        y = t(typ, b, rng)
        if nonzero:
            y["vals"] = [v if v != 0 else 3 for v in y["vals"]]
            if typ == "FLOAT32":
                y["vals"] = [v if abs(v) > 0.1 else 0.5 for v in y["vals"]]
        opts = {"fused_activation_function": rng.choice(ACTS)} if act and typ in ("FLOAT32", "UINT8", "INT8", "INT16") else {}
        if opt_type in ("AddOptions", "SubOptions") and typ == "INT16":
            opts["pot_scale_int16"] = False
        return [t(typ, a, rng), y], [out(typ, rng)], opt_type, opts
    return m


def softmax(rng, typ, empty):
    x = t(typ, shape(rng, 1, 4, empty), rng)
    o = out(typ, rng, False)
    if typ == "UINT8":
        o.update(scale=1.0 / 256, zp=0)
    elif typ == "INT8":
        o.update(scale=1.0 / 256, zp=-128)
    elif typ == "INT16":
        o.update(scale=1.0 / 32768, zp=0)
    return [x], [o], "SoftmaxOptions", {"beta": rng.choice([1.0, 0.5, 2.0])}


def l2norm(rng, typ, empty):
    x = t(typ, shape(rng, 1, 4, empty), rng)
    o = out(typ, rng, False)
    if typ in ("UINT8", "INT8"):
        o.update(scale=1.0 / 128, zp=128 if typ == "UINT8" else 0)
    return [x], [o], "L2NormOptions", {"fused_activation_function": "NONE"}


def prelu(rng, typ, empty):
    s = shape(rng, 1, 4, empty)
    a = [d if rng.random() < 0.5 else 1 for d in s][1:]
    return [t(typ, s, rng), t(typ, a, rng)], [out(typ, rng)], None, None


def reshape(rng, typ, empty):
    s = shape(rng, 0, 4, empty)
    n = nelem(s)
    ns = [n] if rng.random() < 0.5 or n == 0 else [1, n]
    if n > 0 and n % 2 == 0 and rng.random() < 0.5:
        ns = [2, -1]
    return [t(typ, s, rng), const("INT32", [len(ns)], ns)], [same_q(out(typ, rng), {})], None, None


def squeeze(rng, typ, empty):
    s = [rng.choice([1, 1, 2, 3]) for _ in range(rng.randint(1, 4))]
    ones = [i for i, d in enumerate(s) if d == 1]
    dims = rng.sample(ones, rng.randint(0, len(ones))) if ones else []
    x = t(typ, s, rng)
    return [x], [same_q(out(typ, rng, False), x)], "SqueezeOptions", {"squeeze_dims": dims}


def expand_dims(rng, typ, empty):
    s = shape(rng, 0, 3, empty)
    x = t(typ, s, rng)
    return [x, const("INT32", [], [rng.randint(-len(s) - 1, len(s))])], [same_q(out(typ, rng, False), x)], None, None


def shape_op(rng, typ, empty):
    return [t(typ, shape(rng, 0, 4, empty), rng)], [dict(type="INT32")], "ShapeOptions", {"out_type": "INT32"}


def transpose(rng, typ, empty):
    s = shape(rng, 1, 5, empty)
    p = list(range(len(s)))
    rng.shuffle(p)
    x = t(typ, s, rng)
    return [x, const("INT32", [len(p)], p)], [same_q(out(typ, rng, False), x)], None, None


def slice_op(rng, typ, empty):
    s = [rng.randint(1, 5) for _ in range(rng.randint(1, 5))]
    b = [rng.randint(0, d - 1) for d in s]
    z = [rng.choice([-1, rng.randint(0, d - bb)]) for d, bb in zip(s, b)]
    x = t(typ, s, rng)
    return [x, const("INT32", [len(s)], b), const("INT32", [len(s)], z)], [same_q(out(typ, rng, False), x)], None, None


def strided_slice(rng, typ, empty):
    s = [rng.randint(1, 5) for _ in range(rng.randint(1, 5))]
    b, e, st = [], [], []
    for d in s:
        step = rng.choice([1, 1, 2, -1])
        lo, hi = rng.randint(-d, d - 1), rng.randint(-d, d)
        b, e, st = b + [lo], e + [hi], st + [step]
    x = t(typ, s, rng)
    m = (1 << len(s)) - 1
    opts = {"begin_mask": rng.randint(0, m), "end_mask": rng.randint(0, m),
            "shrink_axis_mask": rng.choice([0, 0, rng.randint(0, m)])}
    n = len(s)
    return ([x, const("INT32", [n], b), const("INT32", [n], e), const("INT32", [n], st)],
            [same_q(out(typ, rng, False), x)], "StridedSliceOptions", opts)


def gather(rng, typ, empty):
    s = shape(rng, 1, 4)
    axis = rng.randrange(len(s))
    it = rng.choice(["INT32", "INT64"])
    idx_shape = shape(rng, 0, 2, empty)
    x = t(typ, s, rng)
    idx = t(it, idx_shape, rng, lo=0, hi=s[axis] - 1)
    return [x, idx], [same_q(out(typ, rng, False), x)], "GatherOptions", {"axis": axis}


def gather_nd(rng, typ, empty):
    s = shape(rng, 1, 4)
    k = rng.randint(1, len(s))
    n = rng.randint(0 if empty else 1, 3)
    idx = []
    for _ in range(n):
        idx += [rng.randint(0, s[j] - 1) for j in range(k)]
    x = t(typ, s, rng)
    return [x, t(rng.choice(["INT32", "INT64"]), [n, k], rng, v=idx)], [same_q(out(typ, rng, False), x)], None, None


def tile(rng, typ, empty):
    s = shape(rng, 1, 4, empty)
    x = t(typ, s, rng)
    return [x, const("INT32", [len(s)], [rng.randint(1, 3) for _ in s])], [same_q(out(typ, rng, False), x)], None, None


def fill(rng, typ, empty):
    d = shape(rng, 0, 3, empty)
    v = t(typ, [], rng)
    return [const("INT32", [len(d)], d), v], [same_q(out(typ, rng, False), v)], None, None


def pack(rng, typ, empty):
    s = shape(rng, 0, 3, empty)
    n = rng.randint(1, 3)
    q = qp(typ, rng)
    xs = [t(typ, s, rng, q=False, **q) for _ in range(n)]
    return xs, [out(typ, rng, False, **q)], "PackOptions", {"values_count": n, "axis": rng.randint(-len(s) - 1, len(s))}


def unpack(rng, typ, empty):
    s = shape(rng, 1, 4)
    axis = rng.randrange(len(s))
    x = t(typ, s, rng)
    return [x], [same_q(out(typ, rng, False), x) for _ in range(s[axis])], "UnpackOptions", {"num": s[axis], "axis": axis}


def split(rng, typ, empty):
    s = shape(rng, 1, 4)
    axis = rng.randrange(len(s))
    n = rng.choice([d for d in (1, 2, 3, 4) if s[axis] % d == 0])
    x = t(typ, s, rng)
    return [const("INT32", [], [axis]), x], [same_q(out(typ, rng, False), x) for _ in range(n)], "SplitOptions", {"num_splits": n}


def split_v(rng, typ, empty):
    s = shape(rng, 1, 4)
    axis = rng.randrange(len(s))
    sizes, left = [], s[axis]
    while left > 0:
        k = rng.randint(1, left)
        sizes.append(k)
        left -= k
    if len(sizes) > 1 and rng.random() < 0.3:
        sizes[rng.randrange(len(sizes))] = -1
    x = t(typ, s, rng)
    return ([x, const("INT32", [len(sizes)], sizes), const("INT32", [], [axis])],
            [same_q(out(typ, rng, False), x) for _ in sizes], "SplitVOptions", {"num_splits": len(sizes)})


def concat(rng, typ, empty):
    s = shape(rng, 1, 4)
    axis = rng.randrange(len(s))
    xs = []
    for _ in range(rng.randint(1, 3)):
        si = list(s)
        si[axis] = rng.randint(0 if empty else 1, 3)
        xs.append(t(typ, si, rng))
    return xs, [out(typ, rng)], "ConcatenationOptions", {"axis": axis, "fused_activation_function": "NONE"}


def pad(v2):
    def m(rng, typ, empty):
        s = shape(rng, 1, 4, empty)
        p = []
        for _ in s:
            p += [rng.randint(0, 2), rng.randint(0, 2)]
        x = t(typ, s, rng)
        ins = [x, const("INT32", [len(s), 2], p)]
        if v2:
            c = const(typ, [], vals(typ, 1, rng))
            c.update({k: x[k] for k in ("scale", "zp") if k in x})
            ins.append(c)
        return ins, [same_q(out(typ, rng, False), x)], None, None
    return m


def mirror_pad(rng, typ, empty):
    s = [rng.randint(2, 4) for _ in range(rng.randint(1, 4))]
    mode = rng.choice(["REFLECT", "SYMMETRIC"])
    hi = 1 if mode == "REFLECT" else 2
    p = []
    for d in s:
        p += [rng.randint(0, min(hi, d - 1)), rng.randint(0, min(hi, d - 1))]
    x = t(typ, s, rng)
    return [x, const("INT32", [len(s), 2], p)], [same_q(out(typ, rng, False), x)], "MirrorPadOptions", {"mode": mode}


def space_to_batch(rng, typ, empty):
    bs = [rng.randint(1, 2), rng.randint(1, 2)]
    pads = [rng.randint(0, 1), rng.randint(0, 1), rng.randint(0, 1), rng.randint(0, 1)]
    h = bs[0] * rng.randint(1, 3) - pads[0] - pads[1]
    w = bs[1] * rng.randint(1, 3) - pads[2] - pads[3]
    x = t(typ, [rng.randint(1, 2), max(h, 0), max(w, 0), rng.randint(1, 3)], rng)
    return [x, const("INT32", [2], bs), const("INT32", [2, 2], pads)], [same_q(out(typ, rng, False), x)], None, None


def batch_to_space(rng, typ, empty):
    bs = [rng.randint(1, 2), rng.randint(1, 2)]
    x = t(typ, [bs[0] * bs[1] * rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3)], rng)
    crops = [0, rng.randint(0, 1) if x["shape"][1] * bs[0] > 1 else 0, 0, 0]
    return [x, const("INT32", [2], bs), const("INT32", [2, 2], crops)], [same_q(out(typ, rng, False), x)], None, None


def space_to_depth(rng, typ, empty):
    b = rng.randint(1, 3)
    x = t(typ, [rng.randint(1, 2), b * rng.randint(1, 2), b * rng.randint(1, 2), rng.randint(1, 3)], rng)
    return [x], [same_q(out(typ, rng, False), x)], "SpaceToDepthOptions", {"block_size": b}


def depth_to_space(rng, typ, empty):
    b = rng.randint(1, 3)
    x = t(typ, [rng.randint(1, 2), rng.randint(1, 3), rng.randint(1, 3), b * b * rng.randint(1, 2)], rng)
    return [x], [same_q(out(typ, rng, False), x)], "DepthToSpaceOptions", {"block_size": b}


def cast(rng, typ, empty):
    to = rng.choice(["FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16", "BOOL", "UINT32", "FLOAT64"])
    lo, hi = (-200, 200) if typ in ("FLOAT32", "INT32", "INT64", "INT16") else (None, None)
    return [t(typ, shape(rng, 0, 4, empty), rng, q=False, lo=lo, hi=hi)], [dict(type=to)], None, None


def arg(opt_type):
    def m(rng, typ, empty):
        s = shape(rng, 1, 4)
        ot = rng.choice(["INT32", "INT64"])
        return ([t(typ, s, rng), const(rng.choice(["INT32", "INT64"]), [1], [rng.randrange(len(s))])],
                [dict(type=ot)], opt_type, {"output_type": ot})
    return m


def reducer(rng, typ, empty):
    s = shape(rng, 1, 4, empty)
    axes = rng.sample(range(len(s)), rng.randint(1, len(s)))
    x = t(typ, s, rng)
    o = out(typ, rng, False)
    o.update(qp(typ, rng) if rng.random() < 0.5 else {k: x[k] for k in ("scale", "zp") if k in x})
    return [x, const("INT32", [len(axes)], axes)], [o], "ReducerOptions", {"keep_dims": rng.random() < 0.5}


def quantize(rng, typ, empty):
    s = shape(rng, 0, 4, empty)
    to = rng.choice(["UINT8", "INT8", "INT16"])
    x = t(typ, s, rng)
    return [x], [out(to, rng)], None, None


def dequantize(rng, typ, empty):
    s = shape(rng, 0, 4, empty)
    x = t(typ, s, rng)
    if typ in ("UINT8", "INT8") and len(s) >= 1 and rng.random() < 0.3:
        x.pop("scale"), x.pop("zp")
        x.update(const=True, scales=[rng.uniform(0.001, 0.1) for _ in range(s[0])], zps=[0] * s[0], axis=0)
    return [x], [dict(type="FLOAT32")], None, None


def fake_quant(rng, typ, empty):
    lo = rng.uniform(-6, 0)
    return ([t(typ, shape(rng, 0, 4, empty), rng, lo=-8, hi=8)], [dict(type=typ)], "FakeQuantOptions",
            {"min": lo, "max": rng.uniform(0.1, 6), "num_bits": rng.choice([8, 16]), "narrow_range": rng.random() < 0.5})


def conv_q(typ, rng, shp, const_=True):
    x = dict(type=typ, shape=shp, vals=vals(typ, nelem(shp), rng), const=const_)
    if typ == "INT8":
        x.update(scale=rng.uniform(0.002, 0.02), zp=0)
    elif typ in ("UINT8", "INT16"):
        x.update(qp(typ, rng))
    return x


def bias_of(typ, n, rng, x, f):
    if typ == "FLOAT32":
        return const("FLOAT32", [n], vals("FLOAT32", n, rng))
    bt = "INT64" if typ == "INT16" else "INT32"
    b = const(bt, [n], vals("INT32", n, rng, -3000, 3000))
    b.update(scale=x["scale"] * f["scale"], zp=0)
    return b


def conv2d(rng, typ, empty):
    n, h, w, c, oc, k = rng.randint(0 if empty else 1, 2), rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3)
    x = t(typ, [n, h, w, c], rng)
    f = conv_q("INT8" if typ == "INT16" else typ, rng, [oc, k, k, c])
    return ([x, f, bias_of(typ, oc, rng, x, f)], [out(typ, rng)], "Conv2DOptions",
            {"padding": rng.choice(["SAME", "VALID"]), "stride_w": rng.randint(1, 2), "stride_h": rng.randint(1, 2),
             "fused_activation_function": rng.choice(ACTS)})


def depthwise(rng, typ, empty):
    n, h, w, c, m, k = rng.randint(0 if empty else 1, 2), rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 4), rng.randint(1, 2), rng.randint(1, 3)
    x = t(typ, [n, h, w, c], rng)
    f = conv_q("INT8" if typ == "INT16" else typ, rng, [1, k, k, c * m])
    return ([x, f, bias_of(typ, c * m, rng, x, f)], [out(typ, rng)], "DepthwiseConv2DOptions",
            {"padding": rng.choice(["SAME", "VALID"]), "stride_w": rng.randint(1, 2), "stride_h": rng.randint(1, 2),
             "depth_multiplier": m, "fused_activation_function": rng.choice(ACTS)})


def fully_connected(rng, typ, empty):
    b, i, o = rng.randint(0 if empty else 1, 3), rng.randint(1, 8), rng.randint(1, 6)
    x = t(typ, [b, i], rng)
    f = conv_q("INT8" if typ == "INT16" else typ, rng, [o, i])
    return ([x, f, bias_of(typ, o, rng, x, f)], [out(typ, rng)], "FullyConnectedOptions",
            {"fused_activation_function": rng.choice(ACTS), "keep_num_dims": rng.random() < 0.3})


def transpose_conv(rng, typ, empty):
    n, h, w, c, oc, k, s = 1, rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2)
    pad = rng.choice(["SAME", "VALID"])
    oh, ow = (h * s, w * s) if pad == "SAME" else ((h - 1) * s + k, (w - 1) * s + k)
    x = t(typ, [n, h, w, c], rng)
    f = conv_q("INT8" if typ == "INT16" else typ, rng, [oc, k, k, c])
    return ([const("INT32", [4], [n, oh, ow, oc]), f, x], [out(typ, rng)], "TransposeConvOptions",
            {"padding": pad, "stride_w": s, "stride_h": s})


def resize(opt_type):
    def m(rng, typ, empty):
        x = t(typ, [rng.randint(1, 2), rng.randint(1, 5), rng.randint(1, 5), rng.randint(1, 3)], rng)
        align = rng.random() < 0.3
        return ([x, const("INT32", [2], [rng.randint(1, 8), rng.randint(1, 8)])], [same_q(out(typ, rng, False), x)],
                opt_type, {"align_corners": align, "half_pixel_centers": (not align) and rng.random() < 0.5})
    return m


F, Q8, Q, INTS = ["FLOAT32"], ["UINT8", "INT8"], ["UINT8", "INT8", "INT16"], ["INT32", "INT64"]
ALL = ["FLOAT32", "UINT8", "INT8", "INT16", "INT32", "INT64", "BOOL"]
ACT = lambda rng: {"fused_activation_function": "NONE"}

# family -> [(op, input types, maker)]
OPS = {
    "elementwise": [
        ("ABS", F + Q + ["INT32"], unary), ("EXP", F + Q8, unary), ("FLOOR", F, unary), ("NEG", F + INTS + Q8, unary),
        ("SQRT", F + Q8, positive), ("RSQRT", F + Q8, positive),
        ("ADD", F + Q + INTS, binary("AddOptions")), ("SUB", F + Q + INTS, binary("SubOptions")),
        ("MUL", F + Q + INTS + ["BOOL"], binary("MulOptions")), ("DIV", F + ["INT32", "UINT8"], binary("DivOptions", nonzero=True)),
        ("MAXIMUM", F + Q + INTS, binary(None, act=False)), ("MINIMUM", F + Q + INTS, binary(None, act=False)),
        ("SQUARED_DIFFERENCE", F + ["INT8", "INT32"], binary(None, act=False)),
        ("FLOOR_DIV", F + ["INT32", "INT16", "INT8", "UINT8"], binary(None, act=False, nonzero=True)),
        ("CAST", ALL + ["UINT32", "FLOAT64"], cast),
    ],
    "activation": [
        ("RELU", F + Q, unary), ("RELU6", F + Q, unary), ("RELU_N1_TO_1", F + Q8, unary),
        ("LOGISTIC", F + Q, unary), ("TANH", F + Q, unary), ("HARD_SWISH", F + Q8, unary),
        ("LEAKY_RELU", F + Q, with_opts(unary, "LeakyReluOptions", lambda rng: {"alpha": rng.choice([0.2, 0.01, 1.5, -0.3])})),
        ("PRELU", F + Q8, prelu), ("SOFTMAX", F + Q, softmax), ("L2_NORMALIZATION", F + Q8, l2norm),
    ],
    "shape": [
        ("RESHAPE", ALL, reshape), ("SQUEEZE", ALL, squeeze), ("EXPAND_DIMS", ALL, expand_dims), ("SHAPE", ALL, shape_op),
        ("TRANSPOSE", ALL, transpose), ("SLICE", ALL, slice_op), ("STRIDED_SLICE", ALL, strided_slice),
        ("GATHER", ALL, gather), ("GATHER_ND", ALL, gather_nd), ("TILE", ALL, tile), ("FILL", ALL, fill),
        ("PACK", ALL, pack), ("UNPACK", ALL, unpack), ("SPLIT", ALL, split), ("SPLIT_V", ALL, split_v),
        ("CONCATENATION", ALL, concat), ("PAD", ALL, pad(False)), ("PADV2", ALL, pad(True)), ("MIRROR_PAD", ALL, mirror_pad),
        ("SPACE_TO_BATCH_ND", ALL, space_to_batch), ("BATCH_TO_SPACE_ND", ALL, batch_to_space),
        ("SPACE_TO_DEPTH", ALL, space_to_depth), ("DEPTH_TO_SPACE", ALL, depth_to_space),
    ],
    "reduce": [
        ("ARG_MAX", F + Q8 + INTS + ["BOOL"], arg("ArgMaxOptions")),
        ("ARG_MIN", F + Q8 + INTS + ["BOOL"], arg("ArgMinOptions")),
        ("MEAN", F + Q + INTS, reducer), ("REDUCE_MAX", F + Q + INTS, reducer), ("REDUCE_MIN", F + Q + INTS, reducer),
    ],
    "quantize": [
        ("QUANTIZE", F + Q, quantize), ("DEQUANTIZE", Q + ["FLOAT16"], dequantize), ("FAKE_QUANT", F, fake_quant),
    ],
    "conv": [
        ("CONV_2D", F + Q, conv2d), ("DEPTHWISE_CONV_2D", F + Q, depthwise), ("FULLY_CONNECTED", F + Q, fully_connected),
        ("TRANSPOSE_CONV", F + Q, transpose_conv),
        ("RESIZE_BILINEAR", F + Q + ["INT32"], resize("ResizeBilinearOptions")),
        ("RESIZE_NEAREST_NEIGHBOR", F + Q + ["INT32"], resize("ResizeNearestNeighborOptions")),
    ],
}


def main():
    rng = tflite29.seeded(29)
    n_trials = tflite29.trials()
    for family, entries in OPS.items():
        cases = []
        for op, types, maker in entries:
            lo, hi = RESOLVER[op]
            for version in range(lo, hi + 2):
                for typ in types:
                    for trial in range(n_trials if version <= hi else 1):
                        ins, outs, ot, opts = maker(rng, typ, trial == 0 and version == lo)
                        name = "%s_v%d_%s_%d" % (op.lower(), version, typ.lower(), trial)
                        cases.append(tflite29.record(SCHEMA, RUNNER, WORK, name, op, CODES[op], version,
                                                     ins, outs, ot, opts))
        path = os.path.join(OUTDIR, "%s_tflite29.json.gz" % family)
        with open(path, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
            f.write(json.dumps(cases, separators=(",", ":")).encode())
        ok = sum(1 for c in cases if "error" not in c)
        print("%s: %d cases, %d run by TFLite" % (path, len(cases), ok))


main()
