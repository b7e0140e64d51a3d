#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it. Installs what the tests need,
# then vets and tests every package (the plugin transport's concurrency and
# fault tests again under -race) and fuzzes briefly the model loader and
# verifier (FuzzLoad), loading and running small graphs (FuzzNewModel) and
# the Edge TPU options parser. It also runs the gpu tests on a second OpenCL
# implementation, and the kernels and goldens on arm64 and 32-bit arm under
# qemu-user (DELEGO_EMULATED=1 enables the emulated golden test, which also
# runs the arm64 delego-edgetpu and delego-cpu plugins under qemu-aarch64).
#   DELEGO_FUZZTIME=10m scripts/test.sh   fuzz longer (a duration, or a count such as 5000000x)
#   DELEGO_RELEASE_TEST=1 scripts/test.sh also build the release of every target
#                                          (scripts/release.sh) into a temporary folder
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
test -d ../shared/models || { echo "test.sh: ../shared (models, golden outputs) must sit beside the repository" >&2; exit 1; }

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then echo "test.sh: gofmt would change: $unformatted" >&2; exit 1; fi
go vet ./...
# The nnapi plugin cross-builds for Android without an NDK (NNAPI is opened at run time).
CGO_ENABLED=0 GOOS=android GOARCH=arm64 go build -o /dev/null ./plugins/nnapi/cmd/delego-nnapi
go test -count=1 -timeout 20m ./...
# The example plugin, a module of its own as a vendor's is: go vet and go test at the root skip it.
(cd examples/plugin && go vet ./... && go test -count=1 ./...)
# The gpu delegate on a second OpenCL implementation (Mesa's rusticl).
scripts/test-gpu-rusticl.sh
# The kernels' pure-Go twins, which the purego build tag selects on every architecture.
go test -count=1 -tags purego ./core/kernels/...
# The kernels and every golden on linux/arm64 and linux/arm (GOARM=7), under qemu-user: arm64 as
# qemu's "max" CPU (NEON with SDOT) and as a Cortex-A72 (Raspberry Pi 4: NEON without SDOT).
GOARCH=arm64 go test -count=1 -exec qemu-aarch64-static ./core/kernels/... ./tensor/
QEMU_CPU=cortex-a72 GOARCH=arm64 go test -count=1 -exec qemu-aarch64-static ./core/kernels/...
GOARCH=arm GOARM=7 go test -count=1 -exec qemu-arm-static ./core/kernels/... ./tensor/
DELEGO_EMULATED=1 go test -count=1 -run '^TestGoldenEmulated$' ./integration
# Every release target (several minutes from a cold build cache): only when asked.
if [ -n "${DELEGO_RELEASE_TEST:-}" ]; then
  release=$(mktemp -d)
  trap 'rm -rf "$release"' EXIT
  scripts/release.sh "$release"
fi
# The 8-bit and float kernels' twins and their splits across threads, and the resize, ARG_MAX,
# 8-bit ADD and byte-sum kernels against their twins, under the race detector, which also
# checks their unsafe pointer arithmetic (checkptr).
go test -count=1 -race -run 'TestQuantGemmModesIdentical|TestDepthwiseModesIdentical|TestFloatDepthwiseKernels|Workers|Resize|ArgBytes|QuantAddTables|ByteSum|RowTerms|ReadsNoFurther' ./core/kernels
# Plugin processes shared by interpreters on many goroutines, the doorbell and the fault
# paths, under the race detector.
go test -count=1 -race -run 'Concurrent|Fault|Close|Doorbell' ./delegate/plugin
# By default each fuzzes a number of inputs (about 20 s each on the 2-core development machine), not
# a duration: Go 1.26's fuzz coordinator can fail a duration-bound run at its very deadline with a
# bare "context deadline exceeded" and no failing input (golang/go#75804, fixed in Go 1.27).
go test -count=1 -run '^$' -fuzz '^FuzzLoad$' -fuzztime "${DELEGO_FUZZTIME:-200000x}" -fuzzminimizetime 100x ./model
go test -count=1 -run '^$' -fuzz '^FuzzNewModel$' -fuzztime "${DELEGO_FUZZTIME:-30000x}" -fuzzminimizetime 100x ./core
go test -count=1 -run '^$' -fuzz '^FuzzParse$' -fuzztime "${DELEGO_FUZZTIME:-600000x}" -fuzzminimizetime 100x ./plugins/edgetpu/executable
# The picture decoders behind --image (with a small pixel cap) and --input's reader.
go test -count=1 -run '^$' -fuzz '^FuzzDecodeImage$' -fuzztime "${DELEGO_FUZZTIME:-300000x}" -fuzzminimizetime 100x ./adapters
go test -count=1 -run '^$' -fuzz '^FuzzReadInput$' -fuzztime "${DELEGO_FUZZTIME:-40000x}" -fuzzminimizetime 100x ./cmd/delego
