#!/usr/bin/env bash
# release.sh [DIR]: build delego and its plugins for the machines Coral users
# run, into DIR (default dist/), one folder and one tarball per target:
#
#   linux_amd64    delego, delego-cpu, delego-xnnpack, delego-edgetpu, delego-gpu, delego-nnapi
#   linux_arm64    the same (Raspberry Pi OS 64-bit, Coral Dev Board, other arm64 boards)
#   linux_arm      the same, GOARM=7 (Raspberry Pi OS 32-bit on a Pi 2 or later)
#   android_arm64  delego, delego-cpu, delego-nnapi (the binaries that need no cgo there)
#
# delego-edgetpu (gousb -> libusb) and delego-xnnpack (XNNPACK) use cgo: for
# arm64 and arm they are cross-compiled with Debian's cross toolchains
# (gcc-aarch64-linux-gnu, gcc-arm-linux-gnueabihf) and link dynamically against
# libusb-1.0.so.0 and libXNNPACK.so.0, as Debian and Raspberry Pi OS ship them.
# libusb comes from Debian's multiarch packages (libusb-1.0-0-dev:arm64, :armhf),
# which this script installs, adding the dpkg architecture when needed. Debian's
# libxnnpack-dev, libpthreadpool-dev and their libraries cannot be installed for
# a second architecture beside the machine's own (they are not Multi-Arch: same:
# apt would remove the amd64 ones), so their arm64/armhf packages are downloaded
# (apt-get download) and unpacked into a private sysroot to link against. Every
# other binary is pure Go (CGO_ENABLED=0). A plugin that cannot be built with
# cgo for a target is built without it, which makes it report itself unusable,
# and the script says so.
#
# Each target folder holds its binaries, SHA256SUMS over them (for
# delego --plugin-checksums) and, on linux, the udev rule a user who is not root
# needs for the Coral USB Accelerator (60-coral-edgetpu.rules). DIR gets one
# tarball per target, delego-VERSION-TARGET.tar.gz, and SHA256SUMS over the
# tarballs. VERSION is git describe's; it is stamped into every binary
# ("delego version", the version "delego plugins" lists).
#
#   DELEGO_RELEASE_TARGETS="linux_arm64 linux_arm" scripts/release.sh   build some targets only
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

out=${1:-dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)

all_targets=(linux_amd64 linux_arm64 linux_arm android_arm64)
read -r -a targets <<<"${DELEGO_RELEASE_TARGETS:-${all_targets[*]}}"
for t in "${targets[@]}"; do
  case " ${all_targets[*]} " in
  *" $t "*) ;;
  *) echo "release.sh: unknown target $t (want some of: ${all_targets[*]})" >&2; exit 2 ;;
  esac
done
wants() { [[ " ${targets[*]} " == *" $1 "* ]]; }

version=$(git describe --tags --always --dirty 2>/dev/null) ||
  { echo "release.sh: git describe failed: run it from a clone of delego" >&2; exit 1; }

log() { echo "release.sh: $*" >&2; }

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# --- What the build needs, installed when missing -------------------------------

packages=(gcc pkg-config libusb-1.0-0-dev libxnnpack-dev libpthreadpool-dev file)
foreign=()
wants linux_arm64 && { packages+=(gcc-aarch64-linux-gnu libusb-1.0-0-dev:arm64); foreign+=(arm64); }
wants linux_arm && { packages+=(gcc-arm-linux-gnueabihf libusb-1.0-0-dev:armhf); foreign+=(armhf); }

added=0
for arch in "${foreign[@]}"; do
  if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    log "adding the dpkg architecture $arch (for Debian's multiarch libusb)"
    $SUDO dpkg --add-architecture "$arch"
    added=1
  fi
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} || added)); then
  log "installing ${missing[*]:-nothing new; updating the package lists}"
  # A mirror in the middle of a sync can fail one architecture's index; what
  # the build needs is checked by the install that follows.
  $SUDO apt-get update -qq || log "warning: apt-get update reported errors"
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
fi
command -v go >/dev/null || { log "Go is required (https://go.dev/dl/)"; exit 1; }

# xnnpack_sysroot ARCH TRIPLET: unpack Debian's XNNPACK and pthreadpool (and
# the libraries they link) for ARCH into a sysroot of their own, once, and print
# its path. Fails (status 1, saying why) when Debian has no such packages.
xnnpack_sysroot() {
  local arch=$1 triplet=$2
  local dir=${XDG_CACHE_HOME:-$HOME/.cache}/delego-release/sysroot-$arch
  if [ -e "$dir/usr/lib/$triplet/libXNNPACK.so" ]; then
    echo "$dir"
    return
  fi
  local debs
  debs=$(mktemp -d)
  if ! (cd "$debs" && apt-get download -qq \
    "libxnnpack-dev:$arch" "libxnnpack0:$arch" "libpthreadpool-dev:$arch" "libpthreadpool0:$arch" \
    "libcpuinfo0:$arch" >/dev/null 2>&1); then
    rm -rf "$debs"
    log "Debian has no libxnnpack-dev:$arch to download (apt-get download failed)"
    return 1
  fi
  rm -rf "$dir"
  mkdir -p "$dir"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$dir"; done
  rm -rf "$debs"
  echo "$dir"
}

# --- Building -------------------------------------------------------------------

ldflags="-s -w -X main.releaseVersion=$version -X github.com/delego/delego/delegate/plugin.releaseVersion=$version"

