#!/usr/bin/env bash
# bench-gpu-vs-tflite.sh: the gpu delegate (delego-gpu, on whatever OpenCL
# device it picks: PoCL on a machine without a GPU), delego's CPU kernels
# and the real TensorFlow Lite 2.9's CPU kernels on the same model, in one
# run, alternating so that machine noise hits all three alike. The CPU
# kernels of both get as many threads as PoCL runs (POCL_MAX_PTHREAD_COUNT
# when set, else every CPU), so the comparison is at equal hardware.
#
#   scripts/bench-gpu-vs-tflite.sh [MODEL] [RUNS]
#   default: ../shared/models/mobilenet_v1_0.25_128_float.tflite 20
set -euo pipefail
source "$(dirname "$0")/tflite-ref.sh"
MODEL=${1:-$SHARED/models/mobilenet_v1_0.25_128_float.tflite}
RUNS=${2:-20}
THREADS=${POCL_MAX_PTHREAD_COUNT:-$(nproc)}
mkdir -p bin
go build -o bin/ ./cmd/delego ./plugins/gpu/cmd/delego-gpu

out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
for round in 1 2 3; do
  bin/delego bench "$MODEL" --delegate gpu --runs "$RUNS" --warmup 2 --json >"$out/gpu.$round"
  bin/delego bench "$MODEL" --runs "$RUNS" --warmup 2 --threads "$THREADS" --json >"$out/cpu.$round"
  "$REF/bin/tflbench" -w 2 "$MODEL" seed:1 "$THREADS" 0 "$RUNS" >"$out/tf.$round"
done
python3 - "$MODEL" "$THREADS" "$out" <<'PY'
import json, re, sys, statistics
model, threads, out = sys.argv[1:]
rounds = (1, 2, 3)
gpu = [json.load(open(f"{out}/gpu.{r}"))["median_ms"] for r in rounds]
cpu = [json.load(open(f"{out}/cpu.{r}"))["median_ms"] for r in rounds]
tf = [float(re.search(r"median[^0-9]*([0-9.]+)", open(f"{out}/tf.{r}").read()).group(1)) for r in rounds]
g, c, t = (statistics.median(x) for x in (gpu, cpu, tf))
print(f"model {model}; CPU kernels with {threads} thread(s)")
print(f"delego --delegate gpu : {g:8.2f} ms  {gpu}")
print(f"delego CPU kernels    : {c:8.2f} ms  {cpu}")
print(f"TFLite 2.9 CPU kernels: {t:8.2f} ms  {tf}")
print(f"gpu / TFLite          : {g/t:.2f}x")
print(f"gpu / delego CPU      : {g/c:.2f}x")
PY
