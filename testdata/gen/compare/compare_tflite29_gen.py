#!/usr/bin/env python3
"""compare_tflite29_gen.py: regenerate compare_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that TestCompareAgainstTFLite29 compares the
compare family with: EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS,
LESS_EQUAL, LOGICAL_AND, LOGICAL_OR, LOGICAL_NOT, SELECT and SELECT_V2.

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc with model/schema/schema.fbs) run once by the runner built from
../tflite29_run.c on pseudo-random inputs: same shapes of every rank up to 6,
broadcasts up to 4 dimensions and beyond (where TFLite 2.9 aborts), empty
tensors, ties, infinities and NaNs, 8-bit inputs with equal and different
quantization (scales up to and past 1, where 2.9 aborts), the types each
kernel refuses, and every registered version plus the first unregistered one.
The file keeps the model, the inputs and TFLite's outputs, or the stage at
which TFLite failed.

usage: compare_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, math, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CODES = tflite29.builtin_codes(SCHEMA)
CASES = []

COMPARE = {"EQUAL": 3, "NOT_EQUAL": 3, "GREATER": 2, "GREATER_EQUAL": 2, "LESS": 2, "LESS_EQUAL": 2}
OPTIONS = {"EQUAL": "EqualOptions", "NOT_EQUAL": "NotEqualOptions", "GREATER": "GreaterOptions",
           "GREATER_EQUAL": "GreaterEqualOptions", "LESS": "LessOptions", "LESS_EQUAL": "LessEqualOptions",
           "LOGICAL_AND": "LogicalAndOptions", "LOGICAL_OR": "LogicalOrOptions",
           "LOGICAL_NOT": "LogicalNotOptions", "SELECT": "SelectOptions", "SELECT_V2": "SelectV2Options"}
VALUE_TYPES = ["FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16", "BOOL"]


def quant(t, is_input):
    if t.get("scale") is None:
        return None
    return {"scale": [t["scale"]], "zero_point": [t.get("zp", 0)]}


def rand_vals(typ, n, rng):
    """Values with many ties, and the extremes of each type."""
    if typ == "BOOL":
        return [rng.random() < 0.5 for _ in range(n)]
    if typ == "FLOAT32":
        pool = [0.0, -0.0, 1.5, -1.5, float("inf"), float("-inf"), float("nan"), 3.4e38, -3.4e38, 1e-45]
        return [rng.choice(pool) if rng.random() < 0.3 else float(rng.randint(-4, 4)) / 2 for _ in range(n)]
    lo, hi = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767),
              "INT32": (-2**31, 2**31 - 1), "INT64": (-2**63, 2**63 - 1)}[typ]
    return [rng.choice([lo, hi]) if rng.random() < 0.1 else
            (rng.randint(lo, hi) if rng.random() < 0.3 else rng.randint(max(lo, -3), min(hi, 3)))
            for _ in range(n)]


def tensor(typ, shape, rng, scale=None, zp=0):
    return {"type": typ, "shape": shape, "vals": rand_vals(typ, nelem(shape), rng), "scale": scale, "zp": zp}


def run_case(name, op, version, inputs, out_type, out_shape=None):
    outputs = [{"type": out_type, "shape": out_shape or []}]
    m, raw = tflite29.model(op, CODES[op], version, inputs, outputs, quant, OPTIONS[op], {})
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, m, raw)
    case = {"name": name, "inputs": [], "outputs": []}
    for t in inputs:
        case["inputs"].append({"type": t["type"], "shape": t["shape"], "const": False,
                               "scale": t.get("scale"), "zp": t.get("zp", 0),
                               "data": base64.b64encode(pack(t["type"], t["vals"])).decode()})
    if p.returncode != 0:
        case["error"] = tflite29.stage(p)
    else:
        for mo, data in outs:
            case["outputs"].append({"type": out_type, "shape": mo["shape"],
                                    "data": base64.b64encode(data).decode()})
    case["model"] = base64.b64encode(tfl).decode()
    CASES.append(case)


def rand_shape(rng, rank, lo=1, hi=4):
    return [rng.randint(lo, hi) for _ in range(rank)]


def broadcast_pair(rng, rank):
    """Two shapes that broadcast to a shape of the given rank: dimensions set
    to 1 at random and leading dimensions dropped."""
    out = rand_shape(rng, rank, 2, 4)
    a = [d if rng.random() < 0.6 else 1 for d in out]
    b = [d if rng.random() < 0.6 else 1 for d in out]
    a = a[rng.randint(0, rank):] if rng.random() < 0.3 else a
    b = b[rng.randint(0, rank):] if rng.random() < 0.3 else b
    return a, b


def shape_pairs(rng):
    """(name, shape1, shape2) for the binary ops."""
    pairs = []
    for rank in range(0, 7):
        s = rand_shape(rng, rank)
        pairs.append(("same%d" % rank, s, list(s)))
    for rank in range(1, 6):
        for k in range(3 if rank < 5 else 2):
            a, b = broadcast_pair(rng, rank)
            pairs.append(("bc%d_%d" % (rank, k), a, b))
    pairs.append(("scalar_l", [], [2, 3]))
    pairs.append(("scalar_r", [3, 1, 2], []))
    pairs.append(("rank_only", [3], [1, 3]))
    pairs.append(("empty", [0, 3], [0, 3]))
    pairs.append(("empty_bc", [2, 0, 3], [1, 1, 3]))
    pairs.append(("bad", [2, 3], [3, 2]))
    pairs.append(("bc5_scalar", [2, 1, 2, 1, 2], []))
    return pairs


def gen_compare(rng):
    for op, vmax in COMPARE.items():
        for typ in VALUE_TYPES:
            for name, a, b in shape_pairs(rng):
                version = rng.randint(1, vmax)
                s1 = s2 = None
                z1 = z2 = 0
                if typ in ("UINT8", "INT8"):
                    lo, hi = (0, 255) if typ == "UINT8" else (-128, 127)
                    s1, z1 = rng.choice([0.5, 0.05, 0.0078125, 0.9]), rng.randint(lo, hi)
                    if rng.random() < 0.4:
                        s2, z2 = s1, z1
                    else:
                        s2, z2 = rng.choice([0.5, 0.25, 0.013, 0.6, 0.003]), rng.randint(lo, hi)
                run_case("%s_%s_%s" % (op.lower(), typ.lower(), name), op, version,
                         [tensor(typ, a, rng, s1, z1), tensor(typ, b, rng, s2, z2)], "BOOL")
        # 8-bit quantization extremes: scales at and past 1, tiny (right
        # shifts past 31), absent.
        for typ in ("UINT8", "INT8"):
            lo, hi = (0, 255) if typ == "UINT8" else (-128, 127)
            for k, (s1, s2) in enumerate([(1.0, 0.5), (0.5, 2.0), (1e-9, 1e-9), (1e-9, 3e-9), (1e-6, 0.999),
                                          (None, None), (0.1, 0.1), (0.1, 0.1000001),
                                          (1e-10, 3e-10), (5e-12, 1e-12)]):
                shape = rand_shape(rng, 3)
                run_case("%s_%s_q%d" % (op.lower(), typ.lower(), k), op, 1,
                         [tensor(typ, shape, rng, s1, rng.randint(lo, hi)),
                          tensor(typ, shape, rng, s2, rng.randint(lo, hi))], "BOOL")
        # Mixed types; the first unregistered version.
        run_case("%s_mixed" % op.lower(), op, 1,
                 [tensor("INT32", [3], rng), tensor("INT64", [3], rng)], "BOOL")
        run_case("%s_v%d" % (op.lower(), vmax + 1), op, vmax + 1,
                 [tensor("FLOAT32", [3], rng), tensor("FLOAT32", [3], rng)], "BOOL")


def gen_logical(rng):
    for op in ("LOGICAL_AND", "LOGICAL_OR"):
        for name, a, b in shape_pairs(rng):
            run_case("%s_%s" % (op.lower(), name), op, 1,
                     [tensor("BOOL", a, rng), tensor("BOOL", b, rng)], "BOOL")
        run_case("%s_float" % op.lower(), op, 1,
                 [tensor("FLOAT32", [3], rng), tensor("FLOAT32", [3], rng)], "BOOL")
        run_case("%s_v2" % op.lower(), op, 2,
                 [tensor("BOOL", [3], rng), tensor("BOOL", [3], rng)], "BOOL")
    for rank in range(0, 7):
        run_case("logical_not_r%d" % rank, "LOGICAL_NOT", 1, [tensor("BOOL", rand_shape(rng, rank), rng)], "BOOL")
    run_case("logical_not_empty", "LOGICAL_NOT", 1, [tensor("BOOL", [2, 0], rng)], "BOOL")
    run_case("logical_not_float", "LOGICAL_NOT", 1, [tensor("FLOAT32", [3], rng)], "BOOL")
    run_case("logical_not_v2", "LOGICAL_NOT", 2, [tensor("BOOL", [3], rng)], "BOOL")


def select_case(name, op, version, typ, cs, xs, ys, rng, ytyp=None):
    run_case(name, op, version, [tensor("BOOL", cs, rng), tensor(typ, xs, rng), tensor(ytyp or typ, ys, rng)], typ)


def gen_select(rng):
    for typ in VALUE_TYPES:
        t = typ.lower()
        for version in (1, 2):
            for rank in range(0, 6):
                s = rand_shape(rng, rank)
                select_case("select_%s_v%d_same%d" % (t, version, rank), "SELECT", version, typ, s, s, s, rng)
            for rank in range(1, 5):
                s = rand_shape(rng, rank, 2, 4)
                select_case("select_%s_v%d_rank1_%d" % (t, version, rank), "SELECT", version, typ, s[:1], s, s, rng)
            s = rand_shape(rng, 3)
            select_case("select_%s_v%d_scalar" % (t, version), "SELECT", version, typ, [], s, s, rng)
        for rank in range(0, 7):
            s = rand_shape(rng, rank)
            select_case("select_v2_%s_same%d" % (t, rank), "SELECT_V2", 1, typ, s, s, s, rng)
        for rank in range(1, 6):
            for k in range(3 if rank < 5 else 1):
                out = rand_shape(rng, rank, 2, 4)
                shapes = []
                for _ in range(3):
                    sh = [d if rng.random() < 0.6 else 1 for d in out]
                    if rng.random() < 0.3:
                        sh = sh[rng.randint(0, rank):]
                    shapes.append(sh)
                select_case("select_v2_%s_bc%d_%d" % (t, rank, k), "SELECT_V2", 1, typ, *shapes, rng)
    # SELECT's refusals: a rank-1 condition of the wrong length, x and y
    # shaped differently, a rank-2 condition, a non-bool condition.
    select_case("select_rank1_len", "SELECT", 1, "FLOAT32", [3], [2, 3], [2, 3], rng)
    select_case("select_xy_differ", "SELECT", 1, "FLOAT32", [2], [2, 3], [2, 1], rng)
    select_case("select_rank2_cond", "SELECT", 2, "FLOAT32", [2, 1], [2, 3], [2, 3], rng)
    select_case("select_bc", "SELECT", 2, "FLOAT32", [1, 3], [2, 3], [2, 3], rng)
    select_case("select_xy_types", "SELECT", 1, "FLOAT32", [2], [2], [2], rng, ytyp="INT32")
    select_case("select_empty", "SELECT", 1, "INT32", [0], [0, 3], [0, 3], rng)
    run_case("select_cond_float", "SELECT", 1,
             [tensor("FLOAT32", [2], rng), tensor("FLOAT32", [2], rng), tensor("FLOAT32", [2], rng)], "FLOAT32")
    select_case("select_v3", "SELECT", 3, "FLOAT32", [2], [2], [2], rng)
    select_case("select_v2_bad", "SELECT_V2", 1, "FLOAT32", [2], [3], [3], rng)
    select_case("select_v2_empty", "SELECT_V2", 1, "INT8", [0, 1], [1, 3], [0, 3], rng)
    select_case("select_v2_bc5", "SELECT_V2", 1, "FLOAT32", [2, 1, 2, 1, 2], [1], [2, 1, 2, 1, 2], rng)
    select_case("select_v2_v2", "SELECT_V2", 2, "FLOAT32", [2], [2], [2], rng)


def main():
    rng = tflite29.seeded(2909)
    gen_compare(rng)
    gen_logical(rng)
    gen_select(rng)
    data = json.dumps(CASES, separators=(",", ":")).encode()
    with open(OUT, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)
    fails = sum(1 for c in CASES if "error" in c)
    print(len(CASES), "cases,", fails, "failing in TFLite, written to", OUT)


if __name__ == "__main__":
    main()
