#!/usr/bin/env bash
# Builds and runs the ONNX importer's libFuzzer target.
#
#   scripts/fuzz.sh [SECONDS] [LIBFUZZER_ARGS...]   fuzz for SECONDS (default 60)
#   scripts/fuzz.sh --build                         only configure and build
#
# The target and every library it tests are built with clang-14 for coverage
# and AddressSanitizer in build-fuzz/ (Ninja, lld, ccache), through the build
# lock. A run grows build-fuzz/fuzz-corpus/ (kept between runs), starting
# from seeds: every model of Debian's ONNX test data and the malformed models
# of test/Import/ONNX/Inputs/make_malformed.py. Reproducers of crashes, leaks,
# out-of-memory and timeouts go to build-fuzz/fuzz-artifacts/; replay one with
# `build-fuzz/bin/dtc-import-fuzzer FILE`. Pass -fork=N -ignore_crashes=1 to
# keep going after a crash.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
tree=build-fuzz
lock=/tmp/dtc-build.lock
log=$tree/build.log

mkdir -p "$tree"
if [ ! -f "$tree/build.ninja" ]; then
  if ! flock "$lock" cmake -G Ninja -S . -B "$tree" \
      -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-gline-tables-only \
      -DCMAKE_CXX_FLAGS_RELEASE=-O2 -DCMAKE_C_FLAGS_RELEASE=-O2 \
      -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir \
      -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-19/build/utils/lit/lit.py \
      -DLLVM_USE_LINKER=lld -DDTC_ENABLE_FUZZER=ON >"$log" 2>&1; then
    tail -20 "$log" >&2
    echo "fuzz.sh: configuring $tree failed (log: $log)" >&2
    exit 1
  fi
fi
if ! flock "$lock" ninja -C "$tree" dtc-import-fuzzer >"$log" 2>&1; then
  grep -E "error|FAILED" "$log" | head -20 >&2
  echo "fuzz.sh: building the fuzzer failed (log: $log)" >&2
  exit 1
fi

[ "${1:-}" = "--build" ] && exit 0

seconds=${1:-60}
shift || true

# Seeds (test/fuzz/Inputs/make_seeds.py), remade when a generator changes.
seeds=$tree/fuzz-seeds
if [ ! -d "$seeds" ] || [ test/fuzz/Inputs/make_seeds.py -nt "$seeds" ] ||
   [ test/Import/ONNX/Inputs/make_malformed.py -nt "$seeds" ]; then
  rm -rf "$seeds" "$seeds.tmp"
  /usr/bin/python3 test/fuzz/Inputs/make_seeds.py "$seeds.tmp" >/dev/null
  mv "$seeds.tmp" "$seeds"
fi
mkdir -p "$tree/fuzz-corpus" "$tree/fuzz-artifacts"

exec "$tree/bin/dtc-import-fuzzer" -max_total_time="$seconds" -timeout=30 \
  -rss_limit_mb=2048 -max_len=16384 -dict=tools/dtc-import-fuzzer/onnx.dict \
  -artifact_prefix="$root/$tree/fuzz-artifacts/" \
  "$@" "$tree/fuzz-corpus" "$seeds"
