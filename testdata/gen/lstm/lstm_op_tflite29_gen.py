#!/usr/bin/env python3
"""lstm_op_tflite29_gen.py: regenerate lstm_op_tflite29.json.gz, the real
TensorFlow Lite 2.9 outputs that core/kernels/lstm's TestLSTMOpsAgainstTFLite29
compares LSTM (full kernel) and BIDIRECTIONAL_SEQUENCE_LSTM with.

Each case is a one-operator model (written as flatbuffer JSON, compiled by
flatc with model/schema/schema.fbs) whose state tensors are variables, run
by lstm_run_tflite.py on one TensorFlow Lite 2.9 interpreter for INVOKES
Invokes on the same input: the state carries over, so later Invokes check
the recurrent path. The file keeps the model, the input bytes and each
Invoke's output bytes, or the stage at which TFLite failed.

Cases whose names end in _oob are ones TFLite 2.9 runs while reading memory
outside their tensors (its result depends on the arena's layout): delego
refuses them, and the Go test expects that refusal.

usage: lstm_op_tflite29_gen.py SCHEMA.fbs RUNNER WORKDIR OUT.json.gz
RUNNER is ignored (the cases need several Invokes; lstm_run_tflite.py does
them with the library named by $TFLITE_C_LIB, default
/work/tflite-ref/lib/libtensorflowlite_c.so).
"""
import base64, gzip, json, os, random, struct, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import tflite29
from tflite29 import pack

SCHEMA, _, WORK, OUT = tflite29.args()
LIB = os.environ.get("TFLITE_C_LIB", "/work/tflite-ref/lib/libtensorflowlite_c.so")
INVOKES = 3
CASES = []
GATES = ["input", "forget", "cell", "output"]


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


class Model:
    """The tensors and buffers of a one-operator model being built."""

    def __init__(self):
        self.tensors, self.buffers = [], [{}]

    def add(self, name, shape, typ, vals=None, scale=None, zp=0, variable=False):
        t = {"name": name, "shape": shape, "type": typ, "buffer": 0}
        if vals is not None:
            self.buffers.append({"data": list(pack(typ, vals))})
            t["buffer"] = len(self.buffers) - 1
        if scale is not None:
            t["quantization"] = {"scale": [f32(scale)], "zero_point": [zp]}
        if variable:
            t["is_variable"] = True
        self.tensors.append(t)
        return len(self.tensors) - 1


