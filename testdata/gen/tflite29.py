"""tflite29.py: what the *_tflite29_gen.py generators share: packing values,
writing a one-operator model as flatbuffer JSON, compiling it with flatc and
running it once with TensorFlow Lite 2.9 through the runner built from
tflite29_run.c (see its header).

The generators import it from their parent folder (testdata/gen).
"""
import json, os, re, struct, subprocess, sys

# COMPLEX64 and COMPLEX128 values are given as flat lists of (real, imag)
# pairs.
FMT = {"FLOAT32": "f", "INT32": "i", "UINT8": "B", "INT8": "b", "INT16": "h", "INT64": "q", "BOOL": "?",
       "FLOAT64": "d", "UINT32": "I", "COMPLEX64": "f", "COMPLEX128": "d"}


def args():
    """The generators' command line, SCHEMA.fbs RUNNER WORKDIR OUT.json.gz;
    WORKDIR is created."""
    schema, runner, work, out = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    return schema, runner, work, out


def pack(typ, vals):
    """The bytes of vals as a tensor of type typ; for STRING (vals: str or
    bytes), TFLite's string buffer."""
    if typ == "STRING":
        return string_buffer(vals)
    return struct.pack("<%d%s" % (len(vals), FMT[typ]), *vals)


def string_buffer(vals):
    """TFLite's string buffer of vals (str, encoded as UTF-8, or bytes): the
    count, the count+1 offsets from the buffer's start, then the bytes."""
    data = [v.encode() if isinstance(v, str) else bytes(v) for v in vals]
    off = 4 * (len(data) + 2)
    offsets = []
    for d in data:
        offsets.append(off)
        off += len(d)
    offsets.append(off)
    return struct.pack("<%di" % (len(data) + 2), len(data), *offsets) + b"".join(data)


def unpack_strings(b):
    """The strings (bytes) of a string buffer."""
    n = struct.unpack_from("<i", b)[0]
    offs = struct.unpack_from("<%di" % (n + 1), b, 4)
    return [b[offs[i]:offs[i + 1]] for i in range(n)]


