#!/usr/bin/env python3
"""signal_tflite29_gen.py: regenerate signal_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that TestSignalAgainstTFLite29 compares the
signal family with: RFFT2D (constant and runtime fft_length, cropping and
zero padding, batches, empty tensors), COMPLEX_ABS, REAL and IMAG (COMPLEX64
and COMPLEX128, extreme values), and the default custom ops AudioSpectrogram
(windows, strides, several channels, too-short inputs) and Mfcc (frequency
limits beyond Nyquist, too many filterbank channels, bad sample rates), with
the types, options and versions TFLite 2.9 refuses.

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


def spectrogram(rng):
    def case(name, samples, channels, opts, typ="FLOAT32", version=1, vals=None, shape=None):
        shape = shape or [samples, channels]
        if vals is None:
            vals = floats(rng, nelem(shape), 1.0)
        return run_case("spec_" + name, "CUSTOM", version, [dict(type=typ, shape=shape, vals=vals)], [dict(type="FLOAT32")],
                        custom=("AudioSpectrogram", opts))
    for trial in range(24):
        window = rng.choice([2, 3, 5, 8, 16, 25, 32, 48, 64, 100])
        stride = rng.choice([1, 2, 3, window // 2 or 1, window, window + 3])
        samples = rng.randint(window - 2, window + 5 * stride + 3)
        case("r%d" % trial, samples, 1, {"window_size": window, "stride": stride, "magnitude_squared": trial % 2 == 0})
    # Several channels: TFLite's Spectrogram carries its sample queue from
    # one channel to the next, so the counts and values depend on it.
    for trial, (samples, window, stride) in enumerate([(20, 4, 4), (21, 4, 4), (20, 8, 4), (10, 4, 2), (19, 5, 3), (9, 4, 5),
                                                       (3, 4, 1), (2, 4, 1), (40, 6, 5), (12, 3, 3)]):
        for channels in (2, 3):
            case("ch%d_%d" % (channels, trial), samples, channels, {"window_size": window, "stride": stride, "magnitude_squared": trial % 2 == 1})
    case("speech", 1000, 1, {"window_size": 480, "stride": 320, "magnitude_squared": True})
    case("loud", 64, 1, {"window_size": 32, "stride": 16, "magnitude_squared": False}, vals=floats(rng, 64, 3e4))
    case("sine", 256, 1, {"window_size": 64, "stride": 64, "magnitude_squared": True},
         vals=[math.sin(2 * math.pi * 8 * i / 64) for i in range(256)])
    case("float_opts", 30, 1, {"window_size": 7.9, "stride": 3.2, "magnitude_squared": 1})
    case("no_magsq", 30, 1, {"window_size": 8, "stride": 4})
    case("window1", 30, 1, {"window_size": 1, "stride": 1, "magnitude_squared": True})
    case("window0", 30, 1, {"window_size": 0, "stride": 1, "magnitude_squared": True})
    case("stride0", 30, 1, {"window_size": 4, "stride": 0, "magnitude_squared": True})
    case("no_opts", 30, 1, {})
    case("empty", 0, 1, {"window_size": 4, "stride": 2, "magnitude_squared": True})
    case("empty_ch", 10, 0, {"window_size": 4, "stride": 2, "magnitude_squared": True})
    case("rank1", 0, 0, {"window_size": 4, "stride": 2, "magnitude_squared": True}, shape=[16])
    case("rank3", 0, 0, {"window_size": 4, "stride": 2, "magnitude_squared": True}, shape=[16, 1, 1])
    case("int32", 16, 1, {"window_size": 4, "stride": 2, "magnitude_squared": True}, typ="INT32", vals=list(range(16)))
    for v in (1, 2):
        case("ver%d" % v, 16, 1, {"window_size": 4, "stride": 2, "magnitude_squared": True}, version=v)


def mfcc(rng):
    def case(name, shape, rate, opts, vals=None, rate_type="INT32", rate_shape=(1,), const=True, version=1, typ="FLOAT32"):
        if vals is None:
            vals = [rng.uniform(0, 100) ** 2 for _ in range(nelem(shape))]
        return run_case("mfcc_" + name, "CUSTOM", version,
                        [dict(type=typ, shape=shape, vals=vals), dict(type=rate_type, shape=list(rate_shape), vals=[rate] * nelem(rate_shape), const=const)],
                        [dict(type="FLOAT32")], custom=("Mfcc", opts))
    std = {"upper_frequency_limit": 4000, "lower_frequency_limit": 20, "filterbank_channel_count": 40, "dct_coefficient_count": 13}
    case("speech", [1, 3, 257], 16000, std)
    case("speech_dyn_rate", [2, 2, 257], 16000, std, const=False)
    for trial in range(20):
        bins = rng.choice([5, 17, 33, 65, 129, 257])
        rate = rng.choice([8000, 16000, 22050, 44100])
        lower = rng.choice([0, 20, 100, 300])
        upper = rng.choice([1000, 3000, 4000, rate // 2 - 1, 7600])
        fb = rng.randint(1, 40)
        dct = rng.randint(1, fb)
        shape = [rng.randint(1, 2), rng.randint(1, 3), bins]
        vals = [rng.uniform(0, 50) ** 2 if rng.random() < 0.9 else 0.0 for _ in range(nelem(shape))]
        case("r%d" % trial, shape, rate, {"upper_frequency_limit": upper, "lower_frequency_limit": lower,
                                          "filterbank_channel_count": fb, "dct_coefficient_count": dct}, vals=vals)
    case("above_nyquist", [1, 2, 33], 8000, dict(std, upper_frequency_limit=4200))
    case("float_limits", [1, 2, 65], 16000, dict(std, upper_frequency_limit=3999.9, lower_frequency_limit=20.7))
    case("zeros", [1, 1, 65], 16000, std, vals=[0.0] * 65)
    case("dct_gt_fb", [1, 1, 65], 16000, dict(std, dct_coefficient_count=41))
    case("fb0", [1, 1, 65], 16000, dict(std, filterbank_channel_count=0))
    case("dct0", [1, 1, 65], 16000, dict(std, dct_coefficient_count=0))
    case("rate0", [1, 1, 65], 0, std)
    case("rate_neg", [1, 1, 65], -16000, std)
    case("rate0_dyn", [1, 1, 65], 0, std, const=False)
    case("lower_neg", [1, 1, 65], 16000, dict(std, lower_frequency_limit=-5))
    case("upper_le_lower", [1, 1, 65], 16000, dict(std, upper_frequency_limit=20))
    case("bins1", [1, 1, 1], 16000, std)
    case("rate0_empty", [1, 0, 65], 0, std)
    case("many_channels", [1, 1, 9], 16000, dict(std, filterbank_channel_count=40, dct_coefficient_count=40))
    case("no_opts", [1, 1, 65], 16000, {})
    case("no_opts_empty", [0, 1, 65], 16000, {})
    case("rate_scalar", [1, 1, 65], 16000, std, rate_shape=())
    case("rate_two", [1, 1, 65], 16000, std, rate_shape=(2,))
    case("rate_i64", [1, 1, 65], 16000, std, rate_type="INT64")
    case("rank2", [2, 65], 16000, std)
    case("int32_wav", [1, 1, 4], 16000, std, typ="INT32", vals=[1, 2, 3, 4])
    for v in (1, 2):
        case("ver%d" % v, [1, 1, 65], 16000, std, version=v)


def main():
    rng = tflite29.seeded(2029)
    rfft2d(rng)
    complex_ops(rng)
    spectrogram(rng)
    mfcc(rng)
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
