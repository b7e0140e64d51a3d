#!/usr/bin/env bash
# bench-xnnpack-vs-tflite.sh: delego with its xnnpack delegate and the real
# TensorFlow Lite 2.9 with its XNNPACK delegate, on the same MobileNets and
# golden inputs, one thread, side by side in one run: the two alternate,
# model by model, for ROUNDS rounds, so machine noise hits both alike. Prints
# the median of each side's per-round medians and their ratio.
#
# The delego side is BenchmarkMobileNet (plugins/xnnpack): the delegate in
# process, through the interpreter. TFLite's side is tflbench from
# ../shared/tools/tflite-ref (set up on first use into $DELEGO_TFLITE_REF,
# default .tflite-ref/, never committed), with XNNPACK's QS8 flag for the
# int8 model. TFLite 2.9's XNNPACK does not run the uint8 models (its QU8
# support fails on their ADDs or leaves the nodes), so for those the
# reference is TFLite's builtin kernels, marked "builtin".
#
#   scripts/bench-xnnpack-vs-tflite.sh [ROUNDS] [ITERS]
#   default: 5 rounds of 50 timed invokes per model and side
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-5}
ITERS=${2:-50}
REF=${DELEGO_TFLITE_REF:-$PWD/.tflite-ref}
SHARED=${DELEGO_SHARED:-$PWD/../shared}

if [ ! -x "$REF/bin/tflbench" ]; then
  bash "$SHARED/tools/tflite-ref/setup.sh" "$REF" >&2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go test -c -o "$work/xnnpack.test" ./plugins/xnnpack

# name (BenchmarkMobileNet's), model, golden input, TFLite XNNPACK flag
# (-1: TFLite's builtin kernels).
models=(
  "v1_0.25_128_float mobilenet_v1_0.25_128_float.tflite mobilenet_v1_0.25_128_float__cat_128_f32.input.raw 0"
  "v2_1.0_224_float mobilenet_v2_1.0_224_float.tflite mobilenet_v2_1.0_224_float__cat_224_f32.input.raw 0"
  "tf2_v2_1.0_224_ptq tf2_mobilenet_v2_1.0_224_ptq.tflite tf2_mobilenet_v2_1.0_224_ptq__cat_224.input.raw 1"
  "v1_0.25_128_quant mobilenet_v1_0.25_128_quant.tflite mobilenet_v1_0.25_128_quant__cat_128.input.raw -1"
  "v2_1.0_224_quant mobilenet_v2_1.0_224_quant.tflite mobilenet_v2_1.0_224_quant__cat_224.input.raw -1"
)

for round in $(seq "$ROUNDS"); do
  for m in "${models[@]}"; do
    read -r name model input flag <<<"$m"
    (cd plugins/xnnpack && DELEGO_SHARED="$SHARED" "$work/xnnpack.test" -test.run '^$' \
      -test.bench "^BenchmarkMobileNet/${name}/xnnpack\$" -test.benchtime "${ITERS}x") |
      grep -o '[0-9.]* median-ms.*[0-9.]* min-ms' | awk -v n="$name" '{print n, "delego", $1, $3}' >>"$work/results"
    if [ "$flag" -ge 0 ]; then
      "$REF/bin/tflbench" -w 2 -f "$flag" "$SHARED/models/$model" "$SHARED/golden/$input" 1 1 "$ITERS" 2>/dev/null
    else
      "$REF/bin/tflbench" -w 2 "$SHARED/models/$model" "$SHARED/golden/$input" 1 0 "$ITERS" 2>/dev/null
    fi | sed -n 's/.*min=\([0-9.]*\)ms median=\([0-9.]*\)ms.*/\2 \1/p' | sed "s/^/$name tflite /" >>"$work/results"
  done
done

python3 - "$work/results" "${models[@]}" <<'PY'
import statistics, sys
results, models = sys.argv[1], sys.argv[2:]
runs, mins = {}, {}
for line in open(results):
    name, side, med, low = line.split()[:4]
    runs.setdefault((name, side), []).append(float(med))
    mins.setdefault((name, side), []).append(float(low))
print("ms, 1 thread; median: of the rounds' medians; min: fastest invoke of all rounds")
print(f"{'model':<20} {'delego+xnnpack':>15} {'TFLite 2.9':>18} {'ratio':>6}  {'min: delego':>11} {'TFLite':>7} {'ratio':>6}")
for m in models:
    name, _, _, flag = m.split()
    d, t = runs.get((name, "delego")), runs.get((name, "tflite"))
    if not d or not t:
        print(f"{name:<20} missing results")
        continue
    dm, tm = statistics.median(d), statistics.median(t)
    dl, tl = min(mins[(name, "delego")]), min(mins[(name, "tflite")])
    ref = "+XNNPACK" if int(flag) >= 0 else " builtin"
    print(f"{name:<20} {dm:>15.3f} {tm:>9.3f}{ref:>9} {dm/tm:>5.2f}x  {dl:>11.3f} {tl:>7.3f} {dl/tl:>5.2f}x")
PY
