#!/usr/bin/env bash
# Installs every Debian package dtc needs. Idempotent; quiet when all is there.
set -euo pipefail

PACKAGES=(
  libmlir-19-dev mlir-19-tools llvm-19-dev llvm-19-tools
  libprotobuf-dev protobuf-compiler libonnx-dev python3-onnx libonnx-testdata
  libopenmpi-dev openmpi-bin ninja-build lld libopenblas-dev libdnnl-dev ccache
  python3-torch python3-torchvision libtorch-dev
  cmake g++ clang-14 libclang-rt-14-dev python3-numpy libgtest-dev
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
