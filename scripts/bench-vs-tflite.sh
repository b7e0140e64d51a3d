#!/usr/bin/env bash
# bench-vs-tflite.sh: delego and the real TensorFlow Lite 2.9 on the same
# model, same thread count, in one run, and the ratio of their median
# latencies. Sets up the reference harness on first use (tflite-ref.sh).
#
#   scripts/bench-vs-tflite.sh [MODEL] [RUNS] [THREADS]
#   default: ../shared/models/mobilenet_v2_1.0_224_quant.tflite 20 1
set -euo pipefail
source "$(dirname "$0")/tflite-ref.sh"
MODEL=${1:-$SHARED/models/mobilenet_v2_1.0_224_quant.tflite}
RUNS=${2:-20}
THREADS=${3:-1}
mkdir -p bin
go build -o bin/delego ./cmd/delego

# Alternate the two so that machine noise hits both alike.
dl=$(mktemp); tf=$(mktemp); trap 'rm -f "$dl" "$tf"' EXIT
for round in 1 2 3; do
  bin/delego bench "$MODEL" --runs "$RUNS" --warmup 2 --threads "$THREADS" --no-profile --json >"$dl.$round"
  tflite_median_ms "$MODEL" "$THREADS" 0 0 2 "$RUNS" >"$tf.$round"
done
python3 - "$MODEL" "$THREADS" "$dl" "$tf" <<'PY'
import json, sys, statistics
model, threads, dl, tf = sys.argv[1:]
d = [json.load(open(f"{dl}.{r}"))["median_ms"] for r in (1, 2, 3)]
t = []
for r in (1, 2, 3):
    t.append(float(open(f"{tf}.{r}").read()))
dm, tm = statistics.median(d), statistics.median(t)
print(f"model {model}, {threads} thread(s)")
print(f"delego median of medians : {dm:.4g} ms  {d}")
print(f"TFLite 2.9 median        : {tm:.4g} ms  {t}")
print(f"ratio delego/TFLite      : {dm/tm:.2f}x")
PY
