#!/usr/bin/env bash
# bench-table.sh: delego against the real TensorFlow Lite 2.9 over many
# models, as a Markdown table: the 1-thread ratio delego/TFLite (median of
# alternating rounds, scripts/bench-vs-tflite.sh) and each runtime's speedup
# from 1 to 2 threads (median of 5 rounds, scripts/bench-threads.sh).
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
# ratio MODEL: delego's median latency over TFLite's, 1 thread, from one
# side-by-side run (bench-vs-tflite.sh).
ratio() {
  scripts/bench-vs-tflite.sh "$1" "$RUNS" 1 | awk '/^ratio/ { sub("x", "", $NF); print $NF }'
}
# scaling MODEL: "delego tflite", each runtime's 2-thread speedup, from
# rounds that time 1 and 2 threads back to back (bench-threads.sh).
scaling() {
  scripts/bench-threads.sh "$1" 5 "$RUNS" 2 | awk '/threads vs 1/ { for (i = 1; i <= NF; i++) if ($i == "1:") { sub("x", "", $(i+1)); printf "%s ", $(i+1) } } END { print "" }'
}
echo "| model | delego / TFLite, 1 thread | delego 2 threads vs 1 | TFLite 2 threads vs 1 |"
echo "| --- | ---: | ---: | ---: |"
for m in "${models[@]}"; do
  r=$(ratio "$m")
  read -r d t < <(scaling "$m")
  printf "| %s | %sx | %sx | %sx |\n" "$(basename "$m" .tflite)" "$r" "$d" "$t"
done
