#!/usr/bin/env python3
"""graph_tflite29_gen.py: the conformance cases that need a whole model
rather than one operator fed from outside, run through the real TensorFlow
Lite 2.9: DENSIFY (its input is a sparse constant, which only the model
file can carry), TFLite_Detection_PostProcess (a custom op with FlexBuffers
options and a constant anchor table) and UNIDIRECTIONAL_SEQUENCE_LSTM (the
models of testdata/gen/lstm, whose state tensors live in the model).

Writes conformance/graph_tflite29.json.gz: per case the model, the inputs
of subgraph 0 with their data, and TFLite's outputs (shape and bytes) or
the stage at which it failed. core/conformance_test.go replays them through
delego's interpreter.

usage: graph_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUTDIR
"""
import base64, glob, gzip, json, os, random, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUTDIR = sys.argv[1:5]
os.makedirs(WORK, exist_ok=True)
CODES = tflite29.builtin_codes(SCHEMA)


def b64(b):
    return base64.b64encode(b).decode()


def run_model(name, tfl, inputs):
    """Runs the compiled model tfl on inputs ([(type, shape, bytes)], the
    inputs of subgraph 0 in order) and returns the replay case."""
    path = os.path.join(WORK, name + ".tflite")
    open(path, "wb").write(tfl)
    open(path + ".in", "wb").write(b"".join(b for _, _, b in inputs))
    p = subprocess.run([RUNNER, path, path + ".in", path + ".out", path + ".meta"], capture_output=True, text=True)
    case = {"name": name, "model": b64(tfl),
            "inputs": [{"type": t, "shape": s, "data": b64(b)} for t, s, b in inputs], "outputs": []}
    if p.returncode != 0:
        case["error"] = ((p.stderr + p.stdout).strip() or "crash rc=%d" % p.returncode)[-300:]
        case["error_stage"] = tflite29.stage(p)
        return case
    data, off = open(path + ".out", "rb").read(), 0
    for mo in json.load(open(path + ".meta")):
        case["outputs"].append({"shape": mo["shape"], "data": b64(data[off:off + mo["bytes"]])})
        off += mo["bytes"]
    return case


def compile_json(name, m):
    path = os.path.join(WORK, name + ".json")
    json.dump(m, open(path, "w"))
    subprocess.run(["flatc", "-b", "-o", WORK, SCHEMA, path], check=True, capture_output=True)
    return open(os.path.join(WORK, name + ".tflite"), "rb").read()


def csr(dense, rows, cols):
    """The CSR encoding of a row-major [rows, cols] matrix: row segments,
    column indices and the non-zero values."""
    seg, idx, vals = [0], [], []
    for r in range(rows):
        for c in range(cols):
            v = dense[r * cols + c]
            if v != 0:
                idx.append(c)
                vals.append(v)
        seg.append(len(idx))
    return seg, idx, vals


def densify_case(rng, name, typ, version, density):
    rows, cols = rng.randint(1, 6), rng.randint(1, 9)
    if typ == "FLOAT32":
        dense = [rng.uniform(-2, 2) if rng.random() < density else 0.0 for _ in range(rows * cols)]
    else:
        dense = [rng.randint(-127, 127) if rng.random() < density else 0 for _ in range(rows * cols)]
    seg, idx, vals = csr(dense, rows, cols)
    sparsity = {"traversal_order": [0, 1], "dim_metadata": [
        {"format": "DENSE", "dense_size": rows},
        {"format": "SPARSE_CSR", "array_segments_type": "Int32Vector", "array_segments": {"values": seg},
         "array_indices_type": "Int32Vector", "array_indices": {"values": idx}}]}
    q = {"scale": [0.05], "zero_point": [0]} if typ == "INT8" else None
    sparse_t = {"shape": [rows, cols], "type": typ, "buffer": 1, "name": "sparse", "sparsity": sparsity}
    dense_t = {"shape": [rows, cols], "type": typ, "buffer": 0, "name": "dense"}
    x_t = {"shape": [rows, cols], "type": typ, "buffer": 0, "name": "x"}
    out_t = {"shape": [rows, cols], "type": typ, "buffer": 0, "name": "out"}
    for tt in (sparse_t, dense_t, x_t, out_t):
        if q:
            tt["quantization"] = q
    ops = [{"opcode_index": 0, "inputs": [0], "outputs": [1]},
           {"opcode_index": 1, "inputs": [1, 2], "outputs": [3],
            "builtin_options_type": "AddOptions", "builtin_options": {}}]
    m = {"version": 3,
         "operator_codes": [{"deprecated_builtin_code": CODES["DENSIFY"], "builtin_code": "DENSIFY", "version": version},
                            {"deprecated_builtin_code": CODES["ADD"], "builtin_code": "ADD", "version": 2 if q else 1}],
         "subgraphs": [{"tensors": [sparse_t, dense_t, x_t, out_t], "inputs": [2], "outputs": [3], "operators": ops}],
         "buffers": [{}, {"data": list(pack(typ, vals))}]}
    x = [rng.uniform(-1, 1) for _ in range(rows * cols)] if typ == "FLOAT32" else [rng.randint(-60, 60) for _ in range(rows * cols)]
    return run_model(name, compile_json(name, m), [(typ, [rows, cols], pack(typ, x))])


