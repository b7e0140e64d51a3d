# tflite-ref.sh, sourced by the scripts that compare delego with the real
# TensorFlow Lite 2.9: goes to the repository root, sets SHARED ($DELEGO_SHARED,
# default ../shared) and REF ($DELEGO_TFLITE_REF, default .tflite-ref/), and
# sets up the reference harness (tflbench) from $SHARED/tools/tflite-ref on
# first use (needs npm; the library is kept in $REF, never committed).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
SHARED=${DELEGO_SHARED:-$PWD/../shared}
REF=${DELEGO_TFLITE_REF:-$PWD/.tflite-ref}
[ -x "$REF/bin/tflbench" ] || bash "$SHARED/tools/tflite-ref/setup.sh" "$REF" >&2
