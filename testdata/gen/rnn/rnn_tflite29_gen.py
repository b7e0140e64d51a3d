#!/usr/bin/env python3
"""rnn_tflite29_gen.py: regenerate rnn_tflite29.json.gz, the real TensorFlow
Lite 2.9 outputs that TestRNNAgainstTFLite29 compares the rnn family (RNN,
UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN, SVDF) with.

Each case is a one-operator model (written as JSON by ../tflite29.py's
model, turned into a .tflite by flatc) whose hidden state is a variable
tensor that is also a subgraph input, so that the case can start from a
non-zero state. The model is Invoked several times in a row on one
interpreter, on the same inputs, by the runner built from
../tflite29_invoke.c (see its header), so that the recorded outputs show
the state persisting from one Invoke to the next: "outputs" holds the first
Invoke's outputs and "invokes" the later ones'. Failures are recorded with
the stage at which TFLite stopped (prepare: AllocateTensors, eval: Invoke,
load: anything else, such as an unregistered version).

usage: rnn_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz INVOKE_RUNNER
  (RUNNER, the one-Invoke runner the other generators take, is not used;
  INVOKE_RUNNER is tflite29_invoke built as its header says:
    gcc -O2 -o /tmp/tflite29_invoke ../tflite29_invoke.c -I$T/include \
        -L$T/lib -ltensorflowlite_c -Wl,-rpath,$T/lib
  with T=/work/tflite-ref here). The file was made with
    python3 testdata/gen/rnn/rnn_tflite29_gen.py model/schema/schema.fbs \
        /work/runner/tflite29_run /tmp/genwork-rnn \
        testdata/gen/rnn/rnn_tflite29.json.gz /tmp/tflite29_invoke
"""
import base64, gzip, json, os, random, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tflite29
from tflite29 import nelem, pack

SCHEMA, RUNNER, WORK, OUT = tflite29.args()
INVOKER = sys.argv[5]
CODES = tflite29.builtin_codes(SCHEMA)
CASES = []
INVOKES = 3
ACTS = ["NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"]


def quant(t, is_input):
    if t.get("scale") is None:
        return None
    return {"scale": [t["scale"]], "zero_point": [t.get("zp", 0)]}


def run_case(name, op, version, inputs, outputs, options_type, options, variables, invokes=INVOKES):
    """Records one case. inputs: dicts(type, shape, vals, const, scale, zp)
    or None; variables: the indices of the inputs that are variable tensors."""
    m, raw = tflite29.model(op, CODES[op], version, inputs, outputs, quant, options_type, options)
    tensors = m["subgraphs"][0]["tensors"]
    op_inputs = m["subgraphs"][0]["operators"][0]["inputs"]
    for i in variables:
        tensors[op_inputs[i]]["is_variable"] = True
    w = os.path.join(WORK, name)
    json.dump(m, open(w + ".json", "w"))
    subprocess.run(["flatc", "-b", "-o", WORK, SCHEMA, w + ".json"], check=True, capture_output=True)
    open(w + ".in.raw", "wb").write(raw)
    p = subprocess.run([INVOKER, w + ".tflite", w + ".in.raw", str(invokes), "-1"], capture_output=True, text=True)
    case = {"name": name, "inputs": [], "outputs": []}
    for t in inputs:
        if t is None:
            case["inputs"].append(None)
            continue
        case["inputs"].append({"type": t["type"], "shape": t["shape"], "const": bool(t.get("const")),
                               "scale": t.get("scale"), "zp": t.get("zp", 0),
                               "data": base64.b64encode(pack(t["type"], t["vals"])).decode()})
    if p.returncode != 0:
        case["error"] = {3: "prepare", 4: "eval"}.get(p.returncode, "load")
        case["detail"] = ((p.stderr + p.stdout).strip() or "rc=%d" % p.returncode)[-200:]
    else:
        runs = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
        assert len(runs) == invokes, (name, p.stdout)
        per = []
        for r in runs:
            per.append([{"type": o["type"], "shape": ro["shape"], "scale": o.get("scale"), "zp": o.get("zp", 0),
                         "data": base64.b64encode(bytes.fromhex(ro["hex"])).decode()} for o, ro in zip(outputs, r)])
        case["outputs"], case["invokes"] = per[0], per[1:]
    case["model"] = base64.b64encode(open(w + ".tflite", "rb").read()).decode()
    CASES.append(case)
    return case


def floats(rng, n, lo=-1.0, hi=1.0, zero=False):
    if zero:
        return [0.0] * n
    return [rng.uniform(lo, hi) for _ in range(n)]


