#!/usr/bin/env bash
# bench-table.sh: delego against the real TensorFlow Lite 2.9 over many
# models, as a Markdown table: the 1-thread ratio delego/TFLite and each
# runtime's speedup from 1 to 2 threads, medians of the same 5 rounds
# (scripts/bench-threads.sh).
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
# row MODEL: "ratio delego tflite": delego's 1-thread time over TFLite's and
# each runtime's 2-thread speedup, from rounds that time both runtimes at 1
# and 2 threads back to back (bench-threads.sh).
row() {
  scripts/bench-threads.sh "$1" 5 "$RUNS" 2 | awk '
    function after(word,  i) { for (i = 1; i <= NF; i++) if ($i == word) { sub("x", "", $(i+1)); return $(i+1) } }
    /^delego .*threads vs 1/ { d = after("1:") } /^TFLite .*threads vs 1/ { t = after("1:") }
    /1 thread:/ { r = after("thread:") } END { print r, d, t }'
}
echo "| model | delego / TFLite, 1 thread | delego 2 threads vs 1 | TFLite 2 threads vs 1 |"
echo "| --- | ---: | ---: | ---: |"
for m in "${models[@]}"; do
  read -r r d t < <(row "$m")
  printf "| %s | %sx | %sx | %sx |\n" "$(basename "$m" .tflite)" "$r" "$d" "$t"
done
