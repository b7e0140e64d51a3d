#!/usr/bin/env python3
"""random_tflite29_gen.py: regenerate random_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that the random family's tests compare
RANDOM_UNIFORM, RANDOM_STANDARD_NORMAL and MULTINOMIAL with.

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc) with nonzero seeds, run once by the runner built from ../tflite29_run.c
(its outputs are the case's "outputs", which kerneltest.ReplayTFLite29
replays) and again by the one built from ../tflite29_invoke.c, which Invokes
the same interpreter three times: the second and third Invokes' outputs are
the case's "later" outputs (the generator's state carries over from one
Invoke to the next). Cases that TFLite refuses keep the stage at which it
failed. Seeds 0 and 0 (in their low 32 bits, all that 2.9 keeps of them) ask
TFLite for numbers that differ from run to run:
the generator checks that two runs of such a model differ, and records no
values for them.

usage: random_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz INVOKE_RUNNER
"""
import base64, gzip, json, math, os, random, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
INVOKE = sys.argv[5]
CASES = []
codes = tflite29.builtin_codes(SCHEMA)


def no_quant(t, is_input):
    return None


def invoke3(name):
    """Runs WORK/name.tflite on WORK/name.in.raw three times in one
    interpreter; returns the outputs of each Invoke as (shape, bytes) lists."""
    w = os.path.join(WORK, name)
    p = subprocess.run([INVOKE, w + ".tflite", w + ".in.raw", "3", "-1"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("%s: the invoke runner failed: %s" % (name, p.stderr))
    return [[(o["shape"], bytes.fromhex(o["hex"])) for o in json.loads(line)] for line in p.stdout.splitlines()]


def run_case(name, op, inputs, out_type, seed, seed2, version=1, out_shape=None):
    model, raw = tflite29.model(op, codes[op], version, inputs, [dict(type=out_type, shape=out_shape or [])], no_quant,
                                "RandomOptions", {"seed": seed, "seed2": seed2})
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw)
    case = {"name": name, "model": base64.b64encode(tfl).decode(), "outputs": [],
            "inputs": [{"type": t["type"], "shape": t["shape"], "const": bool(t.get("const")),
                        "data": base64.b64encode(pack(t["type"], t["vals"])).decode()} for t in inputs]}
    if p.returncode != 0:
        case["error"] = ((p.stderr + p.stdout).strip() or "crash rc=%d" % p.returncode)[-300:]
        case["error_stage"] = tflite29.stage(p)
    else:
        for mo, data in outs:
            case["outputs"].append({"type": out_type, "shape": mo["shape"], "data": base64.b64encode(data).decode()})
        if deterministic(seed, seed2):
            runs = invoke3(name)
            first = runs[0][0]
            if first != (outs[0][0]["shape"], outs[0][1]):
                raise SystemExit("%s: the first Invoke differs from the run-once runner's" % name)
            case["later"] = [[{"type": out_type, "shape": s, "data": base64.b64encode(d).decode()} for s, d in r]
                             for r in runs[1:]]
        else:
            again = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw)[2]
            if outs[0][1] and again[0][1] == outs[0][1]:
                raise SystemExit("%s: seeds 0, 0 gave the same values twice" % name)
            case["outputs"] = []
            case["nondeterministic"] = True
    CASES.append(case)
    return case


def deterministic(seed, seed2):
    """Whether TFLite 2.9 draws the same numbers every run: it keeps the
    seeds in 32-bit ints, so only their low 32 bits count."""
    return bool(seed & 0xffffffff or seed2 & 0xffffffff)


def seeds(rng):
    return rng.choice([
        (rng.randint(1, 1 << 20), rng.randint(1, 1 << 20)),
        (rng.randint(1, 1 << 20), 0),
        (0, rng.randint(1, 1 << 20)),
        (rng.randint(-(1 << 63), (1 << 63) - 1), rng.randint(-(1 << 63), (1 << 63) - 1)),
        (-1, -1),
        ((1 << 63) - 1, -(1 << 63)),
    ])


def gen_dist(rng):
    for op in ["RANDOM_UNIFORM", "RANDOM_STANDARD_NORMAL"]:
        shapes = [[], [0], [1], [2], [3], [5], [7], [2, 3], [3, 0, 2], [1, 1, 1, 1], [4, 5, 7], [33, 31], [2, 3, 4, 5, 3]]
        for i, shape in enumerate(shapes):
            for const in (True, False):
                s, s2 = seeds(rng)
                run_case("%s_%d_%s" % (op, i, "c" if const else "d"), op,
                         [dict(type="INT32", shape=[len(shape)], vals=shape, const=const)], "FLOAT32", s, s2)
        # Large enough that Box-Muller meets small uniforms and the
        # float32 arithmetic of the transform is exercised widely.
        run_case("%s_big" % op, op, [dict(type="INT32", shape=[2], vals=[32, 65], const=True)], "FLOAT32", 77, 78)
        sh = [dict(type="INT32", shape=[2], vals=[2, 3], const=True)]
        run_case("%s_seeds00" % op, op, [dict(type="INT32", shape=[1], vals=[64], const=True)], "FLOAT32", 0, 0)
        run_case("%s_seedshigh" % op, op, [dict(type="INT32", shape=[1], vals=[64], const=True)], "FLOAT32", 1 << 32, 5 << 33)
        # What 2.9 refuses.
        run_case("%s_v2" % op, op, sh, "FLOAT32", 1, 2, version=2)
        run_case("%s_int64shape" % op, op, [dict(type="INT64", shape=[2], vals=[2, 3], const=True)], "FLOAT32", 1, 2)
        run_case("%s_rank2shape" % op, op, [dict(type="INT32", shape=[1, 2], vals=[2, 3], const=True)], "FLOAT32", 1, 2)
        for t in ["INT32", "FLOAT64", "INT64", "FLOAT16"]:
            run_case("%s_out_%s" % (op, t), op, sh, t, 1, 2)
        for const in (True, False):
            run_case("%s_negdim_%s" % (op, "c" if const else "d"), op,
                     [dict(type="INT32", shape=[2], vals=[2, -3], const=const)], "FLOAT32", 1, 2)


