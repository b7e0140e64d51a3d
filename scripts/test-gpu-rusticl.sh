#!/usr/bin/env bash
# test-gpu-rusticl.sh: the gpu delegate's tests again on a second OpenCL
# implementation, Mesa's rusticl on llvmpipe (mesa-opencl-icd, which
# scripts/deps.sh installs), alone in its own ICD list: a kernel that only
# PoCL's compiler accepts, or that reads past a buffer PoCL happens to
# tolerate, fails here. Two tests are left out: they hand the driver a
# program binary that is not its own, on which rusticl 22.3 aborts the
# process ("unknown version") instead of returning CL_INVALID_BINARY; the
# delegate's cache never does that (entries are checksummed and keyed by
# the driver).
set -euo pipefail
cd "$(dirname "$0")/.."
lib=$(dpkg -L mesa-opencl-icd 2>/dev/null | grep '/libRusticlOpenCL\.so\.1$' | head -1) ||
  { echo "test-gpu-rusticl.sh: mesa-opencl-icd is not installed (scripts/deps.sh installs it)" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/vendors" "$tmp/cache"
echo "$lib" >"$tmp/vendors/rusticl.icd"
export OCL_ICD_VENDORS=$tmp/vendors RUSTICL_ENABLE=llvmpipe DELEGO_GPU_CACHE=$tmp/cache
devices=$(go test -count=1 -run 'TestListDevices' -v ./plugins/gpu/cl)
grep -q 'rusticl' <<<"$devices" || { echo "test-gpu-rusticl.sh: rusticl lists no llvmpipe device:" >&2; echo "$devices" >&2; exit 1; }
# -short: the half-storage runs of every unit graph stay PoCL's (CI time).
go test -count=1 -short -skip '^(TestProgramBinaryRoundTrip|TestProgramCache)$' ./plugins/gpu/...
go test -count=1 -run 'Gpu' ./integration
