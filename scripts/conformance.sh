#!/usr/bin/env bash
# conformance.sh [SEEDS]: the op conformance suite run live against the real
# TensorFlow Lite 2.9 (see testdata/gen/conformance/README.md).
#
# Every generator under testdata/gen (one per kernel family, plus the
# conformance table's two) makes fresh one-operator and whole-model cases,
# runs them through TFLite 2.9 and writes them to a scratch copy of
# testdata/gen; then the replays (go test, DELEGO_CONFORMANCE_DIR pointing at
# the copy) compare delego with them. SEEDS (default 1) is how many rounds:
#   - 1 (the default) uses the generators' own seeds, so it remakes exactly
#     the recordings committed, and checks that it does;
#   - N > 1 is the long mode: rounds 1..N-1 move every seed
#     ($TFLITE29_SEED) and make TFLITE29_TRIALS (default 20) cases per
#     (op, version, type) in the conformance table, thousands per op.
# Needs python3, flatc, gcc and npm (for the library, set up once in
# .tflite-ref by ../shared/tools/tflite-ref/setup.sh).
set -euo pipefail
source "$(dirname "$0")/tflite-ref.sh"
SEEDS=${1:-1}
command -v flatc >/dev/null || { echo "conformance.sh: flatc is missing (apt-get install flatbuffers-compiler)" >&2; exit 1; }
# The runners: one Invoke (every generator), and several in a row (the
# generators of ops with state, as their fifth argument).
RUNNER=$REF/bin/tflite29_run
INVOKER=$REF/bin/tflite29_invoke
for r in tflite29_run tflite29_invoke; do
	[ -x "$REF/bin/$r" ] || gcc -O2 -o "$REF/bin/$r" "testdata/gen/$r.c" -I"$REF/include" -L"$REF/lib" \
		-ltensorflowlite_c -Wl,-rpath,"$REF/lib"
done
SCHEMA=model/schema/schema.fbs
export TFLITE_C_LIB=$REF/lib/libtensorflowlite_c.so # for the generators that load the library themselves
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# generate DIR: every generator's recordings, laid out like testdata/gen.
generate() {
	local out=$1
	mkdir -p "$out"
	cp testdata/gen/tflite29_resolver.json "$out/"
	for gen in testdata/gen/*/*_tflite29_gen.py; do
		local fam name
		fam=$(basename "$(dirname "$gen")")
		name=$(basename "$gen" _gen.py)
		mkdir -p "$out/$fam"
		local dest=$out/$fam/$name.json.gz
		[ "$fam" = conformance ] && dest=$out/$fam
		python3 "$gen" "$SCHEMA" "$RUNNER" "$WORK/tmp" "$dest" "$INVOKER" >"$WORK/gen.log" 2>&1 ||
			{ cat "$WORK/gen.log" >&2; echo "conformance.sh: $gen failed" >&2; return 1; }
	done
}

# replay DIR: delego against the recordings in DIR.
replay() {
	DELEGO_CONFORMANCE_DIR=$1 go test -count=1 ./core/kernels/... ./core \
		-run 'TFLite29|Conformance'
}

generate "$WORK/seed0"
python3 - "$WORK/seed0" <<'PY'
import glob, gzip, json, os, sys
out, bad = sys.argv[1], 0

def load(path):
    """The cases of a recording as far as they are reproducible: TFLite's
    error words left out (some print uninitialised values), whether it
    refused kept."""
    cases = json.load(gzip.open(path))
    for c in cases:
        if c.get("error"):
            c["error"] = True
        for words in ("detail", "message"):
            c.pop(words, None)
        if c["name"].endswith("_oob"):
            # TFLite read outside its tensors: its outputs are whatever
            # was there, and delego refuses these cases anyway.
            c.pop("invokes", None), c.pop("outputs", None)
    return cases

for made in sorted(glob.glob(os.path.join(out, "*", "*_tflite29.json.gz"))):
    rel = os.path.relpath(made, out)
    committed = os.path.join("testdata", "gen", rel)
    if not os.path.exists(committed) or load(made) != load(committed):
        print("conformance.sh: %s differs from what its generator makes now" % committed)
        bad += 1
sys.exit(1 if bad else 0)
PY
echo "the generators remake the committed recordings"
replay "$WORK/seed0"
for ((s = 1; s < SEEDS; s++)); do
	TFLITE29_SEED=$((s * 1000)) TFLITE29_TRIALS=${TFLITE29_TRIALS:-20} generate "$WORK/seed$s"
	echo "round $s of $((SEEDS - 1)) (TFLITE29_SEED=$((s * 1000)))"
	replay "$WORK/seed$s"
	rm -rf "$WORK/seed$s"
done