def postprocess_case(rng, name, version):
    n, classes = rng.randint(1, 12), rng.randint(1, 4)
    regular = rng.random() < 0.5
    opts = {"max_detections": rng.randint(1, 6), "max_classes_per_detection": rng.randint(1, classes),
            "detections_per_class": rng.randint(1, 4), "use_regular_nms": regular,
            "nms_score_threshold": rng.choice([0.0, 0.1, 0.3]), "nms_iou_threshold": rng.choice([0.3, 0.5, 0.6]),
            "num_classes": classes, "y_scale": 10.0, "x_scale": 10.0, "h_scale": 5.0, "w_scale": 5.0}
    anchors = []
    for _ in range(n):
        cy, cx = rng.uniform(0.1, 0.9), rng.uniform(0.1, 0.9)
        anchors += [cy, cx, rng.uniform(0.05, 0.5), rng.uniform(0.05, 0.5)]
    boxes = [rng.uniform(-2, 2) for _ in range(n * 4)]
    scores = [rng.uniform(0, 1) for _ in range(n * (classes + 1))]
    inputs = [dict(type="FLOAT32", shape=[1, n, 4], vals=boxes), dict(type="FLOAT32", shape=[1, n, classes + 1], vals=scores),
              dict(type="FLOAT32", shape=[n, 4], vals=anchors, const=True)]
    outputs = [dict(type="FLOAT32"), dict(type="FLOAT32"), dict(type="FLOAT32"), dict(type="FLOAT32")]
    m, _ = tflite29.model("CUSTOM", CODES["CUSTOM"], version, inputs, outputs, lambda t, i: None,
                          custom=("TFLite_Detection_PostProcess", opts))
    return run_model(name, compile_json(name, m), [("FLOAT32", [1, n, 4], pack("FLOAT32", boxes)),
                                                   ("FLOAT32", [1, n, classes + 1], pack("FLOAT32", scores))])


def lstm_cases():
    """The testdata/gen/lstm models, each run on its recorded input."""
    cases = []
    for path in sorted(glob.glob(os.path.join(HERE, "..", "lstm", "lstm_*.tflite"))):
        base = path[:-len(".tflite")]
        name = os.path.basename(base)
        subprocess.run(["flatc", "--json", "--strict-json", "--raw-binary", "-o", WORK, SCHEMA, "--", path],
                       check=True, capture_output=True)
        m = json.load(open(os.path.join(WORK, name + ".json")))
        sg = m["subgraphs"][0]
        raw = open(base + ".input.raw", "rb").read()
        ins, off = [], 0
        for i in sg["inputs"]:
            t = sg["tensors"][i]
            size = nelem(t["shape"]) * {"FLOAT32": 4, "INT8": 1, "UINT8": 1, "INT16": 2}[t.get("type", "FLOAT32")]
            ins.append((t.get("type", "FLOAT32"), t["shape"], raw[off:off + size]))
            off += size
        case = run_model(name, open(path, "rb").read(), ins)
        if "error" in case:
            sys.exit("%s: TFLite fails on the recorded input: %s" % (name, case["error"]))
        if case["outputs"][0]["data"] != b64(open(base + ".out1.raw", "rb").read()):
            sys.exit("%s: TFLite's output is not the one recorded in testdata/gen/lstm" % name)
        cases.append(case)
    return cases


def main():
    rng = tflite29.seeded(29)
    trials = tflite29.trials()
    cases = []
    for version in (1, 2):
        for typ in ("FLOAT32", "INT8"):
            for k in range(trials if version == 1 else 1):
                cases.append(densify_case(rng, "densify_v%d_%s_%d" % (version, typ.lower(), k), typ, version,
                                          rng.choice([0.0, 0.3, 0.7, 1.0])))
    for version in (1, 2):
        for k in range(4 * trials if version == 1 else 1):
            cases.append(postprocess_case(rng, "postprocess_v%d_%d" % (version, k), version))
    cases += lstm_cases()
    path = os.path.join(OUTDIR, "graph_tflite29.json.gz")
    with open(path, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(cases, separators=(",", ":")).encode())
    print("%s: %d cases, %d run by TFLite" % (path, len(cases), sum(1 for c in cases if "error" not in c)))


main()
