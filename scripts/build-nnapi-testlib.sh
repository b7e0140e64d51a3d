#!/usr/bin/env bash
# build-nnapi-testlib.sh: builds the test NNAPI runtime
# (plugins/nnapi/testruntime, see its README.md), a libneuralnetworks.so
# with the NDK ABI that the nnapi plugin loads through
# DELEGO_NNAPI_LIBRARY off Android.
#
#   scripts/build-nnapi-testlib.sh OUTDIR [--selftest]
#
# writes OUTDIR/libneuralnetworks.so (every function up to API level 31) and
# OUTDIR/api27/libneuralnetworks.so (only Android 8.1's NNAPI 1.0
# functions). With --selftest it also builds and runs
# plugins/nnapi/testruntime/selftest.c against the first. Quiet on success.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ] || { [ $# -eq 2 ] && [ "$2" != --selftest ]; }; then
	echo "usage: $0 OUTDIR [--selftest]" >&2
	exit 2
fi
out=$1
src=$(cd "$(dirname "$0")/../plugins/nnapi/testruntime" && pwd)
cc=${CC:-gcc}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "$0: $cc not found: the test NNAPI runtime needs a C compiler (apt-get install gcc)" >&2
	exit 1
fi
flags=(-std=c11 -O2 -fPIC -Wall -Wextra -Werror -ffp-contract=off)
lib=(-shared -fvisibility=hidden "$src/runtime.c" "$src/ops.c" "$src/kernels.c" -lm -lpthread)
mkdir -p "$out/api27"
"$cc" "${flags[@]}" -o "$out/libneuralnetworks.so" "${lib[@]}"
"$cc" "${flags[@]}" -DDELEGO_NNAPI_TEST_API=27 -o "$out/api27/libneuralnetworks.so" "${lib[@]}"
if [ "${2:-}" = --selftest ]; then
	"$cc" "${flags[@]}" -o "$out/nnapi-selftest" "$src/selftest.c" -ldl
	"$out/nnapi-selftest" "$out/libneuralnetworks.so" "$out/api27/libneuralnetworks.so"
fi