def nelem(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def builtin_codes(schema):
    """The BuiltinOperator values of schema.fbs, by name."""
    codes = {}
    txt = open(schema).read()
    m = re.search(r"enum BuiltinOperator : int32 \{(.*?)\}", txt, re.S)
    for line in m.group(1).splitlines():
        mm = re.match(r"\s*([A-Z0-9_]+)\s*=\s*(-?\d+)", line)
        if mm:
            codes[mm.group(1)] = int(mm.group(2))
    return codes


def flexbuffer_map(m):
    """The FlexBuffers bytes of a map from strings to ints, floats and bools
    (custom op options), every value and offset 8 bytes wide."""
    FBT_INT, FBT_FLOAT, FBT_KEY, FBT_MAP, FBT_VECTOR_KEY, FBT_BOOL = 1, 3, 4, 9, 14, 26
    W64 = 3  # bit width code of 8-byte values
    buf = bytearray()
    keys = sorted(m)
    key_pos = []
    for k in keys:
        key_pos.append(len(buf))
        buf += k.encode() + b"\0"
    buf += b"\0" * (-len(buf) % 8)
    buf += struct.pack("<Q", len(keys))
    keys_vec = len(buf)
    for kp in key_pos:
        buf += struct.pack("<Q", len(buf) - kp)
    prefix = len(buf)
    buf += struct.pack("<QQQ", prefix - keys_vec, 8, len(keys))
    values = len(buf)
    types = b""
    for k in keys:
        v = m[k]
        if isinstance(v, bool):
            buf += struct.pack("<Q", int(v))
            types += bytes([FBT_BOOL << 2 | W64])
        elif isinstance(v, int):
            buf += struct.pack("<q", v)
            types += bytes([FBT_INT << 2 | W64])
        else:
            buf += struct.pack("<d", v)
            types += bytes([FBT_FLOAT << 2 | W64])
    buf += types
    root = len(buf)
    buf += struct.pack("<Q", root - values) + bytes([FBT_MAP << 2 | W64, 8])
    return bytes(buf)


def model(op, code, version, inputs, outputs, quant, options_type=None, options=None, custom=None):
    """Returns the flatbuffer JSON of a model whose one operator op (builtin
    code code) reads inputs and writes outputs, and the bytes of its
    non-constant inputs concatenated.

    custom: for op CUSTOM, a (name, options) pair: the custom op's name and
    its options as a dict, written as a FlexBuffers map (flexbuffer_map).

    inputs: dicts with type, shape, vals and const, or None for an absent
    optional input; outputs: dicts with type and optionally shape.
    quant(t, is_input) gives a tensor's quantization table, or None.
    """
    tensors, buffers = [], [{}]
    sg_inputs, op_inputs, raw = [], [], b""
    for i, t in enumerate(inputs):
        if t is None:
            op_inputs.append(-1)
            continue
        buf = 0
        if t.get("const"):
            buffers.append({"data": list(pack(t["type"], t["vals"]))})
            buf = len(buffers) - 1
        elif t["type"] == "STRING":
            b = pack(t["type"], t["vals"])
            raw += struct.pack("<I", len(b)) + b  # the runner reads a string buffer's size first
        else:
            raw += pack(t["type"], t["vals"])
        td = {"shape": t["shape"], "type": t["type"], "buffer": buf, "name": "in%d" % i}
        q = quant(t, True)
        if q is not None:
            td["quantization"] = q
        tensors.append(td)
        op_inputs.append(len(tensors) - 1)
        if not t.get("const"):
            sg_inputs.append(len(tensors) - 1)
    op_outputs = []
    for i, t in enumerate(outputs):
        td = {"shape": t.get("shape", []), "type": t["type"], "buffer": 0, "name": "out%d" % i}
        q = quant(t, False)
        if q is not None:
            td["quantization"] = q
        tensors.append(td)
        op_outputs.append(len(tensors) - 1)
    opd = {"opcode_index": 0, "inputs": op_inputs, "outputs": op_outputs}
    if options_type:
        opd["builtin_options_type"] = options_type
        opd["builtin_options"] = options or {}
    opcode = {"deprecated_builtin_code": min(code, 127), "builtin_code": op, "version": version}
    if custom is not None:
        opcode["custom_code"] = custom[0]
        opd["custom_options"] = list(flexbuffer_map(custom[1]))
        opd["custom_options_format"] = "FLEXBUFFERS"
    m = {"version": 3,
         "operator_codes": [opcode],
         "subgraphs": [{"tensors": tensors, "inputs": sg_inputs, "outputs": op_outputs, "operators": [opd]}],
         "buffers": buffers}
    return m, raw


def run(schema, runner, work, name, m, raw):
    """Compiles model m to WORK/name.tflite and runs it once on raw. Returns
    the runner's process (returncode 3: Prepare failed, 4: Eval failed, other
    non-zero: load or crash), the model's bytes and, on success, the outputs
    as (meta, bytes) pairs, meta holding their shape."""
    w = os.path.join(work, name)
    json.dump(m, open(w + ".json", "w"))
    subprocess.run(["flatc", "-b", "-o", work, schema, w + ".json"], check=True, capture_output=True)
    open(w + ".in.raw", "wb").write(raw)
    for f in (w + ".out.raw", w + ".meta.json"):
        if os.path.exists(f):
            os.remove(f)
    p = subprocess.run([runner, w + ".tflite", w + ".in.raw", w + ".out.raw", w + ".meta.json"],
                       capture_output=True, text=True)
    outs = []
    if p.returncode == 0:
        meta = json.load(open(w + ".meta.json"))
        data = open(w + ".out.raw", "rb").read()
        off = 0
        for mo in meta:
            outs.append((mo, data[off:off + mo["bytes"]]))
            off += mo["bytes"]
    return p, open(w + ".tflite", "rb").read(), outs


def stage(p):
    """The stage at which a failed run stopped."""
    return {3: "prepare", 4: "eval"}.get(p.returncode, "load")