def cell_tensors(m, rng, pre, kind, ni, nc, no, cifg, peep, proj, proj_bias, ln, wtype="INT8", q=None):
    """The 17 weight and bias tensors of one LSTM cell (inputs 1..17 of
    LSTM), the 4 layer norm coefficients (or Nones) and the state tensors'
    indices. kind: float, hybrid or int (q: the integer cell's scales)."""
    w = [None] * 17
    lnc = [None] * 4

    def W(nm, rows, cols):
        if kind == "float":
            return m.add(pre + nm, [rows, cols], "FLOAT32", [rng.uniform(-0.6, 0.6) for _ in range(rows * cols)])
        if kind == "hybrid":
            lo = 0 if wtype == "UINT8" else -127
            hi = 255 if wtype == "UINT8" else 127
            return m.add(pre + nm, [rows, cols], wtype, [rng.randint(lo, hi) for _ in range(rows * cols)],
                         rng.uniform(0.002, 0.01), 0)
        return m.add(pre + nm, [rows, cols], "INT8", [rng.randint(-127, 127) for _ in range(rows * cols)],
                     q["wscale"] * rng.uniform(0.7, 1.3), 0)

    for g in range(4):
        if g == 0 and cifg:
            continue
        w[g] = W("i2" + GATES[g], nc, ni)
        w[4 + g] = W("r2" + GATES[g], nc, no)
    if peep:
        for k, g in enumerate([0, 1, 3]):
            if g == 0 and cifg:
                continue
            if kind == "float":
                w[8 + k] = m.add(pre + "c2" + GATES[g], [nc], "FLOAT32", [rng.uniform(-0.5, 0.5) for _ in range(nc)])
            elif kind == "hybrid":
                w[8 + k] = m.add(pre + "c2" + GATES[g], [nc], wtype,
                                 [rng.randint(0 if wtype == "UINT8" else -127, 127) for _ in range(nc)],
                                 rng.uniform(0.002, 0.01), 0)
            else:
                w[8 + k] = m.add(pre + "c2" + GATES[g], [nc], "INT16", [rng.randint(-20000, 20000) for _ in range(nc)],
                                 2.0 ** -14 * rng.uniform(0.8, 1.2), 0)
    for g in range(4):
        if g == 0 and cifg:
            continue
        if kind == "int":
            bmax = 3000
            w[11 + g] = m.add(pre + "b" + GATES[g], [nc], "INT32",
                              [(bmax if g == 1 else 0) + rng.randint(-bmax, bmax) for _ in range(nc)], q["in_scale"] * q["wscale"], 0)
        else:
            w[11 + g] = m.add(pre + "b" + GATES[g], [nc], "FLOAT32",
                              [(1.0 if g == 1 else 0.0) + rng.uniform(-0.3, 0.3) for _ in range(nc)])
    if proj:
        w[15] = W("proj", no, nc)
        if proj_bias:
            if kind == "int":
                w[16] = m.add(pre + "pb", [no], "INT32", [rng.randint(-500, 500) for _ in range(no)], 0.0001, 0)
            else:
                w[16] = m.add(pre + "pb", [no], "FLOAT32", [rng.uniform(-0.2, 0.2) for _ in range(no)])
    if ln:
        for g in range(4):
            if g == 0 and cifg:
                continue
            if kind == "int":
                lnc[g] = m.add(pre + "ln" + GATES[g], [nc], "INT16", [rng.randint(4000, 12000) for _ in range(nc)],
                               2.0 ** -13 * rng.uniform(0.8, 1.2), 0)
            else:
                lnc[g] = m.add(pre + "ln" + GATES[g], [nc], "FLOAT32", [1.0 + rng.uniform(-0.3, 0.3) for _ in range(nc)])
    return w, lnc


def states(m, pre, kind, nb, nc, no, q=None):
    if kind == "int":
        return (m.add(pre + "h", [nb, no], "INT8", scale=q["out_scale"], zp=q["out_zp"], variable=True),
                m.add(pre + "c", [nb, nc], "INT16", scale=2.0 ** q["cell_log2"], zp=0, variable=True))
    return (m.add(pre + "h", [nb, no], "FLOAT32", variable=True),
            m.add(pre + "c", [nb, nc], "FLOAT32", variable=True))


def finish(m, name, op, version, op_inputs, op_outputs, options_type, options, inter=None, raw=b""):
    """Compiles and runs the model; records the case."""
    code = tflite29.builtin_codes(SCHEMA)[op]
    op_inputs = [-1 if i is None else i for i in op_inputs]
    opd = {"opcode_index": 0, "inputs": op_inputs, "outputs": op_outputs}
    if options_type:
        opd["builtin_options_type"] = options_type
        opd["builtin_options"] = options
    if inter:
        opd["intermediates"] = inter
    sg_in = []
    for i in op_inputs:
        if i >= 0 and m.tensors[i]["buffer"] == 0 and not m.tensors[i].get("is_variable") and i not in sg_in:
            sg_in.append(i)
    model = {"version": 3,
             "operator_codes": [{"deprecated_builtin_code": min(code, 127), "builtin_code": op, "version": version}],
             "subgraphs": [{"tensors": m.tensors, "inputs": sg_in, "outputs": op_outputs, "operators": [opd]}],
             "buffers": m.buffers}
    w = os.path.join(WORK, name)
    json.dump(model, open(w + ".json", "w"))
    subprocess.run(["flatc", "-b", "-o", WORK, SCHEMA, w + ".json"], check=True, capture_output=True)
    open(w + ".in.raw", "wb").write(raw)
    p = subprocess.run([sys.executable, os.path.join(HERE, "lstm_run_tflite.py"), w + ".tflite", w + ".in.raw", w + ".out",
                        str(INVOKES)], capture_output=True, text=True, env=dict(os.environ, TFLITE_C_LIB=LIB))
    case = {"name": name, "model": base64.b64encode(open(w + ".tflite", "rb").read()).decode(),
            "input": base64.b64encode(raw).decode(), "invokes": []}
    if p.returncode != 0:
        case["error"] = {3: "prepare", 4: "eval"}.get(p.returncode, "load")
        case["message"] = ((p.stderr + p.stdout).strip() or "rc=%d" % p.returncode)[-300:]
    else:
        for k in range(INVOKES):
            case["invokes"].append(base64.b64encode(open("%s.out.%d.raw" % (w, k + 1), "rb").read()).decode())
    CASES.append(case)
    return case


