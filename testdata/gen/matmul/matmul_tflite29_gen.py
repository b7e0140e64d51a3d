#!/usr/bin/env python3
"""matmul_tflite29_gen.py: regenerate the real TensorFlow Lite 2.9 outputs
that three families replay:

  OUT                                  BATCH_MATMUL (conv family)
  fake_quant_tflite29.json.gz          FAKE_QUANT (quantize family)
  embedding_lookup_tflite29.json.gz    EMBEDDING_LOOKUP (shape family)

the last two written beside OUT. Each case is a one-operator model (written
as JSON, turned into a .tflite by flatc) run once by the runner built from
../tflite29_run.c on pseudo-random inputs. A file keeps the model, the inputs
and TFLite's outputs, or the stage at which TFLite failed.

usage: matmul_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, struct, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
codes = tflite29.builtin_codes(SCHEMA)
CASES = []

RANGES = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767), "INT32": (-1000, 1000), "INT64": (-1000, 1000)}


def rand_vals(typ, n, rng, lo=None, hi=None):
    if typ == "FLOAT32":
        return [rng.uniform(-3 if lo is None else lo, 3 if hi is None else hi) for _ in range(n)]
    a, b = RANGES[typ]
    return [rng.randint(a if lo is None else lo, b if hi is None else hi) for _ in range(n)]


def quant(t, is_input):
    if t.get("scale") is None:
        return None
    return {"scale": [t["scale"]], "zero_point": [t.get("zp", 0)]}


def run_case(name, op, version, inputs, outputs, options_type=None, options=None):
    model, raw_in = tflite29.model(op, codes[op], version, inputs, outputs, quant, options_type, options)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw_in)
    case = {"name": name, "op": op, "inputs": [], "outputs": []}
    for t in inputs:
        if t is None:
            case["inputs"].append(None)
            continue
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


def bmm_shapes(rng, rank_l, rank_r, adj_x, adj_y, empty=None):
    """lhs and rhs shapes of ranks rank_l and rank_r whose batch dimensions
    broadcast."""
    m, k, n = rng.randint(1, 5), rng.randint(1, 9), rng.randint(1, 6)
    if empty == "m": m = 0
    if empty == "k": k = 0
    if empty == "n": n = 0
    nb = max(rank_l, rank_r) - 2
    batch = [rng.randint(1, 3) for _ in range(nb)]
    lb, rb = list(batch), list(batch)
    for i in range(nb):
        r = rng.random()
        if r < 0.25: lb[i] = 1
        elif r < 0.5: rb[i] = 1
    if empty == "b" and nb: lb[0] = rb[0] = 0
    lb, rb = lb[nb - (rank_l - 2):], rb[nb - (rank_r - 2):]
    ls = lb + ([k, m] if adj_x else [m, k])
    rs = rb + ([n, k] if adj_y else [k, n])
    return ls, rs


def qparams(t, rng):
    if t == "INT8": return rng.uniform(0.005, 0.1), rng.randint(-128, 127)
    if t == "INT16": return rng.uniform(0.0005, 0.01), 0
    return None, 0


def matmul_rows(c, ax, ay):
    """The lhs rows, rhs columns (dequantized) and TFLite's output rows of a
    recorded BATCH_MATMUL case, batch by batch, as
    [(lhs row, [rhs columns], output row)]."""
    def vals(t):
        b = base64.b64decode(t["data"])
        fm = tflite29.FMT[t["type"]]
        return list(struct.unpack("<%d%s" % (len(b) // struct.calcsize(fm), fm), b))
    (l, r), o = c["inputs"], c["outputs"][0]
    lv, rv, ov = vals(l), [v * (r["scale"] or 1) for v in vals(r)], vals(o)
    rank = len(o["shape"])
    ls = [1] * (rank - len(l["shape"])) + l["shape"]
    rs = [1] * (rank - len(r["shape"])) + r["shape"]
    M, N = o["shape"][-2], o["shape"][-1]
    K = ls[-2] if ax else ls[-1]
    out = []
    for ob in range(nelem(o["shape"][:-2])):
        li, ri, rem, lst, rst = 0, 0, ob, 1, 1
        for d in range(rank - 3, -1, -1):
            x = rem % o["shape"][d]
            rem //= o["shape"][d]
            li += (x if ls[d] != 1 else 0) * lst
            ri += (x if rs[d] != 1 else 0) * rst
            lst *= ls[d]
            rst *= rs[d]
        for i in range(M):
            row = [lv[li * M * K + (k * M + i if ax else i * K + k)] for k in range(K)]
            cols = [[rv[ri * N * K + (j * K + k if ay else k * N + j)] for k in range(K)] for j in range(N)]
            out.append((row, cols, ov[(ob * M + i) * N:(ob * M + i) * N + N]))
    return out


def hybrid_sane(c, ax, ay):
    """Whether TFLite's hybrid output lies within the error that quantizing
    the lhs rows allows of the exact products. TFLite 2.9's hybrid kernel
    sizes its buffers by the wrong dimensions and indexes the row scales of
    multi-dimensional batches wrongly: with more lhs rows than columns, or
    adj_y with more rhs columns than rows, or two broadcast batch
    dimensions, it returns zeros, NaN, garbage or another row's scale. The
    kernel computes those products; such cases are not recorded."""
    for row, cols, got in matmul_rows(c, ax, ay):
        step = max([abs(v) for v in row] + [0]) / 127
        for col, g in zip(cols, got):
            exact = sum(a * b for a, b in zip(row, col))
            bound = 0.5 * step * sum(abs(b) for b in col) * 1.01 + 1e-5 * (1 + abs(exact))
            if not abs(g - exact) <= bound:
                return False
    return True


HYBRID_DROPPED = []


def hybrid_case(name, version, ins, ax, ay, asym):
    c = run_case(name, "BATCH_MATMUL", version, ins, [dict(type="FLOAT32")],
                 "BatchMatMulOptions", {"adj_x": ax, "adj_y": ay, "asymmetric_quantize_inputs": asym})
    if not c.get("error") and not hybrid_sane(c, ax, ay):
        CASES.remove(c)
        HYBRID_DROPPED.append(name)


def gen_batch_matmul():
    rng = tflite29.seeded(2029)
    opts = lambda ax, ay, asym=False: ("BatchMatMulOptions", {"adj_x": ax, "adj_y": ay, "asymmetric_quantize_inputs": asym})
    # TFLite 2.9 takes ranks 2 to 4; every tenth case checks that 5 is refused.
    ranks = [(2, 2), (3, 3), (4, 4), (2, 4), (4, 2), (3, 4), (4, 3), (3, 2), (2, 3), (5, 5)]
    # float32 (v1), int8 (v2), int16 (v3)
    for t, ver in (("FLOAT32", 1), ("INT8", 2), ("INT16", 3)):
        for trial in range(26 if t == "FLOAT32" else 20):
            rl, rr = ranks[trial % len(ranks)]
            ax, ay = trial % 2 == 1, (trial // 2) % 2 == 1
            ls, rs = bmm_shapes(rng, rl, rr, ax, ay)
            ls_, lz = qparams(t, rng)
            rs_, rz = qparams(t, rng)
            os_, oz = qparams(t, rng)
            if t != "FLOAT32":
                # outputs that mostly stay in range
                os_ = ls_ * rs_ * {"INT8": 60.0, "INT16": 2000.0}[t] * rng.uniform(0.5, 2)
            lv, rv = rand_vals(t, nelem(ls), rng), rand_vals(t, nelem(rs), rng)
            if t != "FLOAT32" and trial % 5 == 4:
                # small values make exact half-way requantizations likely
                lv, rv = rand_vals(t, nelem(ls), rng, -4, 4), rand_vals(t, nelem(rs), rng, -4, 4)
                os_ = ls_ * rs_ * rng.choice([2, 4, 8])
            run_case("bmm_%s_%d" % (t, trial), "BATCH_MATMUL", ver,
                     [dict(type=t, shape=ls, vals=lv, scale=ls_, zp=lz),
                      dict(type=t, shape=rs, vals=rv, scale=rs_, zp=rz, const=trial % 3 == 0)],
                     [dict(type=t, scale=os_, zp=oz)], *opts(ax, ay))
    # hybrid float lhs, int8 rhs (v1 symmetric, v4 asymmetric)
    for trial in range(40):
        rl, rr = ranks[trial % len(ranks)]
        ax, ay = trial % 2 == 1, (trial // 2) % 2 == 1
        ls, rs = bmm_shapes(rng, rl, rr, ax, ay)
        asym = trial % 4 >= 2
        lv = rand_vals("FLOAT32", nelem(ls), rng)
        if trial % 7 == 3:
            lv = [abs(v) + 0.5 for v in lv]  # one-sided ranges move the asymmetric zero point
        hybrid_case("bmm_hybrid_%d" % trial, 4 if asym else 1,
                 [dict(type="FLOAT32", shape=ls, vals=lv),
                  dict(type="INT8", shape=rs, vals=rand_vals("INT8", nelem(rs), rng), scale=rng.uniform(0.005, 0.05), zp=0,
                       const=trial % 5 != 1)],
                 ax, ay, asym)
    # empty dimensions
    for t in ("FLOAT32", "INT8"):
        for empty in ("m", "k", "n", "b"):
            ls, rs = bmm_shapes(rng, 3, 3, False, False, empty)
            sc = 0.05 if t == "INT8" else None
            run_case("bmm_empty_%s_%s" % (t, empty), "BATCH_MATMUL", 1 if t == "FLOAT32" else 2,
                     [dict(type=t, shape=ls, vals=rand_vals(t, nelem(ls), rng), scale=sc, zp=1),
                      dict(type=t, shape=rs, vals=rand_vals(t, nelem(rs), rng), scale=sc, zp=-2)],
                     [dict(type=t, scale=sc, zp=3)], *opts(False, False))
    # extremes: int8 saturation, int16 long sums
    run_case("bmm_i8_sat", "BATCH_MATMUL", 2,
             [dict(type="INT8", shape=[2, 40], vals=[-128] * 40 + [127] * 40, scale=0.5, zp=127),
              dict(type="INT8", shape=[40, 2], vals=[-128, 127] * 40, scale=0.5, zp=-128)],
             [dict(type="INT8", scale=0.01, zp=0)], *opts(False, False))
    run_case("bmm_i16_long", "BATCH_MATMUL", 3,
             [dict(type="INT16", shape=[1, 300], vals=[32767] * 150 + [-32768] * 150, scale=0.001, zp=0),
              dict(type="INT16", shape=[300, 2], vals=[32767, -32768] * 300, scale=0.001, zp=0)],
             [dict(type="INT16", scale=30.0, zp=0)], *opts(False, False))
    run_case("bmm_i8_bigscale", "BATCH_MATMUL", 2,
             [dict(type="INT8", shape=[2, 3], vals=[1, -2, 3, 4, -5, 6], scale=2.0, zp=0),
              dict(type="INT8", shape=[3, 2], vals=[1, 2, 3, -4, 5, 6], scale=3.0, zp=0)],
             [dict(type="INT8", scale=0.7, zp=0)], *opts(False, False))
    # what TFLite refuses
    f23 = dict(type="FLOAT32", shape=[2, 3], vals=rand_vals("FLOAT32", 6, rng))
    f32 = dict(type="FLOAT32", shape=[3, 2], vals=rand_vals("FLOAT32", 6, rng))
    i8_23 = dict(type="INT8", shape=[2, 3], vals=rand_vals("INT8", 6, rng), scale=0.1, zp=0)
    i8_32 = dict(type="INT8", shape=[3, 2], vals=rand_vals("INT8", 6, rng), scale=0.1, zp=0)
    bad = [
        ("v5", 5, [f23, f32], [dict(type="FLOAT32")]),
        ("kmismatch", 1, [f23, f23], [dict(type="FLOAT32")]),
        ("rank1", 1, [dict(type="FLOAT32", shape=[3], vals=[1, 2, 3]), f32], [dict(type="FLOAT32")]),
        ("rank6", 1, [dict(type="FLOAT32", shape=[1, 1, 1, 1, 2, 3], vals=f23["vals"]), f32], [dict(type="FLOAT32")]),
        ("bcast", 1, [dict(type="FLOAT32", shape=[2, 2, 3], vals=f23["vals"] * 2), dict(type="FLOAT32", shape=[3, 3, 2], vals=f32["vals"] * 3)], [dict(type="FLOAT32")]),
        ("u8", 1, [dict(i8_23, type="UINT8", vals=[1] * 6), dict(i8_32, type="UINT8", vals=[2] * 6)], [dict(type="UINT8", scale=0.1, zp=0)]),
        ("i32", 1, [dict(type="INT32", shape=[2, 3], vals=[1] * 6), dict(type="INT32", shape=[3, 2], vals=[2] * 6)], [dict(type="INT32")]),
        ("i8_i16", 2, [i8_23, dict(i8_32, type="INT16")], [dict(type="INT8", scale=0.1, zp=0)]),
        ("f_i16", 1, [f23, dict(i8_32, type="INT16")], [dict(type="FLOAT32")]),
        ("i8_f", 1, [i8_23, f32], [dict(type="INT8", scale=0.1, zp=0)]),
        ("i16_zp", 3, [dict(i8_23, type="INT16", zp=3), dict(i8_32, type="INT16")], [dict(type="INT16", scale=0.1, zp=0)]),
        ("i16_outzp", 3, [dict(i8_23, type="INT16"), dict(i8_32, type="INT16")], [dict(type="INT16", scale=0.1, zp=2)]),
        ("i8_noq", 2, [dict(i8_23, scale=None), dict(i8_32, scale=None)], [dict(type="INT8")]),
        ("rank5", 1, [dict(type="FLOAT32", shape=[1, 1, 1, 2, 3], vals=f23["vals"]), dict(type="FLOAT32", shape=[1, 1, 1, 3, 2], vals=f32["vals"])], [dict(type="FLOAT32")]),
        ("hybrid_zp", 1, [f23, dict(i8_32, zp=5)], [dict(type="FLOAT32")]),
        ("hybrid_noq", 1, [f23, dict(i8_32, scale=None)], [dict(type="FLOAT32")]),
        ("one_input", 1, [f23], [dict(type="FLOAT32")]),
    ]
    for name, ver, ins, outs in bad:
        run_case("bmm_bad_" + name, "BATCH_MATMUL", ver, ins, outs, *opts(False, False))
    run_case("bmm_noopts", "BATCH_MATMUL", 1, [f23, f32], [dict(type="FLOAT32")])
    run_case("bmm_out_i8_for_f", "BATCH_MATMUL", 1, [f23, f32], [dict(type="INT8", scale=0.1, zp=0)], *opts(False, False))


def gen_fake_quant():
    rng = tflite29.seeded(77)
    for trial in range(40):
        nd = rng.randint(0, 4)
        shape = [rng.randint(1, 5) for _ in range(nd)]
        mn = -rng.uniform(0, 4) if trial % 5 else 0.0
        mx = rng.uniform(0.1, 4) if trial % 7 else 0.0
        if mx == mn: mx = 1.0
        bits = rng.choice([2, 4, 8, 8, 16])
        if trial % 9 == 2: bits = rng.choice([1, 3, 5, 7])
        vals = rand_vals("FLOAT32", nelem(shape), rng, mn - 1, mx + 1)
        narrow = trial % 6 == 5
        run_case("fq_%d" % trial, "FAKE_QUANT", 2 if narrow else 1,
                 [dict(type="FLOAT32", shape=shape, vals=vals)], [dict(type="FLOAT32")],
                 "FakeQuantOptions", {"min": mn, "max": mx, "num_bits": bits, "narrow_range": narrow})
    x = dict(type="FLOAT32", shape=[4], vals=[-1.0, 0.0, 0.25, 7.0])
    fq = lambda **kw: ("FakeQuantOptions", dict({"min": -1.0, "max": 1.0, "num_bits": 8, "narrow_range": False}, **kw))
    # exact half-way points of the grid
    run_case("fq_ties", "FAKE_QUANT", 1, [dict(type="FLOAT32", shape=[6], vals=[0.5, 1.5, 2.5, -0.5, 3.5, 14.5])], [dict(type="FLOAT32")],
             *fq(min=0.0, max=15.0, num_bits=4))
    run_case("fq_empty", "FAKE_QUANT", 1, [dict(type="FLOAT32", shape=[2, 0], vals=[])], [dict(type="FLOAT32")], *fq())
    run_case("fq_v3", "FAKE_QUANT", 3, [x], [dict(type="FLOAT32")], *fq())
    run_case("fq_noopts", "FAKE_QUANT", 1, [x], [dict(type="FLOAT32")])
    run_case("fq_i8", "FAKE_QUANT", 1, [dict(type="INT8", shape=[2], vals=[1, 2], scale=0.1, zp=0)], [dict(type="INT8", scale=0.1, zp=0)], *fq())
    run_case("fq_two_inputs", "FAKE_QUANT", 1, [x, x], [dict(type="FLOAT32")], *fq())
    run_case("fq_minpos", "FAKE_QUANT", 1, [x], [dict(type="FLOAT32")], *fq(min=0.5, max=2.0))
    run_case("fq_maxneg", "FAKE_QUANT", 1, [x], [dict(type="FLOAT32")], *fq(min=-2.0, max=-0.5))


def gen_embedding_lookup():
    rng = tflite29.seeded(31)
    for t, ver in (("FLOAT32", 1), ("UINT8", 2), ("INT8", 3), ("INT32", 1), ("INT64", 1), ("INT16", 1)):
        for trial in range(8):
            nd = rng.randint(2, 4)
            vshape = [rng.randint(1, 6)] + [rng.randint(1, 4) for _ in range(nd - 1)]
            nl = rng.randint(0, 6)
            ids = [rng.randint(0, vshape[0] - 1) for _ in range(nl)]
            sc = rng.uniform(0.01, 0.5) if t in ("UINT8", "INT8") else None
            zp = rng.randint(-5, 5) if t == "INT8" else (rng.randint(0, 10) if t == "UINT8" else 0)
            run_case("el_%s_%d" % (t, trial), "EMBEDDING_LOOKUP", ver,
                     [dict(type="INT32", shape=[nl], vals=ids, const=trial % 3 == 0),
                      dict(type=t, shape=vshape, vals=rand_vals(t, nelem(vshape), rng), scale=sc, zp=zp, const=trial % 2 == 0)],
                     [dict(type=t, scale=sc, zp=zp)])
    # hybrid: quantized table, float output
    for t in ("UINT8", "INT8"):
        for trial in range(5):
            vshape = [rng.randint(1, 6), rng.randint(1, 5)] + ([rng.randint(1, 3)] if trial % 2 else [])
            ids = [rng.randint(0, vshape[0] - 1) for _ in range(rng.randint(1, 5))]
            run_case("el_hybrid_%s_%d" % (t, trial), "EMBEDDING_LOOKUP", 3 if t == "INT8" else 2,
                     [dict(type="INT32", shape=[len(ids)], vals=ids),
                      dict(type=t, shape=vshape, vals=rand_vals(t, nelem(vshape), rng), scale=rng.uniform(0.01, 0.5), zp=rng.randint(0, 5), const=True)],
                     [dict(type="FLOAT32")])
    tbl = dict(type="FLOAT32", shape=[3, 2], vals=[1, 2, 3, 4, 5, 6], const=True)
    bad = [
        ("v4", 4, [dict(type="INT32", shape=[1], vals=[0]), tbl], [dict(type="FLOAT32")]),
        ("oob", 1, [dict(type="INT32", shape=[2], vals=[0, 3]), tbl], [dict(type="FLOAT32")]),
        ("neg", 1, [dict(type="INT32", shape=[2], vals=[-1, 0]), tbl], [dict(type="FLOAT32")]),
        ("ids2d", 1, [dict(type="INT32", shape=[1, 2], vals=[0, 1]), tbl], [dict(type="FLOAT32")]),
        ("ids64", 1, [dict(type="INT64", shape=[2], vals=[0, 1]), tbl], [dict(type="FLOAT32")]),
        ("tbl1d", 1, [dict(type="INT32", shape=[2], vals=[0, 1]), dict(type="FLOAT32", shape=[3], vals=[1, 2, 3])], [dict(type="FLOAT32")]),
        ("tbl_empty", 1, [dict(type="INT32", shape=[2], vals=[0, 1]), dict(type="FLOAT32", shape=[0, 2], vals=[])], [dict(type="FLOAT32")]),
        ("tbl_empty_noids", 1, [dict(type="INT32", shape=[0], vals=[]), dict(type="FLOAT32", shape=[0, 2], vals=[])], [dict(type="FLOAT32")]),
        ("tbl_bool", 1, [dict(type="INT32", shape=[1], vals=[0]), dict(type="BOOL", shape=[2, 2], vals=[True, False, True, True])], [dict(type="BOOL")]),
        ("one_input", 1, [dict(type="INT32", shape=[1], vals=[0])], [dict(type="FLOAT32")]),
        ("i8_out_u8", 3, [dict(type="INT32", shape=[1], vals=[1]), dict(type="INT8", shape=[2, 2], vals=[1, -2, 3, -4], scale=0.5, zp=0)], [dict(type="UINT8", scale=0.5, zp=0)]),
        ("f_out_i8", 1, [dict(type="INT32", shape=[1], vals=[1]), tbl], [dict(type="INT8", scale=0.5, zp=0)]),
        ("i16_out_f", 1, [dict(type="INT32", shape=[1], vals=[1]), dict(type="INT16", shape=[2, 2], vals=[1, -2, 3, -4], scale=0.5, zp=0)], [dict(type="FLOAT32")]),
    ]
    for name, ver, ins, outs in bad:
        run_case("el_bad_" + name, "EMBEDDING_LOOKUP", ver, ins, outs)


# Cases in which TFLite 2.9 runs without an error but computes nothing
# meaningful: unquantized int8 tensors (scale 0), an output or a table of
# another type than the kernel writes (TFLite writes past the output's
# buffer), FAKE_QUANT without options (min = max = 0: NaN), EMBEDDING_LOOKUP
# in an empty table and an INT8 BATCH_MATMUL summing over nothing (the output
# is left unwritten). The kernels refuse them, or compute the sums.
UNDEFINED = {"bmm_empty_INT8_k", "bmm_empty_FLOAT32_k", "bmm_bad_i8_noq", "bmm_bad_hybrid_noq", "bmm_out_i8_for_f", "fq_noopts", "fq_i8",
             "el_bad_tbl_empty", "el_bad_i8_out_u8", "el_bad_f_out_i8"}


def write(path, ops):
    keep = []
    for c in CASES:
        if c.pop("op") not in ops or c["name"] in UNDEFINED:
            continue
        err = c.get("error")
        if err is not None:
            print("%s: %s" % (c["name"], err.splitlines()[-1] if err else ""), file=sys.stderr)
            if err.startswith("crash"):
                continue  # no oracle
            c["error"] = c.pop("error_stage")
        keep.append(c)
    data = json.dumps(keep, separators=(",", ":")).encode()
    with open(path, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)
    print(len(keep), "cases written to", path)


def main():
    here = os.path.dirname(OUT)
    gen_batch_matmul()
    print("hybrid cases in which TFLite 2.9 computes nonsense, not recorded:", " ".join(HYBRID_DROPPED))
    write(OUT, {"BATCH_MATMUL"})
    CASES.clear()
    gen_fake_quant()
    write(os.path.join(here, "fake_quant_tflite29.json.gz"), {"FAKE_QUANT"})
    CASES.clear()
    gen_embedding_lookup()
    write(os.path.join(here, "embedding_lookup_tflite29.json.gz"), {"EMBEDDING_LOOKUP"})


if __name__ == "__main__":
    main()
