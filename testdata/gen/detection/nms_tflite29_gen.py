#!/usr/bin/env python3
"""nms_tflite29_gen.py: regenerate nms_tflite29.json.gz, the real TensorFlow
Lite 2.9 outputs that TestNMSAgainstTFLite29 compares NON_MAX_SUPPRESSION_V4
and _V5 with: random boxes (corners in either order, some empty, many
overlapping), scores with ties, thresholds from 0 to 1, constant and
runtime max_output_size, soft suppression, and the types and versions
TFLite 2.9 refuses.

usage: nms_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
codes = tflite29.builtin_codes(SCHEMA)
CASES = []


def run_case(name, op, version, inputs, outputs):
    m, raw = tflite29.model(op, codes[op], version, inputs, outputs, lambda t, i: None)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, m, raw)
    case = {"name": name, "model": base64.b64encode(tfl).decode(), "inputs": [], "outputs": []}
    for t in inputs:
        case["inputs"].append({"type": t["type"], "shape": t["shape"], "const": bool(t.get("const")),
                               "data": base64.b64encode(pack(t["type"], t["vals"])).decode()})
    if p.returncode != 0:
        case["error"] = tflite29.stage(p)
    else:
        for o, (mo, data) in zip(outputs, outs):
            case["outputs"].append({"type": o["type"], "shape": mo["shape"], "data": base64.b64encode(data).decode()})
    CASES.append(case)


def boxes(rng, n):
    out = []
    for _ in range(n):
        if rng.random() < 0.3 and out:  # near an earlier box: overlaps
            y1, x1, y2, x2 = out[-4 * rng.randint(1, len(out) // 4):][:4]
            j = [rng.uniform(-0.1, 0.1) for _ in range(4)]
            b = [y1 + j[0], x1 + j[1], y2 + j[2], x2 + j[3]]
        else:
            b = [rng.uniform(0, 1) for _ in range(4)]
        if rng.random() < 0.05:
            b[2] = b[0]  # no area
        out += b
    return out


def main():
    rng = tflite29.seeded(29)
    for trial in range(60):
        n = rng.choice([0, 1, 2, 5, 9, 16, 40])
        soft = trial % 2 == 1
        op = "NON_MAX_SUPPRESSION_V5" if soft else "NON_MAX_SUPPRESSION_V4"
        scores = [rng.choice([0.5, 0.25, 0.75]) if rng.random() < 0.3 else rng.uniform(0, 1) for _ in range(n)]
        max_out = rng.choice([0, 1, 3, n, n + 4])
        ins = [dict(type="FLOAT32", shape=[n, 4], vals=boxes(rng, n)),
               dict(type="FLOAT32", shape=[n], vals=scores),
               dict(type="INT32", shape=[], vals=[max_out], const=trial % 3 != 0),
               dict(type="FLOAT32", shape=[], vals=[rng.choice([0.0, 0.3, 0.5, 0.7, 1.0])], const=True),
               dict(type="FLOAT32", shape=[], vals=[rng.choice([0.0, 0.1, 0.4, -1.0])], const=True)]
        outs = [dict(type="INT32"), dict(type="INT32")]
        if soft:
            ins.append(dict(type="FLOAT32", shape=[], vals=[rng.choice([0.0, 0.1, 0.5, 2.0])], const=True))
            outs = [dict(type="INT32"), dict(type="FLOAT32"), dict(type="INT32")]
        run_case("nms_%d" % trial, op, 1, ins, outs)
    # What TFLite 2.9 refuses: quantized boxes, a version above 1, a
    # negative max_output_size.
    base = lambda t, mo: [dict(type=t, shape=[2, 4], vals=[0, 0, 1, 1, 0, 0, 1, 1]), dict(type=t, shape=[2], vals=[1, 2]),
                          dict(type="INT32", shape=[], vals=[mo], const=True),
                          dict(type=t, shape=[], vals=[0], const=True), dict(type=t, shape=[], vals=[0], const=True)]
    run_case("refuse_int8", "NON_MAX_SUPPRESSION_V4", 1, base("INT8", 2), [dict(type="INT32"), dict(type="INT32")])
    run_case("refuse_v2", "NON_MAX_SUPPRESSION_V4", 2, base("FLOAT32", 2), [dict(type="INT32"), dict(type="INT32")])
    run_case("refuse_negative", "NON_MAX_SUPPRESSION_V4", 1, base("FLOAT32", -1), [dict(type="INT32"), dict(type="INT32")])
    data = json.dumps(CASES, separators=(",", ":")).encode()
    with open(OUT, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)
    print(len(CASES), "cases,", sum(1 for c in CASES if "error" in c), "refused, written to", OUT)


if __name__ == "__main__":
    main()