def input_bytes(rng, typ, n, zero=False):
    if typ == "FLOAT32":
        return pack(typ, [0.0 if zero else rng.uniform(-1.5, 1.5) for _ in range(n)])
    return pack(typ, [rng.randint(-128, 127) for _ in range(n)])


def int_params(rng):
    return {"in_scale": rng.uniform(1 / 128, 1 / 32), "in_zp": rng.randint(-10, 10),
            "out_scale": rng.uniform(1 / 256, 1 / 64), "out_zp": rng.randint(-5, 5),
            "cell_log2": rng.choice([-15, -13, -11, -9]), "wscale": rng.uniform(0.002, 0.006),
            "hidden_scale": rng.uniform(1 / 256, 1 / 64), "hidden_zp": rng.randint(-3, 3)}


def lstm_case(name, rng, kind, version=None, nb=None, ni=None, nc=None, no=None, cifg=None, peep=None, proj=None,
              ln=None, ninputs=24, act=None, cell_clip=0.0, proj_clip=0.0, asym=False, wtype="INT8", zero_input=False,
              in_shape=None, options=True, kernel_type="FULL", n_inter=5, cell_type=None, inter88=None, proj_bias=True,
              cell_log2=-15):
    nb = nb or rng.randint(1, 3)
    ni = ni or rng.randint(1, 6)
    nc = nc or rng.randint(1, 7)
    cifg = rng.random() < 0.3 if cifg is None else cifg
    peep = rng.random() < 0.4 if peep is None else peep
    proj = rng.random() < 0.4 if proj is None else proj
    ln = (rng.random() < 0.4 and ninputs == 24) if ln is None else ln
    no = (no or rng.randint(1, 6)) if proj else nc
    if kind == "int" and peep and no > nc:
        no = nc
    version = version or {"float": rng.randint(1, 4), "hybrid": rng.randint(2, 4), "int": 4}[kind]
    q = int_params(rng) if kind == "int" else None
    m = Model()
    ins = [-1] * 24
    if kind == "int":
        ins[0] = m.add("input", in_shape or [nb, ni], "INT8", scale=q["in_scale"], zp=q["in_zp"])
    else:
        ins[0] = m.add("input", in_shape or [nb, ni], "FLOAT32")
    if inter88:
        q["cell_log2"] = cell_log2
    w, lnc = cell_tensors(m, rng, "", kind, ni, nc, no, cifg, peep, proj, proj_bias, ln, wtype, q)
    ins[1:18] = w
    ins[18], ins[19] = states(m, "", kind, nb, nc, no, q)
    if cell_type and kind == "int":
        m.tensors[ins[19]]["type"] = cell_type
    ins[20:24] = lnc
    inter = []
    if inter88:
        out = m.add("output", [nb, no], "INT8", scale=q["out_scale"], zp=q["out_zp"])
        inter = [m.add("inter%d" % k, [0], "INT8", scale=s, zp=z) for k, (s, z) in enumerate(inter88)]
    elif kind == "int":
        out = m.add("output", [nb, no], "INT8", scale=q["out_scale"], zp=q["out_zp"])
        for g in range(4):
            if ln:
                inter.append(m.add("inter%d" % g, [0], "INT16", scale=2.0 ** -10 * rng.uniform(0.8, 1.2)))
            else:
                inter.append(m.add("inter%d" % g, [0], "FLOAT32"))
        if proj:
            inter.append(m.add("hidden", [0], "INT8", scale=q["hidden_scale"], zp=q["hidden_zp"]))
        else:
            inter.append(m.add("hidden", [0], "INT8", scale=q["out_scale"], zp=q["out_zp"]))
        for k in range(n_inter - 5):
            inter.append(m.add("inter_extra%d" % k, [0], "INT16", scale=2.0 ** -12))
    else:
        out = m.add("output", [nb, no], "FLOAT32")
    act = act or ("TANH" if kind == "int" else rng.choice(["TANH", "TANH", "RELU", "RELU6", "RELU_N1_TO_1", "NONE"]))
    opts = {"fused_activation_function": act, "cell_clip": f32(cell_clip), "proj_clip": f32(proj_clip),
            "kernel_type": kernel_type, "asymmetric_quantize_inputs": asym}
    shape = in_shape or [nb, ni]
    n = 1
    for d in shape:
        n *= d
    raw = input_bytes(rng, "INT8" if kind == "int" else "FLOAT32", n, zero_input)
    return finish(m, name, "LSTM", version, ins[:ninputs], [out], "LSTMOptions" if options else None,
                  opts if options else None, inter, raw)


