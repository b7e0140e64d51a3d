#!/usr/bin/env bash
# bench-threads.sh: how much faster delego and the real TensorFlow Lite 2.9
# run a model on THREADS threads than on one. Each round times delego at 1
# and at THREADS threads, then TFLite at both, back to back, and takes each
# runtime's ratio of medians within the round: a machine whose load changes
# from minute to minute then moves both sides of a ratio alike. Prints the
# median ratio over the rounds and their range, and the same for delego's
# 1-thread time over TFLite's.
#
#   scripts/bench-threads.sh [MODEL] [ROUNDS] [RUNS] [THREADS]
#   default: ../shared/models/mobilenet_v2_1.0_224_float.tflite 8 20 2
set -euo pipefail
source "$(dirname "$0")/tflite-ref.sh"
MODEL=${1:-$SHARED/models/mobilenet_v2_1.0_224_float.tflite}
ROUNDS=${2:-8}
RUNS=${3:-20}
THREADS=${4:-2}
mkdir -p bin
go build -o bin/delego ./cmd/delego

out=$(mktemp); trap 'rm -f "$out"' EXIT
delego_ms() {
  bin/delego bench "$MODEL" --runs "$RUNS" --warmup 2 --threads "$1" --no-profile --json |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["median_ms"])'
}
tflite_ms() {
  tflite_median_ms "$MODEL" "$1" 0 0 2 "$RUNS"
}
for ((r = 0; r < ROUNDS; r++)); do
  echo "$(delego_ms 1) $(delego_ms "$THREADS") $(tflite_ms 1) $(tflite_ms "$THREADS")" >>"$out"
done
python3 - "$MODEL" "$THREADS" "$out" <<'PY'
import statistics, sys
model, threads, path = sys.argv[1:]
rounds = [list(map(float, line.split())) for line in open(path)]
def line(name, a, b):
    r = [x[a] / x[b] for x in rounds]
    print(f"{name} {threads} threads vs 1: {statistics.median(r):.2f}x "
          f"(rounds {min(r):.2f}-{max(r):.2f}; 1 thread {statistics.median(x[a] for x in rounds):.4g} ms)")
print(f"model {model}, {len(rounds)} rounds")
line("delego    ", 0, 1)
line("TFLite 2.9", 2, 3)
r = [x[0] / x[2] for x in rounds]
print(f"delego / TFLite 2.9, 1 thread: {statistics.median(r):.2f}x (rounds {min(r):.2f}-{max(r):.2f})")
PY