def logits_vals(rng, n, kind):
    if kind == "plain":
        return [rng.uniform(-4, 4) for _ in range(n)]
    if kind == "wide":
        return [rng.uniform(-200, 200) for _ in range(n)]
    if kind == "flat":
        return [0.5] * n
    special = [float("-inf"), float("inf"), float("nan"), -3.4e38, 3.4e38]
    return [rng.choice(special) if rng.random() < 0.4 else rng.uniform(-3, 3) for _ in range(n)]


def gen_multinomial(rng):
    op = "MULTINOMIAL"
    k = 0
    for out_t in ["INT64", "INT32"]:
        for kind in ["plain", "wide", "flat", "special"]:
            for trial in range(5):
                batch, classes = rng.randint(0 if trial == 0 else 1, 4), rng.randint(1, 12)
                samples = rng.choice([0, 1, 2, 3, 4, 5, 7, 9, 16, 33])
                lconst, nconst = rng.choice([(False, False), (False, True), (True, True), (True, False)])
                s, s2 = seeds(rng)
                run_case("multinomial_%s_%s_%d" % (out_t, kind, trial), op,
                         [dict(type="FLOAT32", shape=[batch, classes], vals=logits_vals(rng, batch * classes, kind), const=lconst),
                          dict(type="INT32", shape=[], vals=[samples], const=nconst)], out_t, s, s2)
                k += 1
        # Every logit non-finite: no class has weight, every index is
        # "classes".
        run_case("multinomial_%s_allinf" % out_t, op,
                 [dict(type="FLOAT32", shape=[2, 3], vals=[float("-inf")] * 3 + [float("nan"), float("inf"), float("-inf")]),
                  dict(type="INT32", shape=[], vals=[5], const=True)], out_t, 5, 6)
        run_case("multinomial_%s_many" % out_t, op,
                 [dict(type="FLOAT32", shape=[3, 40], vals=logits_vals(rng, 120, "plain")),
                  dict(type="INT32", shape=[], vals=[200], const=True)], out_t, 1234, 5678)
    lg = dict(type="FLOAT32", shape=[2, 3], vals=[0.1, 0.2, 0.3, 1, 2, 3])
    ns = dict(type="INT32", shape=[], vals=[4], const=True)
    run_case("multinomial_seeds00", op, [lg, ns], "INT64", 0, 0)
    run_case("multinomial_v2", op, [lg, ns], "INT64", 1, 2, version=2)
    for t in ["FLOAT32", "INT16", "UINT8"]:
        run_case("multinomial_out_%s" % t, op, [lg, ns], t, 1, 2)
    run_case("multinomial_int64samples", op, [lg, dict(type="INT64", shape=[], vals=[4], const=True)], "INT64", 1, 2)
    run_case("multinomial_float64logits", op, [dict(type="FLOAT64", shape=[2, 3], vals=lg["vals"]), ns], "INT64", 1, 2)
    run_case("multinomial_rank1", op, [dict(type="FLOAT32", shape=[3], vals=[1, 2, 3]), ns], "INT64", 1, 2)
    run_case("multinomial_rank3", op, [dict(type="FLOAT32", shape=[1, 2, 3], vals=lg["vals"]), ns], "INT64", 1, 2)
    run_case("multinomial_noclasses", op, [dict(type="FLOAT32", shape=[2, 0], vals=[]), ns], "INT64", 1, 2)
    run_case("multinomial_vecsamples", op, [lg, dict(type="INT32", shape=[1], vals=[4], const=True)], "INT64", 1, 2)
    for const in (True, False):
        run_case("multinomial_negsamples_%s" % ("c" if const else "d"), op,
                 [lg, dict(type="INT32", shape=[], vals=[-2], const=const)], "INT64", 1, 2)


rng = tflite29.seeded(2929)
gen_dist(rng)
gen_multinomial(rng)
with gzip.open(OUT, "wt") as f:
    json.dump(CASES, f)
ok = sum(1 for c in CASES if "error" not in c and not c.get("nondeterministic"))
print("%d cases: %d with values (%d with later Invokes), %d refused by TFLite" %
      (len(CASES), ok, sum(1 for c in CASES if "later" in c), sum(1 for c in CASES if "error" in c)))