def gen_lstm():
    rng = tflite29.seeded(2909)
    for i in range(36):
        lstm_case("lstm_f_%d" % i, rng, "float", ninputs=20 if i % 9 == 4 else 24,
                  cell_clip=rng.choice([0.0, 0.0, 0.8, 3.0]), proj_clip=rng.choice([0.0, 0.0, 0.5]))
    lstm_case("lstm_f_zero_input", rng, "float", zero_input=True)
    lstm_case("lstm_f_no_options", rng, "float", options=False)
    lstm_case("lstm_f_all", rng, "float", nb=2, ni=4, nc=5, no=3, cifg=True, peep=True, proj=True, ln=True)
    for i in range(28):
        lstm_case("lstm_h_%d" % i, rng, "hybrid", asym=i % 2 == 1, wtype="UINT8" if i % 7 == 3 else "INT8",
                  ninputs=20 if i % 9 == 4 else 24, cell_clip=rng.choice([0.0, 0.0, 0.8]),
                  proj_clip=rng.choice([0.0, 0.0, 0.5]))
    lstm_case("lstm_h_zero_input", rng, "hybrid", zero_input=True, asym=True)
    for i in range(30):
        lstm_case("lstm_i_%d" % i, rng, "int", ln=i % 2 == 0, ninputs=24, version=rng.choice([3, 4]),
                  cell_clip=rng.choice([0.0, 0.0, 1.0, 4.0]), proj_clip=rng.choice([0.0, 0.0, 0.3]))
    lstm_case("lstm_i_20in", rng, "int", ninputs=20, ln=False)
    # What TFLite 2.9 refuses, or we do not run.
    lstm_case("lstm_version5", rng, "float", version=5)
    lstm_case("lstm_f_rank1", rng, "float", nb=1, ni=3, in_shape=[3])
    lstm_case("lstm_i_int8cell_oob", rng, "int", cell_type="INT8")
    lstm_case("lstm_f_23inputs", rng, "float", ninputs=23, ln=False)


def inter88_params(rng, sat=False):
    """The 12 intermediates of an 8x8_8 LSTM: per gate (input, forget, cell,
    output) the sum's, the input product's and the recurrent product's scale
    and zero point. sat: product scales small enough to saturate int8."""
    p = []
    for g in range(4):
        p.append((rng.uniform(0.0004, 0.002), rng.randint(-20, 20)))
        for _ in range(2):
            p.append((rng.uniform(0.002, 0.006) if sat else rng.uniform(0.01, 0.05), rng.randint(-20, 20)))
    return p


