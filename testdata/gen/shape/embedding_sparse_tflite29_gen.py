#!/usr/bin/env python3
"""embedding_sparse_tflite29_gen.py: regenerate embedding_sparse_tflite29.json.gz,
the outputs of the real TensorFlow Lite 2.9 that
TestEmbeddingLookupSparseAgainstTFLite29 compares EMBEDDING_LOOKUP_SPARSE
with.

Each case is a one-operator model (written as JSON, turned into a .tflite by
flatc with model/schema/schema.fbs) run once by the runner built from
../tflite29_run.c (see its header) on pseudo-random inputs: every combiner,
sparse ranks 1 to 3, value tables of rank 2 to 4, sorted and unsorted
indices (a row that comes back is divided again, as TFLite does), weights
that sum to zero, constant and computed inputs, empty lookups, ids outside
the table, and the inputs TFLite refuses (other types and ranks, version
2). TFLite 2.9 writes past its output for an index outside the dense shape
and reads the bytes of a value table of another type as floats: those
inputs are not recorded (delego refuses them). The file keeps the model,
the non-constant inputs and TFLite's outputs, or the stage at which TFLite
failed.

usage: embedding_sparse_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
CASES = []
CODES = tflite29.builtin_codes(SCHEMA)
OP = "EMBEDDING_LOOKUP_SPARSE"


def tensor(typ, shape, vals, const=False):
    return dict(type=typ, shape=shape, vals=vals, const=const)


def run_case(name, inputs, combiner="SUM", version=1, out_type="FLOAT32", options=True):
    model, raw = tflite29.model(OP, CODES[OP], version, inputs, [dict(type=out_type)], lambda t, i: None,
                                "EmbeddingLookupSparseOptions" if options else None, {"combiner": combiner} if options else None)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, model, raw)
    if p.returncode < 0:
        return  # TFLite crashed: no oracle
    case = {"name": name, "inputs": [], "outputs": []}
    for t in inputs:
        rec = {"type": t["type"], "shape": t["shape"], "const": t["const"]}
        if not t["const"]:  # constant data is in the model's buffers
            rec["data"] = base64.b64encode(pack(t["type"], t["vals"])).decode()
        case["inputs"].append(rec)
    if p.returncode != 0:
        case["error"] = tflite29.stage(p)
    else:
        for mo, data in outs:
            case["outputs"].append({"type": out_type, "shape": mo["shape"], "data": base64.b64encode(data).decode()})
    case["model"] = base64.b64encode(tfl).decode()
    CASES.append(case)


def fvals(rng, n):
    return [rng.randint(-512, 512) / 64 for _ in range(n)]


def sparse(rng, dense, n, ordered):
    """n index tuples inside dense, sorted unless not ordered."""
    idx = [[rng.randrange(d) for d in dense] for _ in range(n)]
    return sorted(idx) if ordered else idx


def gen_random(rng, trial):
    combiner = ["SUM", "MEAN", "SQRTN"][trial % 3]
    rank = rng.randint(1, 3)
    dense = [rng.randint(1, 4) for _ in range(rank)]
    n = 0 if trial % 20 == 11 else rng.randint(1, 9)
    vshape = [rng.randint(1, 6)] + [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
    idx = sparse(rng, dense, n, trial % 4 != 3)
    ids = [rng.randrange(vshape[0]) for _ in range(n)]
    if trial % 10 == 7 and n:
        ids[-1] = vshape[0]  # outside the table
    weights = [rng.choice([1, 0.5, 2, -1, 0.25, 3]) * rng.choice([1, 1, -1]) for _ in range(n)]
    if trial % 9 == 5 and n >= 2:
        weights[1] = -weights[0]  # a MEAN over them divides by zero
        idx[1] = list(idx[0])
    c = trial % 5 == 2
    run_case("els_%d" % trial, [tensor("INT32", [n], ids, const=c),
                                tensor("INT32", [n, rank], [v for t in idx for v in t], const=c),
                                tensor("INT32", [rank], dense, const=trial % 3 == 1),
                                tensor("FLOAT32", [n], weights, const=c),
                                tensor("FLOAT32", vshape, fvals(rng, nelem(vshape)), const=trial % 2 == 0)],
             combiner)


def gen_edges(rng):
    ids = tensor("INT32", [3], [0, 2, 1])
    idx = tensor("INT32", [3, 2], [0, 0, 0, 1, 2, 0])
    dense = tensor("INT32", [2], [3, 2])
    w = tensor("FLOAT32", [3], [1, 2, 3])
    val = tensor("FLOAT32", [3, 2], fvals(rng, 6), const=True)
    for v in (1, 2):
        run_case("els_version%d" % v, [ids, idx, dense, w, val], version=v)
    run_case("els_no_options", [ids, idx, dense, w, val], options=False)
    run_case("els_ids_i64", [tensor("INT64", [3], [0, 2, 1]), idx, dense, w, val])
    run_case("els_ids_2d", [tensor("INT32", [3, 1], [0, 2, 1]), idx, dense, w, val])
    run_case("els_indices_1d", [ids, tensor("INT32", [6], [0, 0, 0, 1, 2, 0]), dense, w, val])
    run_case("els_dense_rank", [ids, idx, tensor("INT32", [3], [3, 2, 1]), w, val])
    run_case("els_weights_i32", [ids, idx, dense, tensor("INT32", [3], [1, 2, 3]), val])
    run_case("els_weights_count", [ids, idx, dense, tensor("FLOAT32", [2], [1, 2]), val])
    run_case("els_value_1d", [ids, idx, dense, w, tensor("FLOAT32", [3], [1, 2, 3], const=True)])
    run_case("els_out_i32", [ids, idx, dense, w, val], out_type="INT32")
    run_case("els_id_negative", [tensor("INT32", [3], [0, -1, 1]), idx, dense, w, val])
    # One bucket visited twice: divided twice, as TFLite does.
    run_case("els_revisit_mean", [tensor("INT32", [3], [0, 1, 2]), tensor("INT32", [3, 2], [0, 0, 1, 0, 0, 1]),
                                  dense, w, val], combiner="MEAN")
    run_case("els_revisit_sqrtn", [tensor("INT32", [3], [0, 1, 2]), tensor("INT32", [3, 2], [0, 0, 1, 0, 0, 1]),
                                   dense, w, val], combiner="SQRTN")


def main():
    rng = random.Random(2930)
    for trial in range(120):
        gen_random(rng, trial)
    gen_edges(rng)
    with gzip.GzipFile(OUT, "wb", mtime=0) as f:
        f.write(json.dumps(CASES, separators=(",", ":")).encode())
    print(len(CASES), "cases,", sum(1 for c in CASES if "error" in c), "TFLite errors")


if __name__ == "__main__":
    main()
