#!/usr/bin/env bash
# deps.sh: install what delego needs on a Debian machine that already has Go.
# Installs only the packages that are missing; safe to run again.
set -euo pipefail

# Debian packages delego builds or tests against: gcc for cgo, libusb for the
# edgetpu delegate (gousb), and XNNPACK with its thread pool (Debian's
# libxnnpack-dev 0.0~git20220216.ae108ef and libpthreadpool-dev), which
# plugins/xnnpack links against. The gpu delegate dlopens libOpenCL.so.1 (the
# ICD loader) at run time; PoCL is a CPU OpenCL implementation its tests run on
# when the machine has no GPU driver, and clang-15 compiles its half-precision
# kernels as for a device with cl_khr_fp16 (which PoCL lacks); Mesa's rusticl
# (mesa-opencl-icd, on llvmpipe) is a second implementation the gpu tests run
# on (scripts/test-gpu-rusticl.sh), enabled only by RUSTICL_ENABLE. qemu-user-static
# runs the arm64 and 32-bit arm builds' tests; Debian's arm64 cross compiler and
# its multiarch libusb (which brings the arm64 libc qemu runs it with) build and
# run the arm64 delego-edgetpu as scripts/release.sh builds it (the dpkg
# architecture arm64 is added for it). The C++ example plugin (examples/cpp-plugin,
# built by integration/cppplugin_test.go) needs g++, make, gRPC and protobuf with
# their code generators, and flatbuffers with flatc.
PACKAGES=(gcc pkg-config libusb-1.0-0-dev libxnnpack-dev libpthreadpool-dev
  ocl-icd-libopencl1 pocl-opencl-icd clang-15 mesa-opencl-icd qemu-user-static
  gcc-aarch64-linux-gnu libusb-1.0-0-dev:arm64
  g++ make libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc
  libflatbuffers-dev flatbuffers-compiler)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    echo "deps.sh: adding the dpkg architecture arm64 (for libusb-1.0-0-dev:arm64)" >&2
    $SUDO dpkg --add-architecture arm64
  fi
  echo "deps.sh: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

command -v go >/dev/null || { echo "deps.sh: Go is required (https://go.dev/dl/)" >&2; exit 1; }
go mod download