def gen_lstm88():
    """LSTM's integer 8x8_8 kernel (12 intermediates): TFLite 2.9 runs it with
    layer norm, projection and projection bias (it dereferences them
    unconditionally), ignores the input gate and peepholes, and needs a cell
    state scale of 2^-15."""
    rng = tflite29.seeded(8808)
    for i in range(24):
        lstm_case("lstm_i88_%d" % i, rng, "int", ln=True, proj=True, version=rng.choice([3, 4]),
                  inter88=inter88_params(rng, sat=i % 6 == 5),
                  cell_clip=rng.choice([0.0, 0.0, 0.5, 2.0]), proj_clip=rng.choice([0.0, 0.0, 0.3]))
    lstm_case("lstm_i88_all", rng, "int", nb=2, ni=5, nc=4, no=3, cifg=False, peep=True, proj=True, ln=True,
              inter88=inter88_params(rng))
    lstm_case("lstm_i88_cifg", rng, "int", nb=3, ni=4, nc=6, no=2, cifg=True, peep=False, proj=True, ln=True,
              inter88=inter88_params(rng))
    lstm_case("lstm_i88_big", rng, "int", nb=2, ni=16, nc=16, no=8, proj=True, ln=True, inter88=inter88_params(rng))
    # What TFLite 2.9 refuses (cell scale) or crashes on (no layer norm, no
    # projection or no projection bias: null pointers).
    lstm_case("lstm_i88_cellscale", rng, "int", ln=True, proj=True, inter88=inter88_params(rng), cell_log2=-14)
    lstm_case("lstm_i88_noln", rng, "int", ln=False, proj=True, inter88=inter88_params(rng))
    lstm_case("lstm_i88_noproj", rng, "int", ln=True, proj=False, inter88=inter88_params(rng))
    lstm_case("lstm_i88_noprojbias", rng, "int", ln=True, proj=True, proj_bias=False, inter88=inter88_params(rng))


def bidi_case(name, rng, kind, version=None, nb=None, nt=None, ni=None, nc=None, no=None, proj=None, merge=None,
              tm=None, aux=None, naux=None, asym=False, wtype="INT8", act=None, cell_clip=0.0, proj_clip=0.0,
              in_type=None, n_outputs=None, options=True, oob=False):
    """A BIDIRECTIONAL_SEQUENCE_LSTM case. aux: None (no aux input), "cross"
    (aux input and aux weights) or "chain" (aux input only: the backward
    cell reads it instead of the input)."""
    nb = nb or rng.randint(1, 3)
    nt = nt or rng.randint(1, 4)
    ni = ni or rng.randint(1, 5)
    nc = nc or rng.randint(1, 6)
    proj = rng.random() < 0.4 if proj is None else proj
    no = (no or rng.randint(1, 5)) if proj else nc
    merge = rng.random() < 0.5 if merge is None else merge
    tm = rng.random() < 0.5 if tm is None else tm
    if merge and not tm and not oob:
        # Batch-major, TFLite 2.9 finds batch row b's state at b times the
        # merged output's row length, past the state's end.
        nb = 1
    # TFLite 2.9 steps through the auxiliary input with the input's row
    # length: shorter auxiliary rows are read past its end.
    naux = naux or (ni if aux == "chain" else rng.randint(ni, ni + 3))
    version = version or {"float": rng.randint(1, 3), "hybrid": rng.randint(2, 3)}[kind]
    m = Model()
    ins = [-1] * 48
    shape = [nt, nb, ni] if tm else [nb, nt, ni]
    ins[0] = m.add("input", shape, in_type or "FLOAT32")
    for d, pre in enumerate(["fw_", "bw_"]):
        w, _ = cell_tensors(m, rng, pre, kind, ni, nc, no, rng.random() < 0.3, rng.random() < 0.4, proj, True, False, wtype)
        ins[1 + 17 * d:18 + 17 * d] = w
    ins[35], ins[36] = states(m, "fw_", kind, nb, nc, no)
    ins[37], ins[38] = states(m, "bw_", kind, nb, nc, no)
    raw = input_bytes(rng, "FLOAT32", nb * nt * ni)
    if aux:
        ins[39] = m.add("aux_input", [nt, nb, naux] if tm else [nb, nt, naux], "FLOAT32")
        raw += input_bytes(rng, "FLOAT32", nb * nt * naux)
    if aux == "cross":
        for d in range(2):
            cifg = ins[1 + 17 * d] is None
            for g in range(4):
                if g == 0 and cifg:
                    continue
                if kind == "float":
                    ins[40 + 4 * d + g] = m.add("aux%d%s" % (d, GATES[g]), [nc, naux], "FLOAT32",
                                                [rng.uniform(-0.6, 0.6) for _ in range(nc * naux)])
                else:
                    ins[40 + 4 * d + g] = m.add("aux%d%s" % (d, GATES[g]), [nc, naux], wtype,
                                                [rng.randint(0 if wtype == "UINT8" else -127, 127) for _ in range(nc * naux)],
                                                rng.uniform(0.002, 0.01), 0)
    oshape = [nt, nb] if tm else [nb, nt]
    outs = [m.add("fw_out", oshape + [2 * no if merge else no], "FLOAT32")]
    if not merge or n_outputs == 2:
        outs.append(m.add("bw_out", oshape + [no], "FLOAT32"))
    act = act or rng.choice(["TANH", "TANH", "RELU", "RELU6", "NONE"])
    opts = {"fused_activation_function": act, "cell_clip": f32(cell_clip), "proj_clip": f32(proj_clip),
            "merge_outputs": merge, "time_major": tm, "asymmetric_quantize_inputs": asym}
    return finish(m, name, "BIDIRECTIONAL_SEQUENCE_LSTM", version, ins, outs,
                  "BidirectionalSequenceLSTMOptions" if options else None, opts if options else None, raw=raw)


