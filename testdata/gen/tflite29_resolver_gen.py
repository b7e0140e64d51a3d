"""tflite29_resolver_gen.py SCHEMA.fbs PROBE_ERRORS WORKDIR OUT.json

Asks the real TensorFlow Lite 2.9 library which builtin ops, at which
versions, its BuiltinOpResolver registers, and writes them as a JSON map
from op name to [min, max] (plus the default custom ops it registers by
name). The conformance suite (core/kernels/conformance_test.go) checks that
the recordings cover every (op, version) in it.

How: for every BuiltinOperator of the schema and versions 1..12, a model
holding that one operator (one FLOAT32 input, one output, no options) is
given to probe_errors (built by ../shared/tools/tflite-ref/setup.sh). The
interpreter looks the op up when it is created; an op the resolver lacks
is reported there as "Didn't find op for builtin opcode", every other
outcome (a later refusal of the made-up tensors, or a crash in the
kernel's init) means the resolver has the op at that version.
"""
import json, os, subprocess, sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import tflite29  # noqa: E402

MAX_VERSION = 12
# TFLite 2.9's default custom ops (BuiltinOpResolver's constructor), by the
# names models carry; names that 2.9 does not register are probed too, as
# the check that the probe can tell.
CUSTOMS = ["AudioSpectrogram", "Mfcc", "TFLite_Detection_PostProcess", "NumericVerify", "NoSuchCustomOp"]


def probe(schema, prober, work, name, code, version, custom=None):
    """True when TFLite 2.9 found a kernel for the op at this version."""
    inputs = [{"type": "FLOAT32", "shape": [1], "vals": [0.0]}]
    outputs = [{"type": "FLOAT32", "shape": [1]}]
    m, _ = tflite29.model(name, code, version, inputs, outputs, lambda t, i: None,
                          custom=(custom, {}) if custom else None)
    base = os.path.join(work, "%s_v%d" % (custom or name, version))
    json.dump(m, open(base + ".json", "w"))
    subprocess.run(["flatc", "-b", "-o", work, schema, base + ".json"], check=True, capture_output=True)
    p = subprocess.run([prober, base + ".tflite"], capture_output=True, text=True)
    if "Didn't find op for builtin opcode" in p.stdout or "unresolved custom op" in p.stdout:
        return False
    if "TfLiteInterpreterCreate" not in p.stdout:
        sys.exit("%s v%d: probe_errors said nothing about the interpreter:\n%s%s" % (name, version, p.stdout, p.stderr))
    return True


def versions(found):
    """The [min, max] range of the versions found, which must be one run."""
    vs = [v for v in range(1, MAX_VERSION + 1) if found[v]]
    if not vs:
        return None
    if vs != list(range(vs[0], vs[-1] + 1)):
        sys.exit("versions %s are not one range" % vs)
    if vs[-1] == MAX_VERSION:
        sys.exit("version %d is registered: raise MAX_VERSION" % MAX_VERSION)
    return [vs[0], vs[-1]]


def main():
    schema, prober, work, out = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    codes = tflite29.builtin_codes(schema)
    table = {}
    for name, code in sorted(codes.items(), key=lambda kv: kv[1]):
        if name in ("CUSTOM", "DELEGATE", "PLACEHOLDER_FOR_GREATER_OP_CODES"):
            continue
        r = versions({v: probe(schema, prober, work, name, code, v) for v in range(1, MAX_VERSION + 1)})
        if r:
            table[name] = r
    for c in CUSTOMS:
        r = versions({v: probe(schema, prober, work, "CUSTOM", codes["CUSTOM"], v, c) for v in range(1, MAX_VERSION + 1)})
        if r:
            table[c] = r
    if "NoSuchCustomOp" in table:
        sys.exit("the probe cannot tell a missing custom op")
    json.dump(table, open(out, "w"), indent=0, sort_keys=True)
    print("%d ops" % len(table))


main()
