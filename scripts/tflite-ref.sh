# tflite-ref.sh, sourced by the scripts that compare delego with the real
# TensorFlow Lite 2.9: goes to the repository root, sets SHARED ($DELEGO_SHARED,
# default ../shared) and REF ($DELEGO_TFLITE_REF, default .tflite-ref/), and
# sets up the reference harness (tflbench) from $SHARED/tools/tflite-ref on
# first use (needs npm; the library is kept in $REF, never committed), and
# beside it scripts/tflite-ns.c, which times Invokes to the nanosecond
# (tflbench prints whole microseconds).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SHARED=${DELEGO_SHARED:-$PWD/../shared}
REF=${DELEGO_TFLITE_REF:-$PWD/.tflite-ref}
[ -x "$REF/bin/tflbench" ] || bash "$SHARED/tools/tflite-ref/setup.sh" "$REF" >&2
if [ ! -x "$REF/bin/tflite-ns" ] || [ scripts/tflite-ns.c -nt "$REF/bin/tflite-ns" ]; then
  gcc -O2 -Wall -o "$REF/bin/tflite-ns" scripts/tflite-ns.c \
    -I"$REF/include" -L"$REF/lib" -ltensorflowlite_c -Wl,-rpath,"$REF/lib" >&2
fi

# tflite_median_ms MODEL THREADS XNNPACK(0/1) XNNPACK_FLAGS WARMUP RUNS: the
# median of TFLite 2.9's timed Invokes, in milliseconds (tflite-ns), on
# tflbench's seed:1 inputs.
tflite_median_ms() {
  "$REF/bin/tflite-ns" "$@" 2>/dev/null | sed -n 's/^median_ns=\([0-9]*\) .*/\1/p' | awk '{ printf "%.6f\n", $1 / 1e6 }'
}