# build DEST PKG [ENV...]: go build PKG into DEST with ENV. grpcnotrace leaves out
# gRPC's request tracing (golang.org/x/net/trace and html/template), which nothing of
# delego's serves: about 1 MB less resident in every process.
build() {
  local dest=$1 pkg=$2
  shift 2
  env "$@" go build -trimpath -tags grpcnotrace -ldflags "$ldflags" -o "$dest/" "$pkg"
}

# cgo_env TARGET: the environment that builds cgo code for TARGET.
cgo_env() {
  case $1 in
  linux_amd64) echo "CGO_ENABLED=1 CC=gcc" ;;
  linux_arm64) echo "CGO_ENABLED=1 CC=aarch64-linux-gnu-gcc PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig" ;;
  linux_arm) echo "CGO_ENABLED=1 CC=arm-linux-gnueabihf-gcc PKG_CONFIG_LIBDIR=/usr/lib/arm-linux-gnueabihf/pkgconfig:/usr/share/pkgconfig" ;;
  esac
}

notes=()
for target in "${targets[@]}"; do
  goos=${target%_*} goarch=${target#*_}
  dest=$out/$target
  rm -rf "$dest"
  mkdir -p "$dest"
  base=(GOOS="$goos" GOARCH="$goarch")
  [ "$goarch" = arm ] && base+=(GOARM=7)
  log "building $target ($version)"

  build "$dest" ./cmd/delego "${base[@]}" CGO_ENABLED=0
  build "$dest" ./plugins/cpu/cmd/delego-cpu "${base[@]}" CGO_ENABLED=0
  build "$dest" ./plugins/nnapi/cmd/delego-nnapi "${base[@]}" CGO_ENABLED=0
  if [ "$goos" = android ]; then
    notes+=("$target: no delego-gpu (purego needs cgo on android, so the NDK's clang, which Debian does not package), no delego-edgetpu or delego-xnnpack (cgo)")
  else
    build "$dest" ./plugins/gpu/cmd/delego-gpu "${base[@]}" CGO_ENABLED=0
    read -r -a cgo <<<"$(cgo_env "$target")"
    build "$dest" ./plugins/edgetpu/cmd/delego-edgetpu "${base[@]}" "${cgo[@]}"

    case $target in
    linux_amd64) xenv=("${cgo[@]}") ;;
    linux_arm64) triplet=aarch64-linux-gnu debarch=arm64 ;;
    linux_arm) triplet=arm-linux-gnueabihf debarch=armhf ;;
    esac
    if [ "$target" != linux_amd64 ]; then
      if sysroot=$(xnnpack_sysroot "$debarch" "$triplet"); then
        lib=$sysroot/usr/lib/$triplet
        xenv=("${cgo[@]}" CGO_CFLAGS="-I$sysroot/usr/include" CGO_LDFLAGS="-L$lib -Wl,-rpath-link,$lib")
      else
        xenv=(CGO_ENABLED=0)
        notes+=("$target: delego-xnnpack built without cgo: it lists itself as unusable (Debian has no libxnnpack-dev:$debarch)")
      fi
    fi
    build "$dest" ./plugins/xnnpack/cmd/delego-xnnpack "${base[@]}" "${xenv[@]}"
    cp plugins/edgetpu/60-coral-edgetpu.rules "$dest/"
  fi
  (cd "$dest" && sha256sum delego* >SHA256SUMS)
done

# --- Checking what was built, and packing it ------------------------------------

# The ELF machine file(1) must report for each target's binaries.
machine() {
  case $1 in
  linux_amd64) echo "x86-64" ;;
  linux_arm64 | android_arm64) echo "ARM aarch64" ;;
  linux_arm) echo "ARM, EABI5" ;;
  esac
}

echo "delego $version"
for target in "${targets[@]}"; do
  dest=$out/$target
  want=$(machine "$target")
  echo
  echo "$target:"
  for bin in "$dest"/delego*; do
    desc=$(file -b "$bin")
    [[ $desc == *"$want"* ]] || { log "$bin: file(1) says \"$desc\", not $want"; exit 1; }
    linkage="statically linked"
    if [[ $desc == *"dynamically linked"* ]]; then
      needed=$(readelf -d "$bin" | awk '/NEEDED/ {gsub(/[][]/, "", $5); printf "%s%s", sep, $5; sep=" "}')
      linkage="dynamically linked to ${needed:-no library (only the loader)}"
    fi
    if [[ $target == linux_* && $(basename "$bin") == delego-edgetpu && $linkage != *libusb-1.0.so.0* ]]; then
      log "$bin does not link libusb-1.0.so.0 dynamically ($linkage): it could not drive a device"
      exit 1
    fi
    printf '  %-16s %6s  %s, %s\n' "$(basename "$bin")" "$(du -h "$bin" | cut -f1)" "$(cut -d, -f1-2 <<<"$desc")" "$linkage"
  done
  name=delego-$version-$target
  tar -C "$dest/.." --transform "s,^$target,$name," --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$target"
done
(cd "$out" && sha256sum delego-"$version"-*.tar.gz >SHA256SUMS)
echo
echo "tarballs in $out (checksums in $out/SHA256SUMS):"
sed 's/^/  /' "$out/SHA256SUMS"
if ((${#notes[@]})); then
  echo
  printf 'note: %s\n' "${notes[@]}"
fi