def gen_bidi():
    rng = tflite29.seeded(4811)
    for i in range(30):
        bidi_case("bidi_f_%d" % i, rng, "float", aux=[None, None, "cross", "chain"][i % 4],
                  cell_clip=rng.choice([0.0, 0.0, 1.0]), proj_clip=rng.choice([0.0, 0.0, 0.4]))
    for i in range(24):
        bidi_case("bidi_h_%d" % i, rng, "hybrid", aux=[None, "cross", None, "chain"][i % 4], asym=i % 3 == 1,
                  wtype="UINT8" if i % 5 == 2 else "INT8", cell_clip=rng.choice([0.0, 0.0, 1.0]))
    # Batch-major hybrid with as many time steps as batch rows.
    for i in range(4):
        n = rng.randint(2, 3)
        bidi_case("bidi_h_square_%d" % i, rng, "hybrid", nb=n, nt=n, tm=False, aux=[None, "cross"][i % 2], asym=i % 2 == 0)
    # Longer auxiliary rows than input rows: TFLite 2.9 reads overlapping
    # windows of the auxiliary input, which delego reproduces.
    bidi_case("bidi_f_aux_long", rng, "float", nb=2, nt=3, ni=2, naux=5, aux="cross", tm=True)
    bidi_case("bidi_h_aux_long", rng, "hybrid", nb=2, nt=3, ni=2, naux=4, aux="cross", tm=False, merge=False)
    bidi_case("bidi_f_no_options", rng, "float", options=False, aux=None, merge=False, tm=False)
    # TFLite 2.9 reads outside the tensors.
    bidi_case("bidi_f_merge_batch_major_oob", rng, "float", nb=3, nt=2, merge=True, tm=False, oob=True)
    bidi_case("bidi_h_merge_batch_major_oob", rng, "hybrid", nb=2, nt=2, merge=True, tm=False, oob=True)
    bidi_case("bidi_f_aux_short_oob", rng, "float", nt=3, ni=4, naux=2, aux="cross", tm=True)
    # What TFLite 2.9 refuses.
    bidi_case("bidi_version4", rng, "float", version=4)
    bidi_case("bidi_f_merge_two_outputs", rng, "float", merge=True, n_outputs=2)


