#!/usr/bin/env python3
"""elementwise_tflite29_gen.py: regenerate elementwise_tflite29.json.gz, the
real TensorFlow Lite 2.9 outputs that TestElementwiseAgainstTFLite29 compares
the elementwise family with (LOG, SIN, COS, CEIL, ROUND, SQUARE, ZEROS_LIKE,
POW, FLOOR_MOD and ADD_N).

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc with model/schema/schema.fbs) run once by the runner built from
../tflite29_run.c on pseudo-random inputs and edge values. Every op is tried
on every tensor type, so the file records which types TFLite 2.9 refuses,
and at its registered version and the one above, so it records the versions
TFLite 2.9 registers. The file keeps the model, the inputs and TFLite's
outputs, or the stage at which TFLite failed.

usage: elementwise_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CASES = []
codes = tflite29.builtin_codes(SCHEMA)

TYPES = ["FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16", "BOOL"]
UNARY = ["LOG", "SIN", "COS", "CEIL", "ROUND", "SQUARE", "ZEROS_LIKE"]
BINARY = ["FLOOR_MOD", "POW"]
INF, NAN = float("inf"), float("nan")
DENORM = 1e-40  # a float32 denormal: TFLite 2.9 runs with DAZ/FTZ set

# Edge values of each float op's input.
FLOAT_EDGES = {
    "LOG": [0.0, -0.0, -1.0, 1.0, INF, -INF, NAN, DENORM, -DENORM, 1.1754944e-38, 3.4e38, 1e-30, 0.5, 2.0, 1e-7],
    "SIN": [0.0, -0.0, INF, -INF, NAN, DENORM, 3.14159265, 1e5, -1e5, 1e10, 1e30, -3.4e38, 1e-7, 100.0],
    "COS": [0.0, -0.0, INF, -INF, NAN, DENORM, 1.5707964, 1e5, -1e5, 1e10, 1e30, 3.4e38, 1e-7, 100.0],
    "CEIL": [0.0, -0.0, INF, -INF, NAN, DENORM, -DENORM, 0.5, -0.5, 1e-30, -1e-30, 8388607.5, -8388607.5, 1e30, 2.0000002],
    "ROUND": [0.0, -0.0, INF, -INF, NAN, DENORM, -DENORM, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5, 0.49999997, -0.49999997,
              8388607.5, -8388607.5, 8388609.0, 1e30, -1e30, 4194303.5, 2147483648.0 + 0.0, 3e9],
    "SQUARE": [0.0, -0.0, INF, -INF, NAN, DENORM, 1e-20, 1e20, 1e19, -1e19, 1.8e19, 3.0],
    "ZEROS_LIKE": [0.0, -0.0, INF, NAN, 1.0],
}


def rand_vals(typ, n, rng, lo=None, hi=None):
    if typ == "FLOAT32":
        return [rng.uniform(-3 if lo is None else lo, 3 if hi is None else hi) for _ in range(n)]
    if typ == "BOOL":
        return [rng.random() < 0.5 for _ in range(n)]
    rngs = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767), "INT32": (-1000, 1000), "INT64": (-1000, 1000)}
    a, b = rngs[typ]
    return [rng.randint(a if lo is None else lo, b if hi is None else hi) for _ in range(n)]


def quant(t, is_input):
    if t.get("scale") is None:
        return None
    return {"scale": [t["scale"]], "zero_point": [t.get("zp", 0)]}


def run_case(name, op, version, inputs, outputs):
    """inputs: dicts of type, shape, vals (and scale, zp); outputs: dicts of type (and scale, zp)."""
    model, raw_in = tflite29.model(op, codes[op], version, inputs, outputs, quant)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw_in)
    case = {"name": name, "inputs": [], "outputs": []}
    for t in inputs:
        case["inputs"].append({"type": t["type"], "shape": t["shape"], "const": bool(t.get("const")),
                               "scale": t.get("scale"), "zp": t.get("zp", 0),
                               "data": base64.b64encode(pack(t["type"], t["vals"])).decode()})
    if p.returncode != 0:
        case["error"] = ((p.stderr + p.stdout).strip() or "crash rc=%d" % p.returncode)[-300:]
        case["error_stage"] = tflite29.stage(p)
    else:
        for o, (mo, data) in zip(outputs, outs):
            case["outputs"].append({"type": o["type"], "shape": mo["shape"], "scale": o.get("scale"), "zp": o.get("zp", 0),
                                    "data": base64.b64encode(data).decode()})
    case["model"] = base64.b64encode(tfl).decode()
    CASES.append(case)
    return case


def rand_shape(rng, rank=None):
    rank = rng.randint(0, 4) if rank is None else rank
    return [rng.randint(1, 4) for _ in range(rank)]


def qparams(t, rng):
    """Quantization for the 8/16-bit types (to see whether TFLite takes them)."""
    return {"UINT8": (0.05, 128), "INT8": (0.05, 3), "INT16": (0.001, 0)}.get(t, (None, 0))


def gen_unary(rng):
    for op in UNARY:
        for t in TYPES:
            sc, zp = qparams(t, rng)
            for trial in range(6 if t == "FLOAT32" else 2):
                shape = rand_shape(rng)
                if trial == 4:
                    shape = [2, 0, 3]  # empty
                lo, hi = (0.01, 50) if op == "LOG" and trial % 2 == 0 else (None, None)
                if op in ("SIN", "COS") and trial == 3:
                    lo, hi = -1000, 1000
                if t != "FLOAT32":
                    lo, hi = None, None
                vals = rand_vals(t, nelem(shape), rng, lo, hi)
                run_case("u_%s_%s_%d" % (op, t, trial), op, 1,
                         [dict(type=t, shape=shape, vals=vals, scale=sc, zp=zp)], [dict(type=t, scale=sc, zp=zp)])
        # Magnitudes across float32's range, both signs.
        wide = [rng.choice([-1, 1]) * 10 ** rng.uniform(-37, 38) for _ in range(64)]
        if op == "LOG":
            wide = [abs(v) for v in wide]
        run_case("u_%s_wide" % op, op, 1, [dict(type="FLOAT32", shape=[8, 8], vals=wide)], [dict(type="FLOAT32")])
        e = FLOAT_EDGES[op]
        run_case("u_%s_edges" % op, op, 1, [dict(type="FLOAT32", shape=[len(e)], vals=e)], [dict(type="FLOAT32")])
        # ROUND's ties across a range, and the other rounding ops on halves.
        if op in ("ROUND", "CEIL"):
            v = [k / 2.0 for k in range(-40, 41)] + [k / 4.0 + 1e-3 for k in range(-20, 20)]
            run_case("u_%s_halves" % op, op, 1, [dict(type="FLOAT32", shape=[len(v)], vals=v)], [dict(type="FLOAT32")])
        # A type mismatch between the input and the output.
        run_case("u_%s_outtype" % op, op, 1, [dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0])], [dict(type="INT32")])


def bcast_shapes(rng, trial):
    """Pairs of shapes: equal, broadcasting in up to 4 dimensions, and beyond."""
    if trial == 0:
        s = rand_shape(rng)
        return s, list(s)
    if trial == 1:
        return rand_shape(rng, 4), []
    if trial == 2:
        return [], rand_shape(rng, 3)
    if trial == 3:
        return [2, 1, 3], [4, 1]
    if trial == 4:
        return [1, 3, 1, 2], [2, 3, 4, 1]
    if trial == 5:
        return [2, 0, 3], [1, 3]
    if trial == 6:
        return [2, 2, 1, 3, 2], [2, 2, 1, 3, 2]  # 5D, no broadcast
    if trial == 7:
        return [3], [2, 3]
    if trial == 8:
        return [2, 3], [3, 2]  # not broadcastable
    return [2, 1, 1, 3, 2], [2, 1, 2]  # a 5D broadcast


def gen_binary(rng):
    for op in BINARY:
        for t in TYPES:
            sc, zp = qparams(t, rng)
            for trial in range(10 if t in ("FLOAT32", "INT32", "INT64") else 1):
                a, b = bcast_shapes(rng, trial)
                if op == "POW":
                    if t == "FLOAT32":
                        x = rand_vals(t, nelem(a), rng, 0, 4)
                        y = rand_vals(t, nelem(b), rng, -3, 3)
                    elif t in ("BOOL", "UINT8"):
                        x, y = rand_vals(t, nelem(a), rng), rand_vals(t, nelem(b), rng)
                    else:
                        x = rand_vals(t, nelem(a), rng, -6, 6)
                        y = rand_vals(t, nelem(b), rng, 0, 9)
                else:
                    x = rand_vals(t, nelem(a), rng, -100, 100) if t not in ("BOOL", "UINT8") else rand_vals(t, nelem(a), rng)
                    y = rand_vals(t, nelem(b), rng, -9, 9) if t not in ("BOOL", "UINT8") else rand_vals(t, nelem(b), rng)
                    if t not in ("FLOAT32", "BOOL"):
                        y = [v if v != 0 else 3 for v in y]
                run_case("b_%s_%s_%d" % (op, t, trial), op, 1,
                         [dict(type=t, shape=a, vals=x, scale=sc, zp=zp), dict(type=t, shape=b, vals=y, scale=sc, zp=zp)],
                         [dict(type=t, scale=sc, zp=zp)])
        run_case("b_%s_mixed" % op, op, 1, [dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0]), dict(type="INT32", shape=[2], vals=[1, 2])],
                 [dict(type="FLOAT32")])
        run_case("b_%s_outtype" % op, op, 1, [dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0]), dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0])],
                 [dict(type="INT32")])
    # FLOOR_MOD: signs, zero divisors, extremes.
    xs = [7, -7, 7, -7, 0, 6, -6, 2147483647, -2147483648, -2147483648, 5, -1]
    ys = [3, 3, -3, -3, 5, 3, -3, 2, 3, 2147483647, 2147483647, 2147483647]
    run_case("fm_int32_signs", "FLOOR_MOD", 1, [dict(type="INT32", shape=[len(xs)], vals=xs), dict(type="INT32", shape=[len(ys)], vals=ys)], [dict(type="INT32")])
    xl = xs + [-(1 << 63), (1 << 63) - 1, 1 << 40]
    yl = ys + [7, -(1 << 62), -3]
    run_case("fm_int64_signs", "FLOOR_MOD", 1, [dict(type="INT64", shape=[len(xl)], vals=xl), dict(type="INT64", shape=[len(yl)], vals=yl)], [dict(type="INT64")])
    for t in ("INT32", "INT64"):
        run_case("fm_%s_zero" % t, "FLOOR_MOD", 1, [dict(type=t, shape=[3], vals=[1, 2, 3]), dict(type=t, shape=[3], vals=[1, 0, 3])], [dict(type=t)])
        run_case("fm_%s_zero_bcast" % t, "FLOOR_MOD", 1, [dict(type=t, shape=[2, 3], vals=[1, 2, 3, 4, 5, 6]), dict(type=t, shape=[1], vals=[0])], [dict(type=t)])
    fx = [7.5, -7.5, 7.5, -7.5, 0.0, -0.0, 1.0, 1.0, INF, 5.0, NAN, 1.0, 1e30, -1e30, 6.0, -6.0, 1e-3, DENORM, 1.0, -1.0]
    fy = [2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 0.0, -0.0, 2.0, INF, 2.0, NAN, 7.0, 7.0, 3.0, 3.0, -INF, 1.0, DENORM, 1e-38]
    run_case("fm_float_edges", "FLOOR_MOD", 1, [dict(type="FLOAT32", shape=[len(fx)], vals=fx), dict(type="FLOAT32", shape=[len(fy)], vals=fy)], [dict(type="FLOAT32")])
    # The dilated-convolution pattern: a shape vector mod the block size.
    run_case("fm_dilation", "FLOOR_MOD", 1, [dict(type="INT32", shape=[2], vals=[65, 33]), dict(type="INT32", shape=[2], vals=[4, 4])], [dict(type="INT32")])
    # POW: negative exponents (refused for int32), overflow, special values.
    run_case("pow_int32_neg", "POW", 1, [dict(type="INT32", shape=[3], vals=[2, 3, 4]), dict(type="INT32", shape=[3], vals=[1, -1, 2])], [dict(type="INT32")])
    px = [2, -2, 3, 46341, -46341, 0, 0, -1, -1, 10, 2, 7]
    py = [30, 31, 20, 2, 2, 0, 5, 3, 4, 10, 31, 11]
    run_case("pow_int32_edges", "POW", 1, [dict(type="INT32", shape=[len(px)], vals=px), dict(type="INT32", shape=[len(py)], vals=py)], [dict(type="INT32")])
    fx = [0.0, -0.0, 0.0, -0.0, -8.0, -8.0, NAN, 1.0, -1.0, 2.0, 10.0, 0.5, INF, -INF, -INF, 2.0, DENORM, DENORM, 1e-20, 3.0]
    fy = [-1.0, -1.0, 0.0, 3.0, 1.0 / 3, 3.0, 0.0, NAN, INF, 128.0, -50.0, -INF, -2.0, 3.0, 2.0, 0.5, 0.5, 1.0, 2.0, 1e-40]
    # Negative bases with integral exponents, and wide magnitudes.
    nx = [rng.uniform(-4, 0) for _ in range(24)] + [10 ** rng.uniform(-20, 20) for _ in range(24)]
    ny = [float(rng.randint(-6, 6)) for _ in range(24)] + [rng.uniform(-2, 2) for _ in range(24)]
    run_case("pow_float_wide", "POW", 1, [dict(type="FLOAT32", shape=[48], vals=nx), dict(type="FLOAT32", shape=[48], vals=ny)], [dict(type="FLOAT32")])
    run_case("pow_float_edges", "POW", 1, [dict(type="FLOAT32", shape=[len(fx)], vals=fx), dict(type="FLOAT32", shape=[len(fy)], vals=fy)], [dict(type="FLOAT32")])


def gen_add_n(rng):
    for t in TYPES:
        for trial in range(6 if t in ("FLOAT32", "INT32") else 1):
            n = [2, 3, 5, 2, 4, 8][trial]
            shape = rand_shape(rng) if trial != 3 else [0, 4]
            ins = [dict(type=t, shape=shape, vals=rand_vals(t, nelem(shape), rng)) for _ in range(n)]
            run_case("an_%s_%d" % (t, trial), "ADD_N", 1, ins, [dict(type=t)])
    big = [2147483647, -2147483648, 2000000000]
    run_case("an_int32_wrap", "ADD_N", 1, [dict(type="INT32", shape=[3], vals=big), dict(type="INT32", shape=[3], vals=[1, -1, 2000000000])], [dict(type="INT32")])
    run_case("an_float_edges", "ADD_N", 1, [dict(type="FLOAT32", shape=[4], vals=[INF, 3e38, NAN, -0.0]),
                                            dict(type="FLOAT32", shape=[4], vals=[-INF, 3e38, 1.0, -0.0])], [dict(type="FLOAT32")])
    # How the float sum saturates: each partial sum, or the total?
    for k, cols in enumerate([[3e38, 3e38, -3e38], [-3e38, -3e38, 3e38], [INF, 1.0, -3e38], [1.0, INF, NAN], [NAN, INF, -INF]]):
        ins = [dict(type="FLOAT32", shape=[1], vals=[v]) for v in cols]
        run_case("an_float_sat_%d" % k, "ADD_N", 1, ins, [dict(type="FLOAT32")])
    run_case("an_one_input", "ADD_N", 1, [dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0])], [dict(type="FLOAT32")])
    run_case("an_shapes_differ", "ADD_N", 1, [dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0]), dict(type="FLOAT32", shape=[1], vals=[1.0])], [dict(type="FLOAT32")])
    run_case("an_shapes_bcast", "ADD_N", 1, [dict(type="FLOAT32", shape=[2, 2], vals=[1.0, 2.0, 3, 4]), dict(type="FLOAT32", shape=[2], vals=[1.0, 5.0])], [dict(type="FLOAT32")])
    run_case("an_types_differ", "ADD_N", 1, [dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0]), dict(type="INT32", shape=[2], vals=[1, 2])], [dict(type="FLOAT32")])


def gen_versions():
    """Each op at version 1 and 2: TFLite 2.9 registers only version 1."""
    x = dict(type="FLOAT32", shape=[2, 2], vals=[1.0, 2.0, 3.0, 4.0])
    for op in UNARY + BINARY + ["ADD_N"]:
        ins = [x] if op in UNARY else [x, x]
        for v in (1, 2):
            run_case("ver_%s_%d" % (op, v), op, v, ins, [dict(type="FLOAT32")])


def main():
    rng = tflite29.seeded(2909)
    gen_unary(rng)
    gen_binary(rng)
    gen_add_n(rng)
    gen_versions()
    keep, crashes, retyped = [], [], []
    for c in CASES:
        err = c.get("error")
        if err is not None and err.startswith("crash"):
            # TFLite aborted (a broadcast beyond its 4D kernels): no oracle.
            crashes.append(c["name"])
            continue
        if err is None and c["name"].endswith("_outtype"):
            # TFLite retypes an output whose declared type differs from the
            # input's; the family refuses such a model instead.
            retyped.append(c["name"])
            continue
        if err is not None:
            c["error"] = c.pop("error_stage")
        keep.append(c)
    data = json.dumps(keep, separators=(",", ":")).encode()
    with open(OUT, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)
    print(len(keep), "of", len(CASES), "cases written to", OUT)
    print("left out, TFLite crashed:", " ".join(crashes) or "none")
    print("left out, TFLite retyped the output:", " ".join(retyped) or "none")


if __name__ == "__main__":
    main()
