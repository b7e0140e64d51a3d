#!/usr/bin/env bash
# compare-with-tflite.sh MODEL...: run each model through the real TensorFlow
# Lite 2.9 (../shared/tools/tflite-ref) and through `delego run` on the same
# pseudo-random input (tflbench's seed:1 pattern), and compare all outputs:
# integer outputs byte for byte, float outputs by max abs difference: within
# 1e-4 times the output's largest magnitude (at least 1), or within TFLite's
# own spread, the largest difference between its
# XNNPACK delegate's output and its builtin kernels' on that input (float
# sums in another order; a graph XNNPACK does not run has no spread).
# A development tool for models that have no golden file (e.g. Coral's test
# models); exits non-zero when any model differs or fails in only one of them.
set -euo pipefail
source "$(dirname "$0")/tflite-ref.sh"
mkdir -p bin
go build -o bin/delego ./cmd/delego
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
status=0
for model in "$@"; do
  name=$(basename "$model")
  if ! "$REF/bin/tflbench" -j "$work/meta.json" -i "$work/in.raw" "$model" seed:1 1 0 1 "$work/ref.raw" >"$work/ref.log" 2>&1; then
    ref_err=$(tail -1 "$work/ref.log")
    if bin/delego run "$model" --input /dev/null >/dev/null 2>"$work/dl.err"; then :; fi
    echo "$name: TFLite fails ($ref_err); delego: $(head -c 300 "$work/dl.err" | tr '\n' ' ')"
    continue
  fi
  python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
meta = json.load(open(f"{w}/meta.json"))
data = open(f"{w}/in.raw", "rb").read()
off = 0
with open(f"{w}/args", "w") as a:
    for i, t in enumerate(meta["inputs"]):
        open(f"{w}/in{i}.raw", "wb").write(data[off:off + t["bytes"]])
        off += t["bytes"]
        a.write(f"--input\n{w}/in{i}.raw\n")
PY
  rm -f "$work/xnn.raw"
  "$REF/bin/tflbench" "$model" seed:1 1 1 1 "$work/xnn.raw" >/dev/null 2>&1 || rm -f "$work/xnn.raw"
  mapfile -t args <"$work/args"
  if ! bin/delego run "$model" "${args[@]}" --output "$work/dl.raw" 2>"$work/dl.err"; then
    echo "$name: DELEGO FAILS: $(head -c 400 "$work/dl.err" | tr '\n' ' ')"; status=1; continue
  fi
  python3 - "$work" "$name" <<'PY' || status=1
import json, struct, sys
w, name = sys.argv[1:]
meta = json.load(open(f"{w}/meta.json"))
ref, got = open(f"{w}/ref.raw", "rb").read(), open(f"{w}/dl.raw", "rb").read()
try:
    xnn = open(f"{w}/xnn.raw", "rb").read()
except FileNotFoundError:
    xnn = b""
if len(ref) != len(got):
    print(f"{name}: DIFFERENT SIZES: TFLite {len(ref)} bytes, delego {len(got)}"); sys.exit(1)
off, bad = 0, False
for t in meta["outputs"]:
    r, g = ref[off:off + t["bytes"]], got[off:off + t["bytes"]]
    off += t["bytes"]
    if t["type"] == "FLOAT32":
        rv = struct.unpack(f"<{len(r)//4}f", r); gv = struct.unpack(f"<{len(g)//4}f", g)
        d = max((abs(a - b) for a, b in zip(rv, gv)), default=0.0)
        spread = 0.0
        if len(xnn) == len(ref):
            x = xnn[off - t["bytes"]:off]
            spread = max((abs(a - b) for a, b in zip(rv, struct.unpack(f"<{len(x)//4}f", x))), default=0.0)
        tol = 1e-4 * max(1.0, max((abs(a) for a in rv), default=0.0))
        verdict = "ok" if d <= tol else f"ok, within TFLite's own spread {spread:.3g}" if d <= spread else "DIFFERS"
        bad |= verdict == "DIFFERS"
        print(f"{name}: output {t['index']} {t['name']} FLOAT32 max abs diff {d:.3g} {verdict}")
    else:
        n = sum(1 for a, b in zip(r, g) if a != b)
        bad |= n > 0
        print(f"{name}: output {t['index']} {t['name']} {t['type']} {'identical' if n == 0 else f'{n} of {len(r)} bytes DIFFER'}")
sys.exit(1 if bad else 0)
PY
done
exit $status
