#!/usr/bin/env python3
"""strings_tflite29_gen.py: regenerate strings_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that TestStringsAgainstTFLite29 compares the
kernels that take STRING tensors with: EQUAL and NOT_EQUAL on strings, and
the ops that move string elements (GATHER, GATHER_ND, TILE, FILL, SLICE,
STRIDED_SLICE, RESHAPE, SQUEEZE, EXPAND_DIMS) and SHAPE and RANK, which read only
a STRING input's shape. Every op is tried with STRING at each
version TFLite registers, and so are ops whose kernels TFLite 2.9 may
refuse STRING for (CONCATENATION, TRANSPOSE, PACK, SPLIT, ...): the file
records which accept it as well as what they compute.

STRING inputs and outputs are TFLite's string buffers; the runner (built
from ../tflite29_run.c) takes a string input's buffer with its size first.

usage: strings_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CASES = []
codes = tflite29.builtin_codes(SCHEMA)
WORDS = ["", "a", "bb", "hello", "wörld", "日本語", "x\0y", "tab\there", "a" * 40, "Z"]


def rand_strings(n, rng):
    return [rng.choice(WORDS) + (str(rng.randint(0, 9)) if rng.random() < 0.3 else "") for _ in range(n)]


def T(typ, shape, vals, const=False):
    return dict(type=typ, shape=shape, vals=vals, const=const)


def S(shape, rng, const=False):
    return T("STRING", shape, rand_strings(nelem(shape), rng), const)


def run_case(name, op, version, inputs, outputs, options_type=None, options=None):
    model, raw_in = tflite29.model(op, codes[op], version, inputs, outputs, lambda t, i: None, options_type, options)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw_in)
    case = {"name": name, "inputs": [], "outputs": []}
    for t in inputs:
        case["inputs"].append({"type": t["type"], "shape": t["shape"], "const": bool(t.get("const")),
                               "data": base64.b64encode(pack(t["type"], t["vals"])).decode()})
    if p.returncode != 0:
        case["error"] = ((p.stderr + p.stdout).strip() or "crash rc=%d" % p.returncode)[-300:]
        case["error_stage"] = tflite29.stage(p)
    else:
        for o, (mo, data) in zip(outputs, outs):
            case["outputs"].append({"type": o["type"], "shape": mo["shape"], "data": base64.b64encode(data).decode()})
    case["model"] = base64.b64encode(tfl).decode()
    CASES.append(case)
    return case


def rshape(rng, nd, lo=1, hi=4):
    return [rng.randint(lo, hi) for _ in range(nd)]


def gen_compare(rng):
    for op in ("EQUAL", "NOT_EQUAL", "GREATER", "LESS"):
        for v in (1, 2, 3, 4):
            for trial in range(3 if v == 3 and op in ("EQUAL", "NOT_EQUAL") else 1):
                nd = rng.randint(0, 4)
                a = rshape(rng, nd)
                b = [d if rng.random() < 0.6 else 1 for d in a][rng.randint(0, nd):] if trial else list(a)
                va = rand_strings(nelem(a), rng)
                # Some equal pairs, so both answers show up.
                vb = [rng.choice(va) if va and rng.random() < 0.5 else w for w in rand_strings(nelem(b), rng)]
                run_case("cmp_%s_v%d_%d" % (op, v, trial), op, v,
                         [T("STRING", a, va, trial == 2), T("STRING", b, vb)], [dict(type="BOOL")])


def gen_gather(rng):
    for v in range(1, 6):
        for trial in range(3):
            nd = rng.randint(1, 3)
            shape = rshape(rng, nd)
            axis = rng.randint(0, nd - 1) if trial else 0
            it = "INT64" if trial == 1 else "INT32"
            ishape = rshape(rng, rng.randint(0, 2))
            idx = [rng.randint(0, shape[axis] - 1) for _ in range(nelem(ishape))]
            run_case("gather_v%d_%d" % (v, trial), "GATHER", v, [S(shape, rng, trial == 2), T(it, ishape, idx)],
                     [dict(type="STRING")], "GatherOptions", {"axis": axis})


def gen_gather_nd(rng):
    for v in range(1, 4):
        for trial in range(3):
            shape = rshape(rng, rng.randint(1, 3))
            k = rng.randint(1, len(shape))
            n = rng.randint(1, 3)
            idx = []
            for _ in range(n):
                idx += [rng.randint(0, shape[d] - 1) for d in range(k)]
            it = "INT64" if trial == 1 else "INT32"
            run_case("gnd_v%d_%d" % (v, trial), "GATHER_ND", v, [S(shape, rng), T(it, [n, k], idx)], [dict(type="STRING")])


def gen_tile(rng):
    for v in range(1, 4):
        for trial in range(3):
            shape = rshape(rng, rng.randint(1, 3), hi=3)
            mult = [rng.randint(0 if trial == 2 else 1, 3) for _ in shape]
            mt = "INT64" if trial == 1 else "INT32"
            run_case("tile_v%d_%d" % (v, trial), "TILE", v, [S(shape, rng), T(mt, [len(shape)], mult, True)], [dict(type="STRING")])


def gen_fill(rng):
    for v in range(1, 4):
        for trial in range(3):
            dims = rshape(rng, rng.randint(0, 3), lo=0 if trial == 2 else 1)
            dt = "INT64" if trial == 1 else "INT32"
            run_case("fill_v%d_%d" % (v, trial), "FILL", v, [T(dt, [len(dims)], dims, True), S([], rng)], [dict(type="STRING")])


def gen_slice(rng):
    for v in range(1, 6):
        for trial in range(3):
            shape = rshape(rng, rng.randint(1, 4))
            begin = [rng.randint(0, d - 1) for d in shape]
            size = [rng.randint(1, d - b) if rng.random() < 0.7 else -1 for d, b in zip(shape, begin)]
            bt = "INT64" if trial == 1 else "INT32"
            run_case("slice_v%d_%d" % (v, trial), "SLICE", v,
                     [S(shape, rng), T(bt, [len(shape)], begin, True), T(bt, [len(shape)], size, True)], [dict(type="STRING")])


def gen_strided_slice(rng):
    for v in range(1, 7):
        for trial in range(3):
            shape = rshape(rng, rng.randint(1, 4))
            nd = len(shape)
            begin = [rng.randint(-d, d - 1) for d in shape]
            end = [rng.randint(-d, d) for d in shape]
            strides = [rng.choice([1, 2, -1]) for _ in shape]
            opts = {"begin_mask": rng.randint(0, 2**nd - 1), "end_mask": rng.randint(0, 2**nd - 1)}
            if trial == 2:
                opts["shrink_axis_mask"] = 1
                begin[0], end[0], strides[0] = 0, 1, 1
            run_case("ss_v%d_%d" % (v, trial), "STRIDED_SLICE", v,
                     [S(shape, rng), T("INT32", [nd], begin, True), T("INT32", [nd], end, True), T("INT32", [nd], strides, True)],
                     [dict(type="STRING")], "StridedSliceOptions", opts)


def gen_reshape_family(rng):
    for trial in range(3):
        shape = rshape(rng, rng.randint(1, 3))
        n = nelem(shape)
        ns = [n] if trial == 0 else [1, n] if trial == 1 else [-1]
        run_case("reshape_%d" % trial, "RESHAPE", 1, [S(shape, rng), T("INT32", [len(ns)], ns, True)], [dict(type="STRING")],
                 "ReshapeOptions", {"new_shape": ns})
    for v in (1, 2):
        shape = [1, 3, 1, 2]
        run_case("squeeze_v%d" % v, "SQUEEZE", v, [S(shape, rng)], [dict(type="STRING")], "SqueezeOptions",
                 {"squeeze_dims": [0] if v == 2 else []})
    for axis in (0, -1, 1):
        run_case("expand_dims_%d" % axis, "EXPAND_DIMS", 1, [S([2, 3], rng), T("INT32", [], [axis], True)], [dict(type="STRING")])


def gen_refused(rng):
    """STRING for ops whose TFLite 2.9 kernels may refuse it."""
    s = lambda: S([2, 3], rng)
    out = [dict(type="STRING")]
    run_case("concat", "CONCATENATION", 1, [s(), s()], out, "ConcatenationOptions", {"axis": 0})
    run_case("transpose", "TRANSPOSE", 1, [s(), T("INT32", [2], [1, 0], True)], out)
    run_case("pack", "PACK", 1, [s(), s()], out, "PackOptions", {"values_count": 2, "axis": 0})
    run_case("unpack", "UNPACK", 1, [s()], [dict(type="STRING"), dict(type="STRING")], "UnpackOptions", {"num": 2, "axis": 0})
    run_case("split", "SPLIT", 1, [T("INT32", [], [0], True), s()], [dict(type="STRING"), dict(type="STRING")],
             "SplitOptions", {"num_splits": 2})
    run_case("reverse", "REVERSE_V2", 1, [s(), T("INT32", [1], [0], True)], out)
    run_case("broadcast_to", "BROADCAST_TO", 2, [s(), T("INT32", [3], [2, 2, 3], True)], out)
    run_case("zeros_like", "ZEROS_LIKE", 1, [s()], out)
    run_case("select_v2", "SELECT_V2", 1, [T("BOOL", [2, 3], [True, False] * 3), s(), s()], out)
    run_case("shape", "SHAPE", 1, [s()], [dict(type="INT32")], "ShapeOptions", {"out_type": "INT32"})
    run_case("rank", "RANK", 1, [s()], [dict(type="INT32")])
    run_case("embedding_lookup", "EMBEDDING_LOOKUP", 1, [T("INT32", [2], [1, 0]), s()], out)
    run_case("pad", "PAD", 1, [s(), T("INT32", [2, 2], [0, 1, 1, 0], True)], out)


def empty_tile_output(c):
    """TILE leaves an empty STRING output with no string buffer at all (0
    bytes, which no reader can parse); delego writes the empty buffer."""
    return c["name"].startswith("tile_") and c["outputs"] and 0 in c["outputs"][0]["shape"]


def main():
    rng = random.Random(2909)
    for g in (gen_compare, gen_gather, gen_gather_nd, gen_tile, gen_fill, gen_slice, gen_strided_slice, gen_reshape_family, gen_refused):
        g(rng)
    for c in CASES:
        print(c["name"], "ERR " + c["error"].replace("\n", " | ")[-200:] if c.get("error") else "ok",
              c["outputs"][0]["shape"] if c["outputs"] else "")
    keep = [c for c in CASES if not empty_tile_output(c)]
    for c in keep:
        if c.get("error") is not None:
            c["error"] = c.pop("error_stage")
    with gzip.open(OUT, "wt") as f:
        json.dump(keep, f)
    print(len(keep), "cases")


main()
