#!/usr/bin/env python3
"""numeric_verify_tflite29_gen.py: regenerate numeric_verify_tflite29.json.gz,
the real TensorFlow Lite 2.9 results that TestNumericVerifyAgainstTFLite29
compares the quantize family's NumericVerify with: the default custom op
that outputs dequantized(input 0) - reference(input 1) and, when its
FlexBuffers options set log_if_failed with a tolerance of at least 0.1,
fails the Invoke where |difference| > tolerance*scale. Random shapes (empty
and scalar ones too), UINT8, INT8, INT16 and FLOAT16 inputs, references near
and far from the dequantized values, tolerances around 0.1 and around the
differences, missing and oddly typed options, per-channel and unquantized
inputs, constant inputs, NaN and infinite references, the types TFLite
refuses, and version 2, which TFLite 2.9 does not register.

usage: numeric_verify_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import gzip, json, os, struct, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
codes = tflite29.builtin_codes(SCHEMA)
rng = tflite29.seeded(2909)
CASES = []
RANGE = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767)}


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def f16(x):
    return struct.unpack("<e", struct.pack("<e", x))[0]


def case(name, inp, ref, options, version=1, out_type="FLOAT32"):
    CASES.append(tflite29.record(SCHEMA, RUNNER, WORK, name, "CUSTOM", codes["CUSTOM"], version, [inp, ref],
                                 [dict(type=out_type)], custom=("NumericVerify", options)))
    return CASES[-1]


def quantized(typ, shape, scale, zp):
    """A quantized input of random values, and its dequantized values."""
    n = nelem(shape)
    if typ == "FLOAT16":
        vals = [f16(rng.uniform(-4, 4)) for _ in range(n)]
        return dict(type=typ, shape=shape, vals=vals, scale=scale, zp=zp), vals
    lo, hi = RANGE[typ]
    vals = [rng.randint(lo, hi) for _ in range(n)]
    if scale is None:
        return dict(type=typ, shape=shape, vals=vals), [0.0] * n
    return dict(type=typ, shape=shape, vals=vals, scale=scale, zp=zp), [f32(scale * (v - zp)) for v in vals]


def random_cases():
    for typ in ("UINT8", "INT8", "INT16", "FLOAT16"):
        for trial in range(14):
            shape = [rng.randint(1, 5) for _ in range(rng.randint(0, 4))]
            if trial == 0:
                shape = [2, 0, 3]
            scale = f32(rng.choice([1e-3, 0.02, 0.5, 3.0]) * rng.uniform(0.5, 2))
            zp = 0 if typ in ("FLOAT16",) else rng.randint(*RANGE[typ]) if typ != "INT16" else rng.randint(-100, 100)
            if typ == "FLOAT16" and trial % 2:
                scale = None
            inp, deq = quantized(typ, shape, scale, zp)
            # Differences within a few scales of the dequantized value.
            unit = scale if scale else 0.01
            noise = rng.choice([0.1, 0.5, 2.0])
            ref = [f32(d + rng.uniform(-noise, noise) * unit) for d in deq]
            tol = rng.choice([0.05, 0.0999, 0.1, 0.3, 0.5, 1.0, 2.5])
            opts = {"tolerance": tol, "log_if_failed": trial % 3 != 0}
            case("nv_%s_%d" % (typ, trial), inp, dict(type="FLOAT32", shape=shape, vals=ref), opts)


def edge_cases():
    scale, zp = 0.5, 3
    inp = dict(type="INT8", shape=[4], vals=[3, 4, 5, -128], scale=scale, zp=zp)
    deq = [0.0, 0.5, 1.0, -65.5]
    # Differences of exactly tolerance*scale pass; a hair more fails.
    for tol in (0.1, 0.5, 1.0):
        limit = f32(f32(tol) * scale)
        ok = [deq[0] + limit, deq[1] - limit, deq[2], deq[3]]
        case("nv_edge_at_%g" % tol, inp, dict(type="FLOAT32", shape=[4], vals=ok), {"tolerance": tol, "log_if_failed": True})
        bad = [deq[0], deq[1], deq[2] + limit * 1.01, deq[3]]
        case("nv_edge_over_%g" % tol, inp, dict(type="FLOAT32", shape=[4], vals=bad), {"tolerance": tol, "log_if_failed": True})
    far = dict(type="FLOAT32", shape=[4], vals=[100.0, -100.0, 7.0, 0.0])
    # Below 0.1, or without log_if_failed, nothing fails.
    for name, opts in [("tol_0.0999", {"tolerance": 0.0999, "log_if_failed": True}),
                       ("tol_0.1", {"tolerance": 0.1, "log_if_failed": True}),
                       ("tol_big", {"tolerance": 1e6, "log_if_failed": True}),
                       ("tol_neg", {"tolerance": -1.0, "log_if_failed": True}),
                       ("nolog", {"tolerance": 5.0, "log_if_failed": False}),
                       ("empty_map", {}),
                       ("only_tol", {"tolerance": 0.5}),
                       ("only_log", {"log_if_failed": True}),
                       ("tol_int", {"tolerance": 300, "log_if_failed": True}),
                       ("tol_int_small", {"tolerance": 2, "log_if_failed": True}),
                       ("log_int", {"tolerance": 0.5, "log_if_failed": 2}),
                       ("log_int0", {"tolerance": 0.5, "log_if_failed": 0}),
                       ("log_float", {"tolerance": 0.5, "log_if_failed": 0.5}),
                       ("log_float2", {"tolerance": 0.5, "log_if_failed": 1.5}),
                       ("extra_key", {"tolerance": 0.5, "log_if_failed": True, "zzz": 1})]:
        case("nv_opts_%s" % name, inp, far, opts)
    # NaN passes the check (the comparison is false); infinities fail it.
    nan, inf = float("nan"), float("inf")
    for name, vals in [("nan", [nan, 0.5, 1.0, -65.5]), ("inf", [0.0, inf, 1.0, -65.5]), ("ninf", [-inf, 0.5, 1.0, -65.5])]:
        for log in (True, False):
            case("nv_%s_%s" % (name, log), inp, dict(type="FLOAT32", shape=[4], vals=vals), {"tolerance": 1.0, "log_if_failed": log})
    # INT16 with a zero point (DEQUANTIZE refuses it; NumericVerify does not).
    case("nv_int16_zp", dict(type="INT16", shape=[3], vals=[-32768, 0, 32767], scale=0.25, zp=-7),
         dict(type="FLOAT32", shape=[3], vals=[-8190.0, 1.0, 8193.0]), {"tolerance": 0.5, "log_if_failed": False})
    # Per-channel inputs dequantize per channel, but their tolerance is in
    # units of TFLite's legacy scale, 0.
    pc = dict(type="INT8", shape=[2, 3], vals=[1, 2, 3, -4, -5, -6], scales=[0.5, 0.25], zps=[0, 1], axis=0)
    case("nv_per_channel", pc, dict(type="FLOAT32", shape=[2, 3], vals=[0.5, 1, 1.5, -1, -1.5, -2]), {"tolerance": 0.5, "log_if_failed": False})
    case("nv_per_channel_check", pc, dict(type="FLOAT32", shape=[2, 3], vals=[0.0] * 6), {"tolerance": 0.5, "log_if_failed": True})
    case("nv_per_channel_fail", pc, dict(type="FLOAT32", shape=[2, 3], vals=[0.0, 1e-30, 0, 0, 0, 0]), {"tolerance": 0.5, "log_if_failed": True})
    pc1 = dict(type="INT8", shape=[2, 3], vals=[1, 2, 3, -4, -5, -6], scales=[0.5, 0.25, 2.0], zps=[0, 1, -1], axis=1)
    case("nv_per_channel_axis1", pc1, dict(type="FLOAT32", shape=[2, 3], vals=[0.0] * 6), {"tolerance": 0.5, "log_if_failed": False})
    for typ, vals in (("UINT8", [1, 2, 3, 250, 5, 6]), ("INT16", [1, 2, 3, -4000, -5, -6]), ("FLOAT16", [1, 2, 3, -4, 0.5, -6])):
        t = dict(type=typ, shape=[2, 3], vals=vals, scales=[0.5, 0.25], zps=[0, 1], axis=0)
        case("nv_per_channel_%s" % typ, t, dict(type="FLOAT32", shape=[2, 3], vals=[0.0] * 6), {"tolerance": 0.5, "log_if_failed": False})
    # Unquantized integer input: scale 0.
    case("nv_unquantized", dict(type="UINT8", shape=[2], vals=[1, 200]), dict(type="FLOAT32", shape=[2], vals=[0.25, -3]),
         {"tolerance": 0.5, "log_if_failed": False})
    case("nv_unquantized_check", dict(type="UINT8", shape=[2], vals=[1, 200]), dict(type="FLOAT32", shape=[2], vals=[0.0, -0.0]),
         {"tolerance": 0.5, "log_if_failed": True})
    # Constant input and constant reference.
    cin = dict(inp, const=True)
    case("nv_const_input", cin, dict(type="FLOAT32", shape=[4], vals=[0.1, 0.2, 0.3, 0.4]), {"tolerance": 0.1, "log_if_failed": False})
    case("nv_const_ref", inp, dict(type="FLOAT32", shape=[4], vals=deq, const=True), {"tolerance": 0.1, "log_if_failed": True})
    # A reference of another shape with as many elements, and a longer one.
    case("nv_ref_reshaped", inp, dict(type="FLOAT32", shape=[2, 2], vals=[1, 2, 3, 4]), {"tolerance": 0.1, "log_if_failed": False})
    case("nv_ref_longer", inp, dict(type="FLOAT32", shape=[6], vals=[1, 2, 3, 4, 5, 6]), {"tolerance": 0.1, "log_if_failed": False})
    # Scalars.
    case("nv_scalar", dict(type="UINT8", shape=[], vals=[130], scale=0.1, zp=128), dict(type="FLOAT32", shape=[], vals=[0.125]),
         {"tolerance": 0.5, "log_if_failed": True})
    case("nv_scalar_fail", dict(type="UINT8", shape=[], vals=[130], scale=0.1, zp=128), dict(type="FLOAT32", shape=[], vals=[0.3]),
         {"tolerance": 0.5, "log_if_failed": True})
    # Types TFLite refuses.
    ref4 = dict(type="FLOAT32", shape=[4], vals=[0, 0, 0, 0])
    opts = {"tolerance": 0.5, "log_if_failed": False}
    for typ in ("FLOAT32", "INT32", "INT64", "BOOL"):
        vals = [False, True, True, False] if typ == "BOOL" else [1, 2, 3, 4]
        case("nv_bad_input_%s" % typ, dict(type=typ, shape=[4], vals=vals, scale=0.5, zp=0), ref4, opts)
    for typ in ("FLOAT16", "INT8", "INT32", "FLOAT64"):
        case("nv_bad_ref_%s" % typ, inp, dict(type=typ, shape=[4], vals=[1, 2, 3, 4], scale=0.5, zp=0), opts)
    # Version 2 is not registered.
    for v in (1, 2):
        case("nv_version_%d" % v, inp, ref4, opts, version=v)


random_cases()
edge_cases()
with gzip.open(OUT, "wt") as f:
    json.dump(CASES, f, separators=(",", ":"))
fails = sum(1 for c in CASES if c.get("error"))
print("%d cases (%d failing in TFLite) -> %s" % (len(CASES), fails, OUT))