def basic_case(name, rng, quantized, version=None, nb=None, ni=None, d=None, state_log2=-11, weights_type=None):
    """An LSTM case with kernel_type BASIC: inputs input, previous
    activation, weights, bias, previous state; outputs activation, state,
    concatenation and gates."""
    nb = nb or rng.randint(1, 3)
    ni = ni or rng.randint(1, 6)
    d = d or rng.randint(1, 6)
    version = version or rng.randint(2, 4)
    m = Model()
    total = ni + d
    if quantized:
        ws, wzp = rng.uniform(0.002, 0.02), rng.randint(90, 170)
        ins = [m.add("input", [nb, ni], "UINT8", scale=1 / 128, zp=128),
               m.add("prev_activ", [nb, d], "UINT8", scale=1 / 128, zp=128),
               m.add("weights", [4 * d, total], weights_type or "UINT8",
                     [rng.randint(0, 255) for _ in range(4 * d * total)], ws, wzp),
               m.add("bias", [4 * d], "INT32", [rng.randint(-3000, 3000) for _ in range(4 * d)], ws / 128, 0),
               m.add("prev_state", [nb, d], "INT16", scale=2.0 ** -11, zp=0)]
        outs = [m.add("activ", [nb, d], "UINT8", scale=1 / 128, zp=128),
                m.add("state", [nb, d], "INT16", scale=2.0 ** state_log2, zp=0),
                m.add("concat", [nb, total], "UINT8", scale=1 / 128, zp=128),
                m.add("gates", [nb, 4 * d], "INT16", scale=2.0 ** -12, zp=0)]
        raw = (pack("UINT8", [rng.randint(0, 255) for _ in range(nb * total)]) +
               pack("INT16", [rng.randint(-24000, 24000) for _ in range(nb * d)]))
    else:
        ins = [m.add("input", [nb, ni], "FLOAT32"), m.add("prev_activ", [nb, d], "FLOAT32"),
               m.add("weights", [4 * d, total], weights_type or "FLOAT32",
                     [rng.uniform(-0.7, 0.7) for _ in range(4 * d * total)] if weights_type is None
                     else [rng.randint(-127, 127) for _ in range(4 * d * total)], 0.01 if weights_type else None),
               m.add("bias", [4 * d], "FLOAT32", [rng.uniform(-0.5, 0.5) for _ in range(4 * d)]),
               m.add("prev_state", [nb, d], "FLOAT32")]
        outs = [m.add("activ", [nb, d], "FLOAT32"), m.add("state", [nb, d], "FLOAT32"),
                m.add("concat", [nb, total], "FLOAT32"), m.add("gates", [nb, 4 * d], "FLOAT32")]
        raw = pack("FLOAT32", [rng.uniform(-1.5, 1.5) for _ in range(nb * total)] +
                   [rng.uniform(-2, 2) for _ in range(nb * d)])
    opts = {"fused_activation_function": "TANH", "kernel_type": "BASIC"}
    return finish(m, name, "LSTM", version, ins, outs, "LSTMOptions", opts, raw=raw)


def gen_basic():
    rng = tflite29.seeded(7707)
    for i in range(16):
        basic_case("basic_f_%d" % i, rng, False)
    for i in range(24):
        basic_case("basic_q_%d" % i, rng, True)
    basic_case("basic_f_version1", rng, False, version=1)
    basic_case("basic_q_big", rng, True, nb=2, ni=20, d=16)
    # What TFLite 2.9 refuses.
    basic_case("basic_q_state_scale", rng, True, state_log2=-10)
    basic_case("basic_hybrid", rng, False, weights_type="INT8")
    basic_case("basic_version5", rng, False, version=5)


gen_lstm()
gen_bidi()
gen_basic()
gen_lstm88()
with gzip.open(OUT, "wt") as f:
    json.dump(CASES, f)
print(len(CASES), "cases,", sum(1 for c in CASES if "error" in c), "failing in TFLite")
for c in CASES:
    if "error" in c:
        print(c["name"], c["error"], c["message"][-160:].replace("\n", " | "))
