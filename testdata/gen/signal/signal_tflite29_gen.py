#!/usr/bin/env python3
"""signal_tflite29_gen.py: regenerate signal_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that TestSignalAgainstTFLite29 compares the
signal family with: RFFT2D (constant and runtime fft_length, cropping and
zero padding, batches, empty tensors), COMPLEX_ABS, REAL and IMAG (COMPLEX64
and COMPLEX128, extreme values), with the types, shapes and versions TFLite
2.9 refuses.

usage: signal_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
"""
import base64, gzip, json, math, os, random, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
codes = tflite29.builtin_codes(SCHEMA)
CASES = []


def run_case(name, op, version, inputs, outputs, custom=None):
    m, raw = tflite29.model(op, codes[op], version, inputs, outputs, lambda t, i: None, custom=custom)
    p, tfl, outs = tflite29.run(SCHEMA, RUNNER, WORK, name, m, raw)
    case = {"name": name, "model": base64.b64encode(tfl).decode(), "inputs": [], "outputs": []}
    for t in inputs:
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


def floats(rng, n, scale=3.0):
    return [rng.uniform(-scale, scale) for _ in range(n)]


def rfft2d(rng):
    for trial in range(40):
        rank = rng.randint(2, 4)
        shape = [rng.randint(1, 3) for _ in range(rank - 2)] + [rng.randint(1, 9), rng.randint(1, 9)]
        fft = [rng.choice([1, 2, 4, 8, 16]), rng.choice([2, 4, 8, 16])]
        if trial < 4:
            fft = [1 << max(0, (shape[-2] - 1).bit_length()), 1 << max(1, (shape[-1] - 1).bit_length())]
        scale = [3.0, 1e4, 1e-3][trial % 3]
        run_case("rfft2d_%d" % trial, "RFFT2D", 1,
                 [dict(type="FLOAT32", shape=shape, vals=floats(rng, nelem(shape), scale)),
                  dict(type="INT32", shape=[2], vals=fft, const=trial % 4 != 1)],
                 [dict(type="COMPLEX64")])
    x = dict(type="FLOAT32", shape=[4, 4], vals=floats(rng, 16))
    for name, fft in [("w1", [4, 1]), ("h1", [1, 4]), ("h1w1", [1, 1]), ("h3", [3, 4]), ("w6", [4, 6]), ("zero", [0, 4]),
                      ("neg", [-4, 4]), ("big", [64, 64])]:
        for const in (True, False):
            run_case("rfft2d_len_%s_%s" % (name, "c" if const else "d"), "RFFT2D", 1,
                     [x, dict(type="INT32", shape=[2], vals=fft, const=const)], [dict(type="COMPLEX64")])
    for name, shape in [("empty_batch", [0, 3, 4]), ("empty_h", [0, 4]), ("empty_w", [3, 0])]:
        run_case("rfft2d_%s" % name, "RFFT2D", 1,
                 [dict(type="FLOAT32", shape=shape, vals=[0.5] * nelem(shape)), dict(type="INT32", shape=[2], vals=[4, 4], const=True)],
                 [dict(type="COMPLEX64")])
    fl = dict(type="INT32", shape=[2], vals=[4, 4], const=True)
    run_case("rfft2d_rank1", "RFFT2D", 1, [dict(type="FLOAT32", shape=[4], vals=[1, 2, 3, 4]), fl], [dict(type="COMPLEX64")])
    run_case("rfft2d_int32_in", "RFFT2D", 1, [dict(type="INT32", shape=[2, 2], vals=[1, 2, 3, 4]), fl], [dict(type="COMPLEX64")])
    run_case("rfft2d_len_i64", "RFFT2D", 1, [x, dict(type="INT64", shape=[2], vals=[4, 4], const=True)], [dict(type="COMPLEX64")])
    run_case("rfft2d_len_3", "RFFT2D", 1, [x, dict(type="INT32", shape=[3], vals=[4, 4, 4], const=True)], [dict(type="COMPLEX64")])
    run_case("rfft2d_len_2d", "RFFT2D", 1, [x, dict(type="INT32", shape=[1, 2], vals=[4, 4], const=True)], [dict(type="COMPLEX64")])
    # Not recorded: a FLOAT32 output (TFLite's Prepare retypes it to
    # COMPLEX64; delego refuses the model) and infinite inputs (which
    # outputs come out NaN rather than infinite depends on the FFT's order
    # of operations).
    run_case("rfft2d_impulse", "RFFT2D", 1,
             [dict(type="FLOAT32", shape=[8, 8], vals=[1.0] + [0.0] * 63), dict(type="INT32", shape=[2], vals=[8, 8], const=True)],
             [dict(type="COMPLEX64")])
    run_case("rfft2d_dc", "RFFT2D", 1,
             [dict(type="FLOAT32", shape=[8, 16], vals=[1.0] * 128), dict(type="INT32", shape=[2], vals=[8, 16], const=True)],
             [dict(type="COMPLEX64")])
    for v in (1, 2):
        run_case("rfft2d_ver%d" % v, "RFFT2D", v, [x, fl], [dict(type="COMPLEX64")])


def complex_ops(rng):
    nan, inf = float("nan"), float("inf")
    for op in ("COMPLEX_ABS", "REAL", "IMAG"):
        for trial in range(6):
            shape = [rng.randint(1, 4) for _ in range(rng.randint(0, 4))]
            n = nelem(shape)
            for ct, ft in (("COMPLEX64", "FLOAT32"), ("COMPLEX128", "FLOAT64")):
                vals = floats(rng, 2 * n, [3.0, 1e30, 1e-30, 1e5][trial % 4])
                run_case("%s_%s_%d" % (op, ct, trial), op, 1, [dict(type=ct, shape=shape, vals=vals)], [dict(type=ft)])
        special = [3.0, 4.0, inf, 1.0, 1.0, nan, -0.0, -0.0, 3e38, 3e38, 1e-45, 1e-45, -5.0, 12.0, nan, inf]
        for ct, ft in (("COMPLEX64", "FLOAT32"), ("COMPLEX128", "FLOAT64")):
            run_case("%s_%s_special" % (op, ct), op, 1, [dict(type=ct, shape=[8], vals=special)], [dict(type=ft)])
        run_case("%s_empty" % op, op, 1, [dict(type="COMPLEX64", shape=[2, 0], vals=[])], [dict(type="FLOAT32")])
        run_case("%s_f32_in" % op, op, 1, [dict(type="FLOAT32", shape=[2], vals=[1, 2])], [dict(type="FLOAT32")])
        run_case("%s_c64_to_f64" % op, op, 1, [dict(type="COMPLEX64", shape=[1], vals=[1, 2])], [dict(type="FLOAT64")])
        run_case("%s_c128_to_f32" % op, op, 1, [dict(type="COMPLEX128", shape=[1], vals=[1, 2])], [dict(type="FLOAT32")])
        for v in (1, 2):
            run_case("%s_ver%d" % (op, v), op, v, [dict(type="COMPLEX64", shape=[1], vals=[3, 4])], [dict(type="FLOAT32")])


def main():
    rng = random.Random(2029)
    rfft2d(rng)
    complex_ops(rng)
    for c in CASES:
        why = c.pop("why", None)
        if why is not None:
            print("%s: %s: %s" % (c["name"], c["error"], why.replace("\n", " | ")), file=sys.stderr)
    data = json.dumps(CASES, separators=(",", ":")).encode()
    with open(OUT, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(data)
    print(len(CASES), "cases written to", OUT, "(%d failing in TFLite)" % sum(1 for c in CASES if "error" in c))


if __name__ == "__main__":
    main()