def weights(rng, typ, shape, const=True):
    """A weight tensor: float32, or int8/uint8 with a random scale."""
    n = nelem(shape)
    if typ == "FLOAT32":
        return dict(type=typ, shape=shape, vals=floats(rng, n), const=const)
    lo, hi = (-127, 127) if typ == "INT8" else (0, 255)
    return dict(type=typ, shape=shape, vals=[rng.randint(lo, hi) for _ in range(n)], const=const,
                scale=rng.uniform(0.002, 0.02), zp=0 if typ == "INT8" else rng.randint(0, 255))


def cell(rng, wtype, in_size, units, batch, zero_state=False):
    """The weights, recurrent weights, bias and hidden state of one cell."""
    return [weights(rng, wtype, [units, in_size]), weights(rng, wtype, [units, units]),
            dict(type="FLOAT32", shape=[units], vals=floats(rng, units, -0.5, 0.5), const=True),
            dict(type="FLOAT32", shape=[batch, units], vals=floats(rng, batch * units, zero=zero_state))]


def gen_rnn(rng):
    n = 0
    for seq in (False, True):
        op = "UNIDIRECTIONAL_SEQUENCE_RNN" if seq else "RNN"
        opts = "SequenceRNNOptions" if seq else "RNNOptions"
        for wtype in ("FLOAT32", "INT8", "UINT8"):
            for trial in range(12):
                batch, in_size, units, steps = rng.randint(1, 3), rng.randint(1, 7), rng.randint(1, 6), rng.randint(1, 4)
                tm = seq and trial % 2 == 1
                asym = wtype != "FLOAT32" and trial % 3 == 1
                act = ACTS[trial % len(ACTS)]
                shape = [batch, in_size]
                if seq:
                    shape = [steps, batch, in_size] if tm else [batch, steps, in_size]
                x = dict(type="FLOAT32", shape=shape, vals=floats(rng, nelem(shape), -2, 2, zero=trial == 5))
                ins = [x] + cell(rng, wtype, in_size, units, batch, zero_state=trial % 4 == 0)
                o = {"fused_activation_function": act, "asymmetric_quantize_inputs": asym}
                if seq:
                    o["time_major"] = tm
                version = {"FLOAT32": 1, "INT8": 2, "UINT8": 2}[wtype] + (1 if asym else 0)
                run_case("%s_%s_%d" % (op, wtype, trial), op, version, ins, [dict(type="FLOAT32")], opts, o, [4])
                n += 1
        # Every registered version runs every type; version 4 is not registered.
        for v in (1, 2, 3, 4):
            x = dict(type="FLOAT32", shape=[2, 3, 4] if seq else [2, 4], vals=floats(rng, 24 if seq else 8))
            run_case("%s_v%d" % (op, v), op, v, [x] + cell(rng, "INT8", 4, 3, 2), [dict(type="FLOAT32")], opts,
                     {"fused_activation_function": "TANH"}, [4])
        # A hidden state that is not a variable: RNN writes into it (we
        # record one Invoke), UNIDIRECTIONAL_SEQUENCE_RNN refuses it.
        x = dict(type="FLOAT32", shape=[2, 3, 4] if seq else [2, 4], vals=floats(rng, 24 if seq else 8))
        run_case("%s_novar" % op, op, 1, [x] + cell(rng, "FLOAT32", 4, 3, 2), [dict(type="FLOAT32")], opts,
                 {"fused_activation_function": "RELU"}, [], invokes=1)
        # Refusals: a non-float input, mixed or unsupported weight types,
        # mismatched shapes.
        shape = [2, 3, 4] if seq else [2, 4]
        bad = [
            ("int8in", dict(type="INT8", shape=shape, vals=[1] * nelem(shape), scale=0.1, zp=0), "INT8", None),
            ("int32w", dict(type="FLOAT32", shape=shape, vals=floats(rng, nelem(shape))), "INT32", None),
            ("mixedw", dict(type="FLOAT32", shape=shape, vals=floats(rng, nelem(shape))), "FLOAT32", "INT8"),
            ("badin", dict(type="FLOAT32", shape=shape[:-1] + [5], vals=floats(rng, nelem(shape) // 4 * 5)), "FLOAT32", None),
        ]
        for name, x, wtype, rectype in bad:
            c = cell(rng, "FLOAT32" if wtype == "INT32" else wtype, 4, 3, 2)
            if wtype == "INT32":
                c[0] = dict(type="INT32", shape=[3, 4], vals=[1] * 12, const=True)
                c[1] = dict(type="INT32", shape=[3, 3], vals=[1] * 9, const=True)
            if rectype:
                c[1] = weights(rng, rectype, [3, 3])
            run_case("%s_err_%s" % (op, name), op, 1, [x] + c, [dict(type="FLOAT32")], opts, {}, [4])
    return n


def svdf_case(rng, name, version, kind, batch, in_size, units, rank, memory, act, asym=False, bias=True,
              zero_input=False, zero_state=False, wtype="INT8", extreme=False, opt_rank=None, variable=True):
    """Records an SVDF case of kind float, hybrid or int (int8 input, int16
    state)."""
    filters = units * rank
    opts = {"rank": rank if opt_rank is None else opt_rank, "fused_activation_function": act, "asymmetric_quantize_inputs": asym}
    if kind == "int":
        isc, izp = rng.uniform(0.01, 0.05), rng.randint(-20, 20)
        ssc, osc, ozp = rng.uniform(0.001, 0.01), rng.uniform(0.01, 0.1), rng.randint(-10, 10)
        if extreme:
            isc, ssc, osc = 0.5, 0.0005, 0.001
        ins = [dict(type="INT8", shape=[batch, in_size], vals=[0 if zero_input else rng.randint(-128, 127) for _ in range(batch * in_size)], scale=isc, zp=izp),
               dict(type="INT8", shape=[filters, in_size], vals=[rng.randint(-127, 127) for _ in range(filters * in_size)], const=True, scale=rng.uniform(0.002, 0.01), zp=0),
               dict(type="INT16", shape=[filters, memory], vals=[rng.randint(-32767, 32767) for _ in range(filters * memory)], const=True, scale=rng.uniform(0.00002, 0.0001), zp=0),
               dict(type="INT32", shape=[units], vals=[rng.randint(-20000, 20000) for _ in range(units)], const=True) if bias else None,
               dict(type="INT16", shape=[batch, memory * filters], vals=[0 if zero_state else rng.randint(-3000, 3000) for _ in range(batch * memory * filters)], scale=ssc, zp=0)]
        outs = [dict(type="INT8", scale=osc, zp=ozp)]
    else:
        ft = "FLOAT32" if kind == "float" else wtype
        ins = [dict(type="FLOAT32", shape=[batch, in_size], vals=floats(rng, batch * in_size, -2, 2, zero=zero_input)),
               weights(rng, ft, [filters, in_size]), weights(rng, ft, [filters, memory]),
               dict(type="FLOAT32", shape=[units], vals=floats(rng, units, -0.5, 0.5), const=True) if bias else None,
               dict(type="FLOAT32", shape=[batch, memory * filters], vals=floats(rng, batch * memory * filters, zero=zero_state))]
        outs = [dict(type="FLOAT32")]
    return run_case(name, "SVDF", version, ins, outs, "SVDFOptions", opts, [4] if variable else [])


def gen_svdf(rng):
    for kind, wtypes in (("float", ["FLOAT32"]), ("hybrid", ["INT8", "UINT8"]), ("int", ["INT8"])):
        for wtype in wtypes:
            for trial in range(14):
                batch, in_size, units = rng.randint(1, 3), rng.randint(1, 7), rng.randint(1, 4)
                rank, memory = rng.randint(1, 3), rng.randint(1, 5)
                act = "RELU" if kind == "int" else ACTS[trial % len(ACTS)]
                asym = kind == "hybrid" and trial % 2 == 1
                version = {"float": 1, "hybrid": 4 if asym else 2, "int": 3}[kind]
                svdf_case(rng, "SVDF_%s_%s_%d" % (kind, wtype, trial), version, kind, batch, in_size, units, rank, memory,
                          act, asym=asym, bias=trial % 5 != 2, zero_input=trial == 6, zero_state=trial % 4 == 0,
                          wtype=wtype, extreme=kind == "int" and trial >= 12)
    # Every registered version runs every type; version 5 is not registered.
    for v in (1, 2, 3, 4, 5):
        svdf_case(rng, "SVDF_v%d" % v, v, "hybrid", 2, 3, 2, 2, 3, "RELU")
        svdf_case(rng, "SVDF_int_v%d" % v, v, "int", 2, 3, 2, 2, 3, "RELU")
    # The integer kernel requires RELU.
    for act in ("NONE", "TANH", "RELU6"):
        svdf_case(rng, "SVDF_int_act_%s" % act, 3, "int", 2, 3, 2, 2, 3, act)
    # Rank 0 and a rank that does not divide the filters.
    svdf_case(rng, "SVDF_err_rank0", 1, "float", 1, 3, 2, 1, 3, "NONE", opt_rank=0)
    svdf_case(rng, "SVDF_err_rank3", 1, "float", 1, 3, 2, 2, 3, "NONE", opt_rank=3)
    # A state that is not a variable.
    svdf_case(rng, "SVDF_err_novar", 1, "float", 1, 3, 2, 1, 3, "NONE", variable=False)
    svdf_case(rng, "SVDF_int_err_novar", 3, "int", 1, 3, 2, 1, 3, "RELU", variable=False)


def bidi_case(rng, name, version, wtype, batch, steps, in_size, fw_units, bw_units, act, tm, merge, aux_mode,
              asym=False, zero_input=False, zero_state=False, variable=True):
    """Records a BIDIRECTIONAL_SEQUENCE_RNN case; aux_mode is none, cross
    (auxiliary input and weights) or bwinput (auxiliary input only: the
    backward cell's input)."""
    shape = [steps, batch, in_size] if tm else [batch, steps, in_size]
    x = dict(type="FLOAT32", shape=shape, vals=floats(rng, nelem(shape), -2, 2, zero=zero_input))
    ins = [x] + cell(rng, wtype, in_size, fw_units, batch, zero_state) + cell(rng, wtype, in_size, bw_units, batch, zero_state)
    if aux_mode == "none":
        ins += [None, None, None]
    else:
        ins.append(dict(type="FLOAT32", shape=shape, vals=floats(rng, nelem(shape), -2, 2)))
        if aux_mode == "cross":
            ins += [weights(rng, wtype, [fw_units, in_size]), weights(rng, wtype, [bw_units, in_size])]
        else:
            ins += [None, None]
    outs = [dict(type="FLOAT32")] if merge else [dict(type="FLOAT32"), dict(type="FLOAT32")]
    opts = {"time_major": tm, "fused_activation_function": act, "merge_outputs": merge, "asymmetric_quantize_inputs": asym}
    return run_case(name, "BIDIRECTIONAL_SEQUENCE_RNN", version, ins, outs, "BidirectionalSequenceRNNOptions", opts,
                    [4, 8] if variable else [])


def gen_bidi(rng):
    trial = 0
    for wtype in ("FLOAT32", "INT8", "UINT8"):
        for aux_mode in ("none", "cross", "bwinput"):
            for k in range(6):
                tm, merge = k % 2 == 1, k // 2 % 2 == 1
                asym = wtype != "FLOAT32" and k % 3 == 2
                version = 1 if wtype == "FLOAT32" else (3 if asym else 2)
                bidi_case(rng, "BIDI_%s_%s_%d" % (wtype, aux_mode, k), version, wtype, rng.randint(1, 3), rng.randint(1, 4),
                          rng.randint(1, 5), rng.randint(1, 4), rng.randint(1, 4), ACTS[trial % len(ACTS)], tm, merge, aux_mode,
                          asym=asym, zero_input=k == 4, zero_state=k % 3 == 0)
                trial += 1
    # Every registered version runs every type; version 4 is not registered.
    for v in (1, 2, 3, 4):
        bidi_case(rng, "BIDI_v%d" % v, v, "INT8", 2, 3, 3, 2, 3, "TANH", False, False, "none")
    # TFLite 2.9's hybrid kernel crashes on merged time-major outputs with
    # more than one batch row and symmetric quantization (its per-row
    # fallback offsets a null zero-point pointer); one row or asymmetric
    # quantization run.
    for batch in (1, 2, 3):
        for asym in (False, True):
            bidi_case(rng, "BIDI_tm_merge_b%d_%s" % (batch, "asym" if asym else "sym"), 3 if asym else 2, "INT8", batch, 3, 3,
                      2, 3, "TANH", True, True, "none", asym=asym)
    # Refusals: a hidden state that is not a variable.
    bidi_case(rng, "BIDI_err_novar", 1, "FLOAT32", 2, 3, 3, 2, 3, "TANH", False, False, "none", variable=False)


def main():
    rng = tflite29.seeded(2929)
    gen_rnn(rng)
    gen_svdf(rng)
    gen_bidi(rng)
    with gzip.open(OUT, "wt") as f:
        json.dump(CASES, f, separators=(",", ":"))
    errs = sum(1 for c in CASES if c.get("error"))
    print("%d cases (%d failing in TFLite) -> %s" % (len(CASES), errs, OUT))
    for c in CASES:
        if c.get("error"):
            print("  %s: %s %s" % (c["name"], c["error"], c["detail"][:100]))


main()
