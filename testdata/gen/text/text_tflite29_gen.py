#!/usr/bin/env python3
"""text_tflite29_gen.py: regenerate text_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that TestTextAgainstTFLite29 compares the text
family with: LSH_PROJECTION (SPARSE and DENSE, every input type STRING
included, rows whose keys reach every length class of farmhash's
Fingerprint64, with and without weights, 0 to 32 bits), HASHTABLE_LOOKUP
(every value type and rank, STRING values, missing keys, keys whose
differences overflow TFLite's 32-bit comparator) and SKIP_GRAM (gram sizes,
skips, all n-grams, TFLite's white-space splitting), with the shapes,
types, options and versions TFLite 2.9 refuses. The hash-table resource
ops (HASHTABLE and the ops that fill and read it) need several operators
and Invokes: core/internal/flowmodels records them.

usage: text_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
codes = tflite29.builtin_codes(SCHEMA)
CASES = []


def run_case(name, op, version, inputs, outputs, options_type=None, options=None):
    m, raw = tflite29.model(op, codes[op], version, inputs, outputs, lambda t, i: None, options_type, options)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, m, raw)
    case = {"name": name, "model": base64.b64encode(tfl).decode(), "inputs": [], "outputs": []}
    for t in inputs:
        if t is None:
            case["inputs"].append(None)
            continue
        case["inputs"].append({"type": t["type"], "shape": t["shape"], "const": bool(t.get("const")),
                               "data": base64.b64encode(pack(t["type"], t["vals"])).decode()})
    if p.returncode != 0:
        case["error"] = tflite29.stage(p)
        case["why"] = (p.stderr + p.stdout).strip()[-200:]
    else:
        for o, (mo, data) in zip(outputs, outs):
            case["outputs"].append({"type": o["type"], "shape": mo["shape"], "data": base64.b64encode(data).decode()})
    CASES.append(case)
    return case


RANGES = {"UINT8": (0, 255), "INT8": (-128, 127), "INT16": (-32768, 32767), "INT32": (-2**31, 2**31 - 1),
          "INT64": (-2**63, 2**63 - 1)}


def vals(rng, typ, n):
    if typ == "FLOAT32":
        return [rng.uniform(-5, 5) for _ in range(n)]
    if typ == "BOOL":
        return [rng.random() < 0.5 for _ in range(n)]
    lo, hi = RANGES[typ]
    return [rng.randint(lo, hi) for _ in range(n)]


SIZE = {"FLOAT32": 4, "INT32": 4, "UINT8": 1, "INT8": 1, "INT16": 2, "INT64": 8, "BOOL": 1}


def lsh(rng):
    kinds = [("SPARSE", "s"), ("DENSE", "d")]
    trial = 0
    # Row sizes (bytes) chosen so that the hashed key (4 + row bytes) falls
    # in each of Fingerprint64's length classes: 5-16, 17-32, 33-64, 65-128,
    # over 128.
    for row_bytes in [1, 4, 8, 12, 13, 16, 28, 29, 32, 60, 61, 64, 100, 124, 125, 200, 256]:
        for typ in ["FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16", "BOOL"]:
            if row_bytes % SIZE[typ]:
                continue
            per_row = row_bytes // SIZE[typ]
            rows = rng.randint(1, 4)
            shape = [rows, per_row] if rng.random() < 0.7 or per_row == 1 else [rows, 1, per_row]
            if per_row == 1 and rng.random() < 0.5:
                shape = [rows]
            nh, nb = rng.randint(1, 4), rng.randint(1, 12)
            kind, k = kinds[trial % 2]
            ins = [dict(type="FLOAT32", shape=[nh, nb], vals=[rng.uniform(-100, 100) for _ in range(nh * nb)], const=trial % 3 != 0),
                   dict(type=typ, shape=shape, vals=vals(rng, typ, nelem(shape)))]
            if trial % 3 == 1:
                ins.append(dict(type="FLOAT32", shape=[rows], vals=[rng.choice([0.0, 1.0, -1.0, rng.uniform(-2, 2)]) for _ in range(rows)], const=trial % 2 == 0))
            run_case("lsh_%s_%s_r%d_%d" % (k, typ, row_bytes, trial), "LSH_PROJECTION", 1, ins, [dict(type="INT32")],
                     "LSHProjectionOptions", {"type": kind})
            trial += 1
    seeds = lambda nh, nb: dict(type="FLOAT32", shape=[nh, nb], vals=[rng.uniform(-100, 100) for _ in range(nh * nb)], const=True)
    x = dict(type="INT32", shape=[3, 2], vals=vals(rng, "INT32", 6))
    for kind, k in kinds:
        # Many bits: the sparse signature overflows, and at 32 bits TFLite's
        # 1<<32 is taken mod 32.
        for nb in [0, 16, 30, 31, 32]:
            run_case("lsh_%s_bits%d" % (k, nb), "LSH_PROJECTION", 1, [seeds(3, nb), x], [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        run_case("lsh_%s_bits33" % k, "LSH_PROJECTION", 1, [seeds(2, 33), x], [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        run_case("lsh_%s_nohash" % k, "LSH_PROJECTION", 1, [seeds(0, 4), x], [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        run_case("lsh_%s_seeds3d" % k, "LSH_PROJECTION", 1, [dict(type="FLOAT32", shape=[2, 2, 2], vals=[1.0] * 8, const=True), x],
                 [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        run_case("lsh_%s_scalar_in" % k, "LSH_PROJECTION", 1, [seeds(2, 3), dict(type="INT32", shape=[], vals=[5])],
                 [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        run_case("lsh_%s_weights_mismatch" % k, "LSH_PROJECTION", 1, [seeds(2, 3), x, dict(type="FLOAT32", shape=[2], vals=[1.0, 2.0])],
                 [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        run_case("lsh_%s_weights_2d" % k, "LSH_PROJECTION", 1, [seeds(2, 3), x, dict(type="FLOAT32", shape=[3, 1], vals=[1.0, 2.0, 3.0])],
                 [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        run_case("lsh_%s_v2" % k, "LSH_PROJECTION", 2, [seeds(2, 3), x], [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        # Special seeds: zeros of both signs, huge values.
        run_case("lsh_%s_special_seeds" % k, "LSH_PROJECTION", 1,
                 [dict(type="FLOAT32", shape=[2, 4], vals=[0.0, -0.0, 3.4e38, -3.4e38, 1e-45, 1.0, -1.0, 0.5], const=True), x],
                 [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        # Denormal weights: zeros for TFLite's library, which runs with DAZ.
        run_case("lsh_%s_denormal_weights" % k, "LSH_PROJECTION", 1, [seeds(2, 5), x, dict(type="FLOAT32", shape=[3], vals=[1e-40, -1e-42, 0.0])],
                 [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
        # Zero weights: the score is 0 and every bit 0.
        run_case("lsh_%s_zero_weights" % k, "LSH_PROJECTION", 1, [seeds(2, 5), x, dict(type="FLOAT32", shape=[3], vals=[0.0] * 3)],
                 [dict(type="INT32")], "LSHProjectionOptions", {"type": kind})
    # No rows: refused, with or without seeds.
    empty = dict(type="INT32", shape=[0, 2], vals=[])
    run_case("lsh_empty_in_nohash", "LSH_PROJECTION", 1, [seeds(0, 3), empty], [dict(type="INT32")], "LSHProjectionOptions", {"type": "SPARSE"})
    run_case("lsh_empty_in", "LSH_PROJECTION", 1, [seeds(2, 3), empty], [dict(type="INT32")], "LSHProjectionOptions", {"type": "DENSE"})
    # Types: TFLite 2.9's lsh_projection.cc reads seeds and weights as
    # float and writes int32 whatever the tensors' types. Not recorded: an
    # output with 8-byte elements (TFLite fills half its bytes, the rest is
    # whatever the arena held; delego refuses it).
    for name, ins, out in [
            ("int32_seeds", [dict(type="INT32", shape=[2, 3], vals=[1] * 6, const=True), x], "INT32"),
            ("int32_weights", [seeds(2, 3), x, dict(type="INT32", shape=[3], vals=[1, 2, 3])], "INT32"),
            ("float_weights_seeds", [dict(type="INT32", shape=[2, 3], vals=vals(rng, "INT32", 6)), x,
                                     dict(type="INT32", shape=[3], vals=vals(rng, "INT32", 3))], "INT32"),
            ("float_out", [seeds(2, 3), x], "FLOAT32")]:
        run_case("lsh_type_" + name, "LSH_PROJECTION", 1, ins, [dict(type=out)], "LSHProjectionOptions", {"type": "DENSE"})
    run_case("lsh_unknown", "LSH_PROJECTION", 1, [seeds(2, 3), x], [dict(type="INT32")], "LSHProjectionOptions", {"type": "UNKNOWN"})
    run_case("lsh_no_options", "LSH_PROJECTION", 1, [seeds(2, 3), x], [dict(type="INT32")])
    run_case("lsh_one_input", "LSH_PROJECTION", 1, [seeds(2, 3)], [dict(type="INT32")], "LSHProjectionOptions", {"type": "DENSE"})


def lookup(rng):
    trial = 0
    for typ in ["FLOAT32", "INT32", "INT64", "UINT8", "INT8", "INT16", "BOOL"]:
        for vshape in [[], [3], [2, 2]]:
            for _ in range(2):
                rows = rng.randint(1, 9)
                keys = sorted(rng.sample(range(-50, 50), rows))
                n = rng.randint(0, 8)
                look = [rng.choice(keys) if rng.random() < 0.6 else rng.randint(-60, 60) for _ in range(n)]
                vs = [rows] + vshape
                run_case("lookup_%s_%d" % (typ, trial), "HASHTABLE_LOOKUP", 1,
                         [dict(type="INT32", shape=[n], vals=look),
                          dict(type="INT32", shape=[rows], vals=keys, const=trial % 2 == 0),
                          dict(type=typ, shape=vs, vals=vals(rng, typ, nelem(vs)), const=trial % 3 == 0)],
                         [dict(type=typ), dict(type="UINT8")])
                trial += 1
    f = lambda n: dict(type="FLOAT32", shape=[n], vals=vals(rng, "FLOAT32", n))
    # Keys far apart: TFLite's comparator (a - b in int) overflows, and
    # its bsearch then goes the wrong way.
    big = [-2**31, -2**30, -5, 0, 7, 2**30, 2**31 - 1]
    run_case("lookup_extreme_keys", "HASHTABLE_LOOKUP", 1,
             [dict(type="INT32", shape=[10], vals=[-2**31, 2**31 - 1, 0, 7, -5, 2**30, -2**30, 1, -2**31 + 1, 2**31 - 2]),
              dict(type="INT32", shape=[7], vals=big), f(7)], [dict(type="FLOAT32"), dict(type="UINT8")])
    for i in range(4):
        keys = sorted(rng.sample([rng.randint(-2**31, 2**31 - 1) for _ in range(40)], 12))
        look = [rng.choice(keys) for _ in range(12)] + [rng.randint(-2**31, 2**31 - 1) for _ in range(4)]
        run_case("lookup_wide_keys_%d" % i, "HASHTABLE_LOOKUP", 1,
                 [dict(type="INT32", shape=[16], vals=look), dict(type="INT32", shape=[12], vals=keys), f(12)],
                 [dict(type="FLOAT32"), dict(type="UINT8")])
    run_case("lookup_unsorted", "HASHTABLE_LOOKUP", 1,
             [dict(type="INT32", shape=[6], vals=[1, 2, 3, 4, 5, 6]), dict(type="INT32", shape=[6], vals=[6, 5, 4, 3, 2, 1]), f(6)],
             [dict(type="FLOAT32"), dict(type="UINT8")])
    run_case("lookup_dup_keys", "HASHTABLE_LOOKUP", 1,
             [dict(type="INT32", shape=[3], vals=[2, 3, 1]), dict(type="INT32", shape=[5], vals=[1, 2, 2, 2, 3]), f(5)],
             [dict(type="FLOAT32"), dict(type="UINT8")])
    ok = lambda: [dict(type="INT32", shape=[2], vals=[1, 2]), dict(type="INT32", shape=[3], vals=[1, 2, 3]), f(3)]
    run_case("lookup_v2", "HASHTABLE_LOOKUP", 2, ok(), [dict(type="FLOAT32"), dict(type="UINT8")])
    run_case("lookup_hits_int32", "HASHTABLE_LOOKUP", 1, ok(), [dict(type="FLOAT32"), dict(type="INT32")])
    run_case("lookup_out_type", "HASHTABLE_LOOKUP", 1, ok(), [dict(type="INT32"), dict(type="UINT8")])
    bad = ok()
    bad[0] = dict(type="INT64", shape=[2], vals=[1, 2])
    run_case("lookup_int64_lookup", "HASHTABLE_LOOKUP", 1, bad, [dict(type="FLOAT32"), dict(type="UINT8")])
    bad = ok()
    bad[1] = dict(type="INT64", shape=[3], vals=[1, 2, 3])
    run_case("lookup_int64_keys", "HASHTABLE_LOOKUP", 1, bad, [dict(type="FLOAT32"), dict(type="UINT8")])
    bad = ok()
    bad[0] = dict(type="INT32", shape=[1, 2], vals=[1, 2])
    run_case("lookup_2d_lookup", "HASHTABLE_LOOKUP", 1, bad, [dict(type="FLOAT32"), dict(type="UINT8")])
    bad = ok()
    bad[1] = dict(type="INT32", shape=[3, 1], vals=[1, 2, 3])
    run_case("lookup_2d_keys", "HASHTABLE_LOOKUP", 1, bad, [dict(type="FLOAT32"), dict(type="UINT8")])
    bad = ok()
    bad[2] = f(4)
    run_case("lookup_rows_mismatch", "HASHTABLE_LOOKUP", 1, bad, [dict(type="FLOAT32"), dict(type="UINT8")])
    bad = ok()
    bad[2] = dict(type="FLOAT32", shape=[], vals=[1.0])
    run_case("lookup_scalar_values", "HASHTABLE_LOOKUP", 1, bad, [dict(type="FLOAT32"), dict(type="UINT8")])
    run_case("lookup_one_output", "HASHTABLE_LOOKUP", 1, ok(), [dict(type="FLOAT32")])


WORDS = ["a", "the", "cat", "sat", "on", "mat", "über", "x" * 40, "", "hello world"]


def sentence(rng, n, seps=(" ",)):
    return "".join(rng.choice(WORDS[:7]) + rng.choice(seps) for _ in range(n)).rstrip()


def strings(rng):
    """The STRING parts: LSH_PROJECTION rows of a string buffer,
    HASHTABLE_LOOKUP of STRING values, SKIP_GRAM."""
    seeds = lambda nh, nb: dict(type="FLOAT32", shape=[nh, nb], vals=[rng.uniform(-100, 100) for _ in range(nh * nb)], const=True)
    for i in range(12):
        n = rng.randint(1, 6)
        vals_ = [rng.choice(WORDS) for _ in range(n)]
        shape = [n] if i % 3 else [1, n]
        if i % 4 == 3:
            shape = [n, 1]
        ins = [seeds(rng.randint(1, 3), rng.randint(1, 10)), dict(type="STRING", shape=shape, vals=vals_, const=i % 2 == 0)]
        if i % 3 == 2:
            ins.append(dict(type="FLOAT32", shape=[shape[0]], vals=[rng.uniform(-1, 1) for _ in range(shape[0])]))
        run_case("lsh_string_%d" % i, "LSH_PROJECTION", 1, ins, [dict(type="INT32")], "LSHProjectionOptions",
                 {"type": "SPARSE" if i % 2 else "DENSE"})
    for i in range(8):
        rows = rng.randint(1, 8)
        keys = sorted(rng.sample(range(-20, 20), rows))
        n = rng.randint(0, 6)
        look = [rng.choice(keys) if rng.random() < 0.6 else rng.randint(-25, 25) for _ in range(n)]
        run_case("lookup_string_%d" % i, "HASHTABLE_LOOKUP", 1,
                 [dict(type="INT32", shape=[n], vals=look), dict(type="INT32", shape=[rows], vals=keys, const=i % 2 == 0),
                  dict(type="STRING", shape=[rows], vals=[rng.choice(WORDS) for _ in range(rows)], const=i % 3 == 0)],
                 [dict(type="STRING"), dict(type="UINT8")])
    run_case("lookup_string_2d", "HASHTABLE_LOOKUP", 1,
             [dict(type="INT32", shape=[1], vals=[1]), dict(type="INT32", shape=[2], vals=[1, 2]),
              dict(type="STRING", shape=[2, 1], vals=["a", "b"])], [dict(type="STRING"), dict(type="UINT8")])
    run_case("lookup_string_out_type", "HASHTABLE_LOOKUP", 1,
             [dict(type="INT32", shape=[1], vals=[1]), dict(type="INT32", shape=[2], vals=[1, 2]),
              dict(type="STRING", shape=[2], vals=["a", "b"])], [dict(type="INT32"), dict(type="UINT8")])
    # SKIP_GRAM: sizes, skips, all n-grams, and TFLite's word splitting
    # (leading, repeated and trailing white space, tabs and newlines).
    for i in range(30):
        ng, skip, allg = rng.randint(1, 4), rng.randint(0, 3), rng.random() < 0.4
        sent = sentence(rng, rng.randint(0, 8), (" ", " ", "  ", "\t", "\n"))
        run_case("skipgram_%d" % i, "SKIP_GRAM", 1, [dict(type="STRING", shape=[1], vals=[sent], const=i % 2 == 0)],
                 [dict(type="STRING")], "SkipGramOptions", {"ngram_size": ng, "max_skip_size": skip, "include_all_ngrams": allg})
    for name, sent in [("leading_space", " the cat sat"), ("lead_trail", "  the cat sat  "), ("one_space", " "),
                       ("empty", ""), ("tabs", "the\tcat\x0bsat\x0con\rmat"), ("one_word", "cat"),
                       ("high_bytes", b"caf\xe9 \xff\xfe mat"), ("space_word_end", "the cat  x")]:
        for ng, skip, allg in [(2, 1, False), (1, 0, True), (3, 2, True)]:
            run_case("skipgram_%s_%d%d%d" % (name, ng, skip, allg), "SKIP_GRAM", 1, [dict(type="STRING", shape=[1], vals=[sent])],
                     [dict(type="STRING")], "SkipGramOptions", {"ngram_size": ng, "max_skip_size": skip, "include_all_ngrams": allg})
    s3 = dict(type="STRING", shape=[1], vals=["a b c d"])
    for name, opts in [("ngram0", {"ngram_size": 0, "max_skip_size": 1}), ("ngram_neg", {"ngram_size": -2, "max_skip_size": 1}),
                       ("skip_neg", {"ngram_size": 2, "max_skip_size": -1}), ("ngram_big", {"ngram_size": 9, "max_skip_size": 1})]:
        run_case("skipgram_" + name, "SKIP_GRAM", 1, [s3], [dict(type="STRING")], "SkipGramOptions", opts)
    run_case("skipgram_two_sentences", "SKIP_GRAM", 1, [dict(type="STRING", shape=[2], vals=["a b c", "d e"])], [dict(type="STRING")],
             "SkipGramOptions", {"ngram_size": 2, "max_skip_size": 0})
    run_case("skipgram_no_options", "SKIP_GRAM", 1, [s3], [dict(type="STRING")])
    run_case("skipgram_v2", "SKIP_GRAM", 2, [s3], [dict(type="STRING")], "SkipGramOptions", {"ngram_size": 2, "max_skip_size": 1})
    run_case("skipgram_int_in", "SKIP_GRAM", 1, [dict(type="INT32", shape=[1], vals=[1])], [dict(type="STRING")],
             "SkipGramOptions", {"ngram_size": 2, "max_skip_size": 1})
    run_case("skipgram_int_out", "SKIP_GRAM", 1, [s3], [dict(type="INT32")], "SkipGramOptions", {"ngram_size": 2, "max_skip_size": 1})


lsh(random.Random(2930))
strings(random.Random(2932))
lookup(random.Random(2931))
with gzip.open(OUT, "wt") as fo:
    json.dump(CASES, fo)
fails = sum(1 for c in CASES if c.get("error"))
print("%d cases (%d that TFLite refuses)" % (len(CASES), fails))
for c in CASES:
    if c.get("error"):
        print("  %s: %s %s" % (c["name"], c["error"], c["why"][-100:].replace("\n", " ")))
