#!/usr/bin/env bash
# bench-table.sh: delego against the real TensorFlow Lite 2.9 over many
# models, as a Markdown table: the 1-thread ratio delego/TFLite (median of
# alternating rounds, scripts/bench-vs-tflite.sh) and each runtime's speedup
# from 1 to 2 threads.
#
#   scripts/bench-table.sh [RUNS] [MODEL...]
#   default: 20 runs over every model in ../shared/models that TFLite 2.9
#   runs (no Edge TPU or Coral custom op, not the failing test model)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=20
if [[ ${1:-} =~ ^[0-9]+$ ]]; then RUNS=$1; shift; fi
models=("$@")
if ((${#models[@]} == 0)); then
  for m in ../shared/models/*.tflite; do
    case $m in *edgetpu* | *posenet* | *model_invoking_error*) continue ;; esac
    models+=("$m")
  done
fi
# ms MODEL THREADS: "delego_ms tflite_ms" from one side-by-side run.
ms() {
  scripts/bench-vs-tflite.sh "$1" "$RUNS" "$2" | awk '
    function before_ms(  i) { for (i = 2; i <= NF; i++) if ($i == "ms") return $(i-1) }
    /^delego median/ { d = before_ms() } /^TFLite 2.9 median/ { t = before_ms() } END { print d, t }'
}
echo "| model | delego / TFLite, 1 thread | delego 2 threads vs 1 | TFLite 2 threads vs 1 |"
echo "| --- | ---: | ---: | ---: |"
for m in "${models[@]}"; do
  read -r d1 t1 < <(ms "$m" 1)
  read -r d2 t2 < <(ms "$m" 2)
  awk -v m="$(basename "$m" .tflite)" -v d1="$d1" -v t1="$t1" -v d2="$d2" -v t2="$t2" \
    'BEGIN { printf "| %s | %.2fx | %.2fx | %.2fx |\n", m, d1/t1, d1/d2, t1/t2 }'
done
