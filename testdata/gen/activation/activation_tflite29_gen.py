#!/usr/bin/env python3
"""activation_tflite29_gen.py: regenerate activation_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that TestActivationAgainstTFLite29 compares the
activation family's ELU, GELU, LOG_SOFTMAX and LOCAL_RESPONSE_NORMALIZATION
with.

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc with model/schema/schema.fbs) run once by the runner built from
../tflite29_run.c (see its header) on pseudo-random inputs. The file keeps
the model, the inputs and TFLite's outputs, or the stage at which TFLite
failed.

usage: activation_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, math, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CODES = tflite29.builtin_codes(SCHEMA)
CASES = []
QRANGE = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767)}


def quant(t, is_input):
    if t.get("scale") is None:
        return None
    return {"scale": [t["scale"]], "zero_point": [t.get("zp", 0)]}


def run_case(name, op, version, inp, out, options_type=None, options=None):
    """Runs op on the one input inp (dict type, shape, vals, scale, zp) with
    the output out (dict type, scale, zp) and records the case."""
    model, raw = tflite29.model(op, CODES[op], version, [inp], [out], quant, options_type, options)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw)
    case = {"name": name, "model": base64.b64encode(tfl).decode(), "outputs": [],
            "inputs": [{"type": inp["type"], "shape": inp["shape"], "scale": inp.get("scale"), "zp": inp.get("zp", 0),
                        "data": base64.b64encode(pack(inp["type"], inp["vals"])).decode()}]}
    if p.returncode != 0:
        # 1: the interpreter refused the model (an unregistered version);
        # anything else but 3 and 4 is a crash, with no answer to keep.
        case["crash"] = p.returncode not in (1, 3, 4)
        case["error"] = tflite29.stage(p)
    else:
        for mo, data in outs:
            case["outputs"].append({"type": out["type"], "shape": mo["shape"], "scale": out.get("scale"),
                                    "zp": out.get("zp", 0), "data": base64.b64encode(data).decode()})
    CASES.append(case)
    return case


def rand_shape(rng, rank=None, maxd=6):
    rank = rng.randint(1, 4) if rank is None else rank
    return [rng.randint(1, maxd) for _ in range(rank)]


def rand_q(rng, typ):
    lo, hi = QRANGE[typ]
    return rng.choice([rng.uniform(0.002, 0.05), rng.uniform(0.05, 0.5), rng.uniform(1e-4, 2e-3)]), rng.randint(lo, hi)


def qvals(rng, typ, n):
    lo, hi = QRANGE[typ]
    return [rng.randint(lo, hi) for _ in range(n)]


def fvals(rng, n, spread=4.0):
    return [rng.uniform(-spread, spread) for _ in range(n)]


def gen_unary(rng, op, qtypes, opts):
    """ELU and GELU: element-wise, float32 plus 8-bit types through a table."""
    otype, variants = opts
    for v_i, o in enumerate(variants):
        for trial in range(6):
            shape = rand_shape(rng)
            n = nelem(shape)
            vals = fvals(rng, n, [1.0, 4.0, 12.0][trial % 3])
            if trial == 0:
                vals = ([0.0, -0.0, 1e-7, -1e-7, -20.0, -88.0, -104.0, 30.0, -1e-30, 3.0, -3.0, 0.5]
                        + vals)[:n] if n >= 12 else vals
            run_case("%s_f32_%d_%d" % (op, v_i, trial), op, 1, dict(type="FLOAT32", shape=shape, vals=vals),
                     dict(type="FLOAT32"), otype, o)
        for typ in qtypes:
            for trial in range(10):
                shape = rand_shape(rng)
                sc, zp = rand_q(rng, typ)
                osc, ozp = rand_q(rng, typ)
                if trial == 0:
                    osc, ozp = sc, zp
                if trial == 1:
                    shape, sc, osc = [256], rng.uniform(0.01, 0.1), rng.uniform(0.005, 0.05)
                vals = qvals(rng, typ, nelem(shape))
                if trial == 1:
                    lo, _ = QRANGE[typ]
                    vals = [lo + i for i in range(256)]
                run_case("%s_%s_%d_%d" % (op, typ, v_i, trial), op, 2 if op == "GELU" else 1,
                         dict(type=typ, shape=shape, vals=vals, scale=sc, zp=zp), dict(type=typ, scale=osc, zp=ozp),
                         otype, o)


def gen_elu_gelu(rng):
    gen_unary(rng, "ELU", ["INT8"], (None, [None]))
    gen_unary(rng, "GELU", ["INT8", "UINT8"], ("GeluOptions", [{"approximate": False}, {"approximate": True}]))
    # GELU without options: approximate defaults to false.
    run_case("GELU_noopts", "GELU", 1, dict(type="FLOAT32", shape=[5], vals=[-2.0, -0.5, 0.0, 0.5, 2.0]),
             dict(type="FLOAT32"))
    # Types TFLite refuses, empty tensors, versions.
    for op, typ, ver in [("ELU", "UINT8", 1), ("ELU", "INT16", 1), ("GELU", "INT16", 2), ("ELU", "INT32", 1),
                         ("GELU", "INT32", 1)]:
        sc = 0.01 if typ != "INT32" else None
        run_case("%s_refuse_%s" % (op, typ), op, ver, dict(type=typ, shape=[3], vals=[1, 2, 3], scale=sc, zp=0),
                 dict(type=typ, scale=sc, zp=0))
    run_case("ELU_mixed", "ELU", 1, dict(type="INT8", shape=[3], vals=[1, 2, 3], scale=0.1, zp=0),
             dict(type="UINT8", scale=0.1, zp=0))
    run_case("GELU_mixed", "GELU", 1, dict(type="FLOAT32", shape=[3], vals=[1, 2, 3]), dict(type="INT8", scale=0.1, zp=0))
    for op in ["ELU", "GELU"]:
        run_case("%s_empty" % op, op, 1, dict(type="FLOAT32", shape=[2, 0, 3], vals=[]), dict(type="FLOAT32"))
        run_case("%s_scalar" % op, op, 1, dict(type="FLOAT32", shape=[], vals=[-1.5]), dict(type="FLOAT32"))
    for op, vers in [("ELU", [1, 2, 3]), ("GELU", [1, 2, 3])]:
        for v in vers:
            run_case("%s_ver%d" % (op, v), op, v, dict(type="FLOAT32", shape=[2], vals=[-1.0, 1.0]), dict(type="FLOAT32"))
            run_case("%s_ver%d_i8" % (op, v), op, v, dict(type="INT8", shape=[2], vals=[-100, 100], scale=0.05, zp=3),
                     dict(type="INT8", scale=0.04, zp=-5))


def gen_log_softmax(rng):
    op = "LOG_SOFTMAX"
    for trial in range(14):
        shape = rand_shape(rng, maxd=9)
        if trial == 0:
            shape = [1, 1001]
        if trial == 1:
            shape = [3, 1]
        vals = fvals(rng, nelem(shape), [1.0, 5.0, 30.0][trial % 3])
        run_case("LSM_f32_%d" % trial, op, 1, dict(type="FLOAT32", shape=shape, vals=vals), dict(type="FLOAT32"))
    out_q = {"UINT8": (16.0 / 256, 255), "INT8": (16.0 / 256, 127)}
    for typ in ["UINT8", "INT8"]:
        for trial in range(40):
            shape = rand_shape(rng, maxd=9)
            if trial in (0, 1):
                shape = [1, 1000 + trial * 3000]
            if trial == 2:
                shape = [2, 1]
            sc = [0.001, 0.01, 0.05, 0.1, 0.3, 1.0, 3.0, 20.0, 300.0][trial % 9] * rng.uniform(0.7, 1.4)
            _, zp = rand_q(rng, typ)
            vals = qvals(rng, typ, nelem(shape))
            if trial % 5 == 3:
                # Rows of equal values and of a few values.
                lo, hi = QRANGE[typ]
                vals = [rng.choice([lo, hi, zp, (lo + hi) // 2]) for _ in vals]
            osc, ozp = out_q[typ]
            run_case("LSM_%s_%d" % (typ, trial), op, 2 if typ == "INT8" else 1,
                     dict(type=typ, shape=shape, vals=vals, scale=sc, zp=zp), dict(type=typ, scale=osc, zp=ozp))
    # Every difference from the row's max once, after m copies of the max:
    # where the INT8 kernel's cut-off for outputs at the bottom lies.
    for typ in ["UINT8", "INT8"]:
        lo, hi = QRANGE[typ]
        for sc in [0.05, 0.13, 0.2, 0.3, 0.5, 1.0, 2.5, 40.0]:
            for m in (1, 60):
                vals = [hi] * m + list(range(lo, hi))
                osc, ozp = out_q[typ]
                run_case("LSM_sweep_%s_%g_%d" % (typ, sc, m), op, 2 if typ == "INT8" else 1,
                         dict(type=typ, shape=[1, len(vals)], vals=vals, scale=sc, zp=0), dict(type=typ, scale=osc, zp=ozp))
    # Output quantization TFLite refuses, types it refuses, versions.
    for typ, osc, ozp in [("UINT8", 16.0 / 256, 254), ("UINT8", 0.0626, 255), ("INT8", 16.0 / 256, -128),
                          ("INT8", 1.0 / 256, 127), ("INT16", 16.0 / 256, 0)]:
        run_case("LSM_refuse_%s_%g_%d" % (typ, osc, ozp), op, 2, dict(type=typ, shape=[2, 3], vals=[1, 2, 3, 4, 5, 6], scale=0.1, zp=0),
                 dict(type=typ, scale=osc, zp=ozp))
    run_case("LSM_refuse_i32", op, 1, dict(type="INT32", shape=[3], vals=[1, 2, 3]), dict(type="INT32"))
    run_case("LSM_empty_rows", op, 1, dict(type="FLOAT32", shape=[0, 4], vals=[]), dict(type="FLOAT32"))
    run_case("LSM_scalar", op, 1, dict(type="FLOAT32", shape=[], vals=[2.0]), dict(type="FLOAT32"))
    for v in (1, 2, 3):
        run_case("LSM_ver%d" % v, op, v, dict(type="FLOAT32", shape=[3], vals=[1.0, 2.0, 3.0]), dict(type="FLOAT32"))
        run_case("LSM_ver%d_i8" % v, op, v, dict(type="INT8", shape=[3], vals=[1, 2, 3], scale=0.5, zp=0),
                 dict(type="INT8", scale=16.0 / 256, zp=127))


def gen_lrn(rng):
    op = "LOCAL_RESPONSE_NORMALIZATION"
    opt = "LocalResponseNormalizationOptions"
    for trial in range(40):
        shape = [rng.randint(1, 2), rng.randint(1, 4), rng.randint(1, 4), rng.choice([1, 2, 5, 8, 13, 32])]
        radius = rng.choice([0, 1, 2, 3, 5, 20])
        beta = [0.75, 1.0, 0.5, 0.3, 2.0, 0.0][trial % 6]
        bias = rng.choice([1.0, 2.0, 0.5, 1e-3])
        alpha = rng.choice([1e-4, 0.01, 0.5, 1.0, 2.0])
        vals = fvals(rng, nelem(shape), [1.0, 5.0, 0.1][trial % 3])
        run_case("LRN_%d" % trial, op, 1, dict(type="FLOAT32", shape=shape, vals=vals), dict(type="FLOAT32"), opt,
                 dict(radius=radius, bias=bias, alpha=alpha, beta=beta))
    o = dict(radius=2, bias=1.0, alpha=1e-4, beta=0.75)
    run_case("LRN_noopts", op, 1, dict(type="FLOAT32", shape=[1, 1, 1, 3], vals=[1.0, 2.0, 3.0]), dict(type="FLOAT32"))
    for shape in ([1, 2, 3], [1, 1, 2, 2, 3]):
        run_case("LRN_rank%d" % len(shape), op, 1, dict(type="FLOAT32", shape=shape, vals=fvals(rng, nelem(shape))),
                 dict(type="FLOAT32"), opt, o)
    for typ in ("UINT8", "INT8"):
        run_case("LRN_%s" % typ, op, 1, dict(type=typ, shape=[1, 1, 1, 3], vals=[1, 2, 3], scale=0.1, zp=0),
                 dict(type=typ, scale=0.1, zp=0), opt, o)
    run_case("LRN_empty", op, 1, dict(type="FLOAT32", shape=[1, 0, 2, 3], vals=[]), dict(type="FLOAT32"), opt, o)
    for v in (1, 2):
        run_case("LRN_ver%d" % v, op, v, dict(type="FLOAT32", shape=[1, 1, 1, 3], vals=[1.0, 2.0, 3.0]),
                 dict(type="FLOAT32"), opt, o)


def main():
    rng = tflite29.seeded(2029)
    gen_elu_gelu(rng)
    gen_log_softmax(rng)
    gen_lrn(rng)
    keep = []
    for c in CASES:
        if c.pop("crash", False):
            print("dropped (TFLite crashed):", c["name"], file=sys.stderr)
            continue
        keep.append(c)
    data = json.dumps(keep, separators=(",", ":")).encode()
    with open(OUT, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)
    print(len(keep), "of", len(CASES), "cases written to", OUT)
    for c in keep:
        if c.get("error") or "_ver" in c["name"] or "refuse" in c["name"]:
            print("  %-28s %s" % (c["name"], c.get("error", "ok")))


if __name__ == "__main__":
    main()
