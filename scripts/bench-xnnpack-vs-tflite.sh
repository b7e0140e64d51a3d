#!/usr/bin/env bash
# bench-xnnpack-vs-tflite.sh: delego with its xnnpack delegate, in process and
# as the delego-xnnpack plugin (out of process), and the real TensorFlow Lite
# 2.9 with its XNNPACK delegate, on the same MobileNets and golden inputs, one
# thread, side by side in one run: the three alternate, model by model, for
# ROUNDS rounds, so machine noise hits them alike. Prints, per side, the
# median of the rounds' medians and the fastest invoke of all rounds, and
# each delego side's ratios to TFLite.
#
# In process is BenchmarkMobileNet (plugins/xnnpack): the delegate in the
# interpreter's process. The plugin side is `delego bench --delegate
# xnnpack` with delego-xnnpack beside delego (both built here), so each
# invoke includes the transfer: the inputs copied into the shared memory
# region, the doorbell rung, the plugin woken, the outputs copied back.
# TFLite's side is tflbench from ../shared/tools/tflite-ref (set up on first
# use by tflite-ref.sh), with
# XNNPACK's QS8 flag for the int8 model. TFLite 2.9's XNNPACK does not run the
# uint8 models (its QU8 support fails on their ADDs or leaves the nodes), so
# for those the reference is TFLite's builtin kernels, marked "builtin".
#
#   scripts/bench-xnnpack-vs-tflite.sh [ROUNDS] [ITERS]
#   default: 5 rounds of 50 timed invokes per model and side, each after
#   WARMUP (default 50) untimed ones: a plugin invoked in a loop settles
#   (threads on their CPUs, polling on) within a few dozen invokes; TFLite
#   gets the same warm-up (its own benchmark_model warms up for 0.5 s).
#   DELEGO_BENCH_SIDES="plugin tflite" leaves the in-process side out
#   DELEGO_BENCH_MODELS="v1_0.25_128_float ..." runs only those models
set -euo pipefail
source "$(dirname "$0")/tflite-ref.sh"
ROUNDS=${1:-5}
ITERS=${2:-50}
WARMUP=${WARMUP:-50}
SIDES=${DELEGO_BENCH_SIDES:-inprocess plugin tflite}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/xnnpack.test" ./plugins/xnnpack
go build -o "$work/" ./cmd/delego ./plugins/xnnpack/cmd/delego-xnnpack
echo '{"xnnpack_settings": {"num_threads": 1}}' >"$work/settings.json"
# Only the plugin built here: nothing on the search path may shadow it.
unset DELEGO_PLUGIN_PATH

# name (BenchmarkMobileNet's), model, golden input, TFLite XNNPACK flag
# (-1: TFLite's builtin kernels).
models=(
  "v1_0.25_128_float mobilenet_v1_0.25_128_float.tflite mobilenet_v1_0.25_128_float__cat_128_f32.input.raw 0"
  "v2_1.0_224_float mobilenet_v2_1.0_224_float.tflite mobilenet_v2_1.0_224_float__cat_224_f32.input.raw 0"
  "tf2_v2_1.0_224_ptq tf2_mobilenet_v2_1.0_224_ptq.tflite tf2_mobilenet_v2_1.0_224_ptq__cat_224.input.raw 1"
  "v1_0.25_128_quant mobilenet_v1_0.25_128_quant.tflite mobilenet_v1_0.25_128_quant__cat_128.input.raw -1"
  "v2_1.0_224_quant mobilenet_v2_1.0_224_quant.tflite mobilenet_v2_1.0_224_quant__cat_224.input.raw -1"
)

if [ -n "${DELEGO_BENCH_MODELS:-}" ]; then
  chosen=()
  for m in "${models[@]}"; do
    for want in $DELEGO_BENCH_MODELS; do
      [ "${m%% *}" = "$want" ] && chosen+=("$m")
    done
  done
  [ ${#chosen[@]} -gt 0 ] || { echo "DELEGO_BENCH_MODELS names none of: ${models[*]%% *}" >&2; exit 2; }
  models=("${chosen[@]}")
fi

for round in $(seq "$ROUNDS"); do
  for m in "${models[@]}"; do
    read -r name model input flag <<<"$m"
    for side in $SIDES; do
      case $side in
      inprocess)
        (cd plugins/xnnpack && DELEGO_SHARED="$SHARED" "$work/xnnpack.test" -test.run '^$' \
          -test.bench "^BenchmarkMobileNet/${name}/xnnpack\$" -test.benchtime "${ITERS}x") |
          grep -o '[0-9.]* median-ms.*[0-9.]* min-ms' | awk -v n="$name" '{print n, "inprocess", $1, $3}'
        ;;
      plugin)
        "$work/delego" bench "$SHARED/models/$model" --input "$SHARED/golden/$input" --delegate xnnpack \
          --settings "$work/settings.json" --threads 1 --warmup "$WARMUP" --runs "$ITERS" --json |
          python3 -c '
import json, sys
r = json.load(sys.stdin)
if r["fallbacks"] or " 0 on the CPU" not in r["plan"]:
    sys.exit("delego-xnnpack did not run the whole model: %s, fallbacks %s" % (r["plan"], r["fallbacks"]))
print(sys.argv[1], "plugin", r["median_ms"], r["min_ms"])' "$name"
        ;;
      tflite)
        if [ "$flag" -ge 0 ]; then
          "$REF/bin/tflbench" -w "$WARMUP" -f "$flag" "$SHARED/models/$model" "$SHARED/golden/$input" 1 1 "$ITERS" 2>/dev/null
        else
          "$REF/bin/tflbench" -w "$WARMUP" "$SHARED/models/$model" "$SHARED/golden/$input" 1 0 "$ITERS" 2>/dev/null
        fi | sed -n 's/.*min=\([0-9.]*\)ms median=\([0-9.]*\)ms.*/\2 \1/p' | sed "s/^/$name tflite /"
        ;;
      esac
    done >>"$work/results"
  done
done

python3 - "$work/results" "$SIDES" "${models[@]}" <<'PY'
import statistics, sys
results, sides, models = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
meds, mins = {}, {}
for line in open(results):
    name, side, med, low = line.split()[:4]
    meds.setdefault((name, side), []).append(float(med))
    mins.setdefault((name, side), []).append(float(low))
label = {"inprocess": "in process", "plugin": "plugin", "tflite": "TFLite 2.9"}
print("ms, 1 thread; median: of the rounds' medians; min: fastest invoke of all rounds;")
print("ratios: to TFLite 2.9 (with XNNPACK, or its builtin kernels where marked)")
head = f"{'model':<20}" + "".join(f" {label[s] + ' med/min':>22}" for s in sides)
for s in sides:
    if s != "tflite" and "tflite" in sides:
        head += f" {label[s] + ' ratio med/min':>26}"
print(head)
for m in models:
    name, _, _, flag = m.split()
    if any(not meds.get((name, s)) for s in sides):
        print(f"{name:<20} missing results")
        continue
    med = {s: statistics.median(meds[(name, s)]) for s in sides}
    low = {s: min(mins[(name, s)]) for s in sides}
    row = f"{name:<20}" + "".join(f" {med[s]:>11.3f} / {low[s]:>7.3f}" for s in sides)
    for s in sides:
        if s != "tflite" and "tflite" in sides:
            row += f" {med[s] / med['tflite']:>16.2f}x / {low[s] / low['tflite']:.2f}x"
    if "tflite" in sides and int(flag) < 0:
        row += "  (TFLite builtin)"
    print(row)
PY
