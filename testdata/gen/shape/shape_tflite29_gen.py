#!/usr/bin/env python3
"""shape_tflite29_gen.py: regenerate shape_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that TestShapeAgainstTFLite29 compares the shape
family's value-generating and value-moving ops with (RANK, RANGE, ONE_HOT,
REVERSE_V2, REVERSE_SEQUENCE, BROADCAST_TO, BROADCAST_ARGS, MATRIX_DIAG,
MATRIX_SET_DIAG, SCATTER_ND, SPARSE_TO_DENSE, DYNAMIC_UPDATE_SLICE).

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc) run once by the runner built from ../tflite29_run.c on pseudo-random
inputs. Every op is tried with every fixed-size type, so the file records
which types TFLite accepts as well as what it computes, and each op at its
highest registered version and the next (which TFLite must refuse).

usage: shape_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CASES = []
codes = tflite29.builtin_codes(SCHEMA)
TYPES = ["FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16", "BOOL"]


def rand_vals(typ, n, rng):
    if typ == "FLOAT32":
        return [rng.uniform(-100, 100) for _ in range(n)]
    if typ == "BOOL":
        return [rng.random() < 0.5 for _ in range(n)]
    lo, hi = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767),
              "INT32": (-2**31, 2**31 - 1), "INT64": (-2**63, 2**63 - 1)}[typ]
    return [rng.randint(lo, hi) for _ in range(n)]


def quant(t, is_input):
    if t.get("scale") is None:
        return None
    return {"scale": [t["scale"]], "zero_point": [t.get("zp", 0)]}


def T(typ, shape, vals, const=False, scale=None, zp=0):
    return dict(type=typ, shape=shape, vals=vals, const=const, scale=scale, zp=zp)


def run_case(name, op, version, inputs, outputs, options_type=None, options=None):
    model, raw_in = tflite29.model(op, codes[op], version, inputs, outputs, quant, options_type, options)
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


def rshape(rng, nd, lo=1, hi=4):
    return [rng.randint(lo, hi) for _ in range(nd)]


def gen_broadcast_to(rng):
    for t in TYPES:
        for trial in range(6):
            ond = rng.randint(1, 5)
            oshape = rshape(rng, ond)
            ind = rng.randint(0, ond)
            ishape = [d if rng.random() < 0.5 else 1 for d in oshape[ond - ind:]]
            sc = 0.5 if t in ("UINT8", "INT8", "INT16") else None
            st = "INT64" if trial % 3 == 2 else "INT32"
            run_case("bt_%s_%d" % (t, trial), "BROADCAST_TO", 2 if trial % 2 else 3,
                     [T(t, ishape, rand_vals(t, nelem(ishape), rng), scale=sc),
                      T(st, [ond], oshape, const=(trial != 1))], [dict(type=t, scale=sc)])
    f = lambda s: T("FLOAT32", s, list(range(nelem(s))))
    run_case("bt_e_incompat", "BROADCAST_TO", 2, [f([2, 3]), T("INT32", [2], [2, 4], const=True)], [dict(type="FLOAT32")])
    run_case("bt_e_shorter", "BROADCAST_TO", 2, [f([2, 3]), T("INT32", [1], [3], const=True)], [dict(type="FLOAT32")])
    run_case("bt_e_empty", "BROADCAST_TO", 2, [f([1, 3]), T("INT32", [2], [0, 3], const=True)], [dict(type="FLOAT32")])
    run_case("bt_e_8d", "BROADCAST_TO", 2, [f([1, 2]), T("INT32", [8], [1, 2, 1, 1, 2, 1, 1, 2], const=True)], [dict(type="FLOAT32")])
    run_case("bt_e_9d", "BROADCAST_TO", 2, [f([1, 2]), T("INT32", [9], [1, 1, 2, 1, 1, 2, 1, 1, 2], const=True)], [dict(type="FLOAT32")])
    run_case("bt_e_shape2d", "BROADCAST_TO", 2, [f([2]), T("INT32", [1, 2], [3, 2], const=True)], [dict(type="FLOAT32")])
    run_case("bt_e_scalar", "BROADCAST_TO", 2, [f([]), T("INT32", [3], [2, 1, 3])], [dict(type="FLOAT32")])
    run_case("bt_e_v1", "BROADCAST_TO", 1, [f([1]), T("INT32", [1], [3], const=True)], [dict(type="FLOAT32")])


def gen_range(rng):
    for t in ["INT32", "FLOAT32", "INT64"]:
        for trial in range(8):
            if t == "FLOAT32":
                s, d = rng.uniform(-10, 10), rng.choice([0.1, 0.3, 0.7, 1.5, -0.3, -1.1, 2.5])
                l = s + d * rng.uniform(0.5, 30)
            else:
                s, d = rng.randint(-50, 50), rng.choice([1, 2, 3, 7, -1, -4])
                l = s + d * rng.randint(1, 20) + rng.randint(-abs(d) + 1, 0) * (1 if d > 0 else -1)
            const = trial % 3 != 1
            run_case("rg_%s_%d" % (t, trial), "RANGE", 1,
                     [T(t, [], [s], const=const), T(t, [], [l], const=const), T(t, [], [d], const=const)], [dict(type=t)])
    for name, (s, l, d) in {"zero": (0, 5, 0), "wrongdir": (0, 5, -1), "equal": (3, 3, 1), "neg": (5, 0, -2)}.items():
        for const in (True, False):
            run_case("rg_e_%s_%d" % (name, const), "RANGE", 1,
                     [T("INT32", [], [s], const=const), T("INT32", [], [l], const=const), T("INT32", [], [d], const=const)], [dict(type="INT32")])
    run_case("rg_e_vec", "RANGE", 1, [T("INT32", [1], [0], const=True), T("INT32", [], [5], const=True), T("INT32", [], [1], const=True)], [dict(type="INT32")])
    run_case("rg_e_mixed", "RANGE", 1, [T("INT32", [], [0], const=True), T("FLOAT32", [], [5], const=True), T("INT32", [], [1], const=True)], [dict(type="INT32")])
    run_case("rg_e_facc", "RANGE", 1, [T("FLOAT32", [], [0.1]), T("FLOAT32", [], [100.0]), T("FLOAT32", [], [0.1])], [dict(type="FLOAT32")])


def gen_one_hot(rng):
    for t in TYPES:
        for trial in range(5):
            nd = rng.randint(0, 3)
            ishape = rshape(rng, nd)
            depth = rng.randint(1, 5)
            axis = rng.randint(-1, nd)
            it = "INT64" if trial % 2 else "INT32"
            on, off = rand_vals(t, 2, rng)
            run_case("oh_%s_%d" % (t, trial), "ONE_HOT", 1,
                     [T(it, ishape, [rng.randint(-1, depth) for _ in range(nelem(ishape))]),
                      T("INT32", [], [depth], const=(trial != 3)), T(t, [], [on]), T(t, [], [off])],
                     [dict(type=t)], "OneHotOptions", {"axis": axis})
    ix = T("INT32", [3], [0, 2, 1])
    for name, axis, depth in (("axisbad", 2, 3), ("axisneg2", -2, 3), ("depth0", -1, 0), ("depthneg", -1, -1)):
        run_case("oh_e_%s" % name, "ONE_HOT", 1, [ix, T("INT32", [], [depth], const=True), T("FLOAT32", [], [1]), T("FLOAT32", [], [0])],
                 [dict(type="FLOAT32")], "OneHotOptions", {"axis": axis})
    run_case("oh_e_empty", "ONE_HOT", 1, [T("INT32", [0, 2], []), T("INT32", [], [3], const=True), T("FLOAT32", [], [1]), T("FLOAT32", [], [0])],
             [dict(type="FLOAT32")], "OneHotOptions", {"axis": 1})
    run_case("oh_e_offtype", "ONE_HOT", 1, [ix, T("INT32", [], [3], const=True), T("FLOAT32", [], [1]), T("INT32", [], [0])],
             [dict(type="FLOAT32")], "OneHotOptions", {"axis": -1})
    run_case("oh_e_i16idx", "ONE_HOT", 1, [T("INT16", [2], [0, 1]), T("INT32", [], [3], const=True), T("FLOAT32", [], [1]), T("FLOAT32", [], [0])],
             [dict(type="FLOAT32")], "OneHotOptions", {"axis": -1})
    # TFLite compares an INT64 index cast to int: 2^32+1 matches position 1.
    run_case("oh_e_i64wrap", "ONE_HOT", 1, [T("INT64", [3], [2**32 + 1, -2**32, 2]), T("INT32", [], [3], const=True), T("INT8", [], [5]), T("INT8", [], [-7])],
             [dict(type="INT8")], "OneHotOptions", {"axis": 0})
    run_case("oh_e_noopt", "ONE_HOT", 1, [ix, T("INT32", [], [3], const=True), T("FLOAT32", [], [1]), T("FLOAT32", [], [0])], [dict(type="FLOAT32")])


def gen_reverse(rng):
    for t in TYPES:
        for trial in range(5):
            nd = rng.randint(1, 5)
            shape = rshape(rng, nd)
            ax = rng.randint(-nd, nd - 1)
            run_case("rv_%s_%d" % (t, trial), "REVERSE_V2", 1 + trial % 3,
                     [T(t, shape, rand_vals(t, nelem(shape), rng)), T("INT32", [1], [ax], const=(trial != 2))], [dict(type=t)])
    f = T("FLOAT32", [2, 3], [1, 2, 3, 4, 5, 6])
    run_case("rv_e_2axes", "REVERSE_V2", 1, [f, T("INT32", [2], [0, 1], const=True)], [dict(type="FLOAT32")])
    run_case("rv_e_0axes", "REVERSE_V2", 1, [f, T("INT32", [0], [], const=True)], [dict(type="FLOAT32")])
    run_case("rv_e_axisbad", "REVERSE_V2", 1, [f, T("INT32", [1], [2], const=True)], [dict(type="FLOAT32")])
    run_case("rv_e_i64axis", "REVERSE_V2", 1, [f, T("INT64", [1], [1], const=True)], [dict(type="FLOAT32")])
    run_case("rv_e_empty", "REVERSE_V2", 1, [T("FLOAT32", [2, 0], []), T("INT32", [1], [0], const=True)], [dict(type="FLOAT32")])


def gen_reverse_sequence(rng):
    for t in TYPES:
        for trial in range(5):
            nd = rng.randint(2, 4)
            shape = rshape(rng, nd, 1, 5)
            sd, bd = rng.sample(range(nd), 2)
            lens = [rng.randint(0, shape[sd]) for _ in range(shape[bd])]
            run_case("rs_%s_%d" % (t, trial), "REVERSE_SEQUENCE", 1,
                     [T(t, shape, rand_vals(t, nelem(shape), rng)), T("INT64" if trial % 2 else "INT32", [shape[bd]], lens, const=(trial != 1))],
                     [dict(type=t)], "ReverseSequenceOptions", {"seq_dim": sd, "batch_dim": bd})
    f = T("FLOAT32", [2, 3], [1, 2, 3, 4, 5, 6])
    for name, sd, bd, lens in (("same", 1, 1, [1, 1, 1]), ("negseq", -1, 0, [1, 2]), ("toolong", 1, 0, [4, 1]),
                               ("neglen", 1, 0, [-1, 1]), ("nlens", 1, 0, [1, 1, 1]), ("bdbad", 1, 2, [1, 1])):
        run_case("rs_e_%s" % name, "REVERSE_SEQUENCE", 1, [f, T("INT32", [len(lens)], lens, const=True)], [dict(type="FLOAT32")],
                 "ReverseSequenceOptions", {"seq_dim": sd, "batch_dim": bd})


def gen_broadcast_args(rng):
    for t in ["INT32", "INT64", "FLOAT32", "INT16"]:
        for trial in range(5):
            n = rng.randint(0, 5)
            a = rshape(rng, n, 1, 5)
            m = rng.randint(0, 5)
            b = [rng.choice([1, d]) if i < len(a) else rng.randint(1, 5) for i, d in enumerate(reversed(a))]
            b = list(reversed(b[:m])) if m <= len(b) else list(reversed(b)) + []
            if m > len(a):
                b = rshape(rng, m - len(a), 1, 5) + [rng.choice([1, d]) for d in a]
            if trial % 2:
                a, b = b, a
            run_case("ba_%s_%d" % (t, trial), "BROADCAST_ARGS", 1, [T(t, [len(a)], a, const=(trial == 4)), T(t, [len(b)], b)], [dict(type=t)])
    run_case("ba_e_incompat", "BROADCAST_ARGS", 1, [T("INT32", [2], [2, 3]), T("INT32", [2], [2, 4])], [dict(type="INT32")])
    run_case("ba_e_mixed", "BROADCAST_ARGS", 1, [T("INT32", [1], [2]), T("INT64", [1], [2])], [dict(type="INT32")])
    run_case("ba_e_zero", "BROADCAST_ARGS", 1, [T("INT32", [2], [0, 1]), T("INT32", [2], [1, 3])], [dict(type="INT32")])
    run_case("ba_e_2d", "BROADCAST_ARGS", 1, [T("INT32", [1, 2], [2, 3]), T("INT32", [2], [2, 3])], [dict(type="INT32")])


def gen_matrix_diag(rng):
    for t in TYPES:
        for trial in range(4):
            shape = rshape(rng, rng.randint(1, 3), 1, 4)
            sc = 0.5 if t in ("UINT8", "INT8") and trial % 2 else None
            run_case("md_%s_%d" % (t, trial), "MATRIX_DIAG", 1, [T(t, shape, rand_vals(t, nelem(shape), rng), scale=sc, zp=7 if sc else 0)],
                     [dict(type=t, scale=sc, zp=7 if sc else 0)])
            shape = rshape(rng, rng.randint(2, 4), 1, 4)
            dshape = shape[:-2] + [min(shape[-2:])]
            run_case("msd_%s_%d" % (t, trial), "MATRIX_SET_DIAG", 1,
                     [T(t, shape, rand_vals(t, nelem(shape), rng)), T(t, dshape, rand_vals(t, nelem(dshape), rng))], [dict(type=t)])
    run_case("md_e_scalar", "MATRIX_DIAG", 1, [T("FLOAT32", [], [1])], [dict(type="FLOAT32")])
    run_case("msd_e_rank1", "MATRIX_SET_DIAG", 1, [T("FLOAT32", [3], [1, 2, 3]), T("FLOAT32", [], [1])], [dict(type="FLOAT32")])
    run_case("msd_e_baddiag", "MATRIX_SET_DIAG", 1, [T("FLOAT32", [2, 3], [1, 2, 3, 4, 5, 6]), T("FLOAT32", [3], [7, 8, 9])], [dict(type="FLOAT32")])
    run_case("msd_e_difftype", "MATRIX_SET_DIAG", 1, [T("FLOAT32", [2, 2], [1, 2, 3, 4]), T("INT32", [2], [7, 8])], [dict(type="FLOAT32")])


def gen_scatter_nd(rng):
    for t in TYPES:
        for trial in range(5):
            nd = rng.randint(1, 4)
            shape = rshape(rng, nd, 1, 4)
            k = rng.randint(1, nd)
            nidx = [rng.randint(1, 4)] if trial % 2 else [rng.randint(1, 2), rng.randint(1, 3)]
            n = nelem(nidx)
            idx = []
            for _ in range(n):
                idx += [rng.randint(0, shape[d] - 1) for d in range(k)]
            ushape = nidx + shape[k:]
            it = "INT64" if trial == 4 else "INT32"
            vals = rand_vals(t, nelem(ushape), rng)
            if t in ("UINT8", "INT8", "INT16"):
                vals = [v // 4 for v in vals]
            if t == "FLOAT32":
                vals = [float(int(v)) for v in vals]  # sums of duplicates stay exact
            run_case("sn_%s_%d" % (t, trial), "SCATTER_ND", 1,
                     [T(it, nidx + [k], idx), T(t, ushape, vals), T(it, [nd], shape, const=(trial != 1))], [dict(type=t)])
    run_case("sn_e_oob", "SCATTER_ND", 1, [T("INT32", [1, 1], [3]), T("FLOAT32", [1], [1]), T("INT32", [1], [3], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_neg", "SCATTER_ND", 1, [T("INT32", [1, 1], [-1]), T("FLOAT32", [1], [1]), T("INT32", [1], [3], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_badupd", "SCATTER_ND", 1, [T("INT32", [2, 1], [0, 1]), T("FLOAT32", [3], [1, 2, 3]), T("INT32", [1], [3], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_k", "SCATTER_ND", 1, [T("INT32", [1, 2], [0, 1]), T("FLOAT32", [1], [1]), T("INT32", [1], [3], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_shape0", "SCATTER_ND", 1, [T("INT32", [1, 1], [0]), T("FLOAT32", [1, 0], []), T("INT32", [2], [3, 0], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_shapeneg", "SCATTER_ND", 1, [T("INT32", [1, 1], [0]), T("FLOAT32", [1], [1]), T("INT32", [1], [-3], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_mixidx", "SCATTER_ND", 1, [T("INT32", [1, 1], [0]), T("FLOAT32", [1], [1]), T("INT64", [1], [3], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_fdup", "SCATTER_ND", 1, [T("INT32", [4, 1], [1, 1, 0, 1]), T("FLOAT32", [4], [0.1, 0.7, 3.3, 1e-8]), T("INT32", [1], [2], const=True)], [dict(type="FLOAT32")])
    run_case("sn_e_dup", "SCATTER_ND", 1, [T("INT32", [3, 1], [1, 1, 0]), T("INT32", [3], [5, 6, 7]), T("INT32", [1], [2], const=True)], [dict(type="INT32")])


def gen_sparse_to_dense(rng):
    for t in TYPES:
        for trial in range(5):
            nd = rng.randint(1, 3)
            shape = rshape(rng, nd, 1, 5)
            cells = sorted(rng.sample(range(nelem(shape)), rng.randint(1, min(4, nelem(shape)))))
            idx = []
            for c in cells:
                coord = []
                for d in reversed(shape):
                    coord.append(c % d)
                    c //= d
                idx += list(reversed(coord))
            n = len(cells)
            it = "INT64" if trial % 2 else "INT32"
            vals = rand_vals(t, n if trial != 3 else 1, rng)
            run_case("sd_%s_%d" % (t, trial), "SPARSE_TO_DENSE", 1 + trial % 3,
                     [T(it, [n, nd], idx, const=True), T(it, [nd], shape, const=(trial != 2)),
                      T(t, [n] if trial != 3 else [], vals), T(t, [], rand_vals(t, 1, rng))],
                     [dict(type=t)], "SparseToDenseOptions", {"validate_indices": trial % 2 == 0})
    f = lambda v: T("FLOAT32", [len(v)] if len(v) != 1 else [], v)
    run_case("sd_e_idx0d", "SPARSE_TO_DENSE", 1, [T("INT32", [], [2], const=True), T("INT32", [1], [4], const=True), f([5]), f([1])], [dict(type="FLOAT32")])
    run_case("sd_e_idx1d", "SPARSE_TO_DENSE", 1, [T("INT32", [2], [3, 1], const=True), T("INT32", [1], [4], const=True), f([5, 6]), f([1])], [dict(type="FLOAT32")])
    run_case("sd_e_unsorted", "SPARSE_TO_DENSE", 1, [T("INT32", [2, 1], [3, 1], const=True), T("INT32", [1], [4], const=True), f([5, 6]), f([1])],
             [dict(type="FLOAT32")], "SparseToDenseOptions", {"validate_indices": True})
    run_case("sd_e_dup", "SPARSE_TO_DENSE", 1, [T("INT32", [2, 1], [1, 1], const=True), T("INT32", [1], [4], const=True), f([5, 6]), f([1])],
             [dict(type="FLOAT32")], "SparseToDenseOptions", {"validate_indices": False})
    run_case("sd_e_mixed", "SPARSE_TO_DENSE", 1, [T("INT32", [1, 1], [1], const=True), T("INT64", [1], [4], const=True), f([5]), f([1])], [dict(type="FLOAT32")])
    run_case("sd_e_nvals", "SPARSE_TO_DENSE", 1, [T("INT32", [2, 1], [1, 2], const=True), T("INT32", [1], [4], const=True), f([5, 6, 7]), f([1])], [dict(type="FLOAT32")])
    run_case("sd_e_dyn_idx", "SPARSE_TO_DENSE", 1, [T("INT32", [2, 1], [1, 2]), T("INT32", [1], [4], const=True), f([5, 6]), f([1])], [dict(type="FLOAT32")])


def gen_dynamic_update_slice(rng):
    for t in TYPES:
        for trial in range(5):
            nd = rng.randint(1, 4)
            shape = rshape(rng, nd, 1, 5)
            ushape = [rng.randint(1, d) for d in shape]
            start = [rng.randint(-2, d + 1) for d in shape]
            run_case("du_%s_%d" % (t, trial), "DYNAMIC_UPDATE_SLICE", 1,
                     [T(t, shape, rand_vals(t, nelem(shape), rng)), T(t, ushape, rand_vals(t, nelem(ushape), rng)),
                      T("INT64" if trial == 4 else "INT32", [nd], start, const=(trial % 2 == 0))], [dict(type=t)])
    f = lambda s: T("FLOAT32", s, list(range(nelem(s))))
    run_case("du_e_big", "DYNAMIC_UPDATE_SLICE", 1, [f([2, 2]), f([3, 1]), T("INT32", [2], [0, 0])], [dict(type="FLOAT32")])
    run_case("du_e_rank", "DYNAMIC_UPDATE_SLICE", 1, [f([2, 2]), f([2]), T("INT32", [2], [0, 0])], [dict(type="FLOAT32")])
    run_case("du_e_nstart", "DYNAMIC_UPDATE_SLICE", 1, [f([2, 2]), f([1, 1]), T("INT32", [1], [0])], [dict(type="FLOAT32")])
    run_case("du_e_type", "DYNAMIC_UPDATE_SLICE", 1, [f([2, 2]), T("INT32", [1, 1], [3]), T("INT32", [2], [0, 0])], [dict(type="FLOAT32")])
    run_case("du_e_scalar", "DYNAMIC_UPDATE_SLICE", 1, [f([]), f([]), T("INT32", [0], [])], [dict(type="FLOAT32")])
    run_case("du_e_empty", "DYNAMIC_UPDATE_SLICE", 1, [f([2, 2]), f([0, 1]), T("INT32", [2], [1, 1])], [dict(type="FLOAT32")])


def gen_rank(rng):
    for t in TYPES:
        shape = rshape(rng, rng.randint(0, 5))
        run_case("rk_%s" % t, "RANK", 1, [T(t, shape, rand_vals(t, nelem(shape), rng))], [dict(type="INT32")])
    run_case("rk_e_i64out", "RANK", 1, [T("FLOAT32", [2], [1, 2])], [dict(type="INT64")])


def gen_versions():
    maxv = {"RANK": 1, "RANGE": 1, "ONE_HOT": 1, "REVERSE_V2": 3, "REVERSE_SEQUENCE": 1, "BROADCAST_TO": 3, "BROADCAST_ARGS": 1,
            "MATRIX_DIAG": 1, "MATRIX_SET_DIAG": 1, "SCATTER_ND": 1, "SPARSE_TO_DENSE": 3, "DYNAMIC_UPDATE_SLICE": 1}
    for op, mv in maxv.items():
        run_case("ver_%s_%d" % (op, mv + 1), op, mv + 1, [T("FLOAT32", [1], [1])], [dict(type="FLOAT32")])


# Cases where TFLite 2.9 has no defined answer, left out of the file: the
# family refuses them instead.
UNDEFINED = {
    "rv_e_2axes": "REVERSE_V2 reads only the first of two axes",
    "sn_e_oob": "SCATTER_ND writes outside its output",
    "sn_e_neg": "SCATTER_ND writes outside its output",
    "sd_e_idx0d": "SPARSE_TO_DENSE reads an unset index count for 0-D indices",
    "rk_e_i64out": "RANK writes INT32 into an output the model types INT64",
    "msd_e_difftype": "MATRIX_SET_DIAG reads INT32 diagonals as FLOAT32",
}


def main():
    rng = tflite29.seeded(2909)
    for g in (gen_broadcast_to, gen_range, gen_one_hot, gen_reverse, gen_scatter_nd, gen_dynamic_update_slice,
              gen_rank, gen_broadcast_args, gen_matrix_diag, gen_reverse_sequence, gen_sparse_to_dense):
        g(rng)
    gen_versions()
    for c in CASES:
        print(c["name"], "ERR " + c["error"].replace("\n", " | ")[-200:] if c.get("error") else "ok", c["outputs"][0]["shape"] if c["outputs"] else "")
    keep = []
    for c in CASES:
        err = c.get("error")
        if c["name"] in UNDEFINED or c["name"].startswith(("md_BOOL", "msd_BOOL")):
            # MATRIX_DIAG and MATRIX_SET_DIAG treat BOOL as 4-byte FLOAT32
            # and write past their output.
            continue
        if err is not None and c["error_stage"] == "load" and not c["name"].startswith("ver_"):
            continue  # TFLite crashed (or aborted): no oracle
        if err is not None:
            c["error"] = c.pop("error_stage")
        keep.append(c)
    data = json.dumps(keep, separators=(",", ":")).encode()
    with open(OUT, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)
    print(len(keep), "of", len(CASES), "cases written to", OUT)


if __name__ == "__main__":
    main()
