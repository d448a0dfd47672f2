#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (lit: dialects, passes,
# importer, ONNX conformance, examples, fuzzing). Ends with the line
# "N passed, N failed".
#
#   scripts/test.sh [--isa native|avx2] [LIT_ARGS...]
#
# --isa avx2 (or DTC_TEST_ISA=avx2) runs every test as on an x86-64 CPU
# without AVX-512 (OpenBLAS's Haswell kernels, PyTorch's AVX2 paths, code
# generated for x86-64-v3; test/lit.cfg.py), so a developer on an AVX-512
# machine can check the path CI takes on an AVX2-only one. Further arguments
# go to lit in place of the whole suite (for example build/test/e2e).
set -uo pipefail
cd "$(dirname "$0")/.."
export DTC_TEST_ISA=${DTC_TEST_ISA:-native}
if [ "${1:-}" = "--isa" ]; then
  DTC_TEST_ISA=${2:-}
  shift 2 || { echo "test.sh: --isa expects native or avx2" >&2; exit 2; }
fi
case "$DTC_TEST_ISA" in
  native|avx2) ;;
  *) echo "test.sh: --isa (or DTC_TEST_ISA) expects native or avx2, got '$DTC_TEST_ISA'" >&2
     exit 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(build/test)
bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
# The importer's libFuzzer target (test/fuzz), in its own clang tree.
bash scripts/fuzz.sh --build || { echo "0 passed, 1 failed"; exit 1; }
# (nproc honours OMP_NUM_THREADS: count the cores before setting it.)
jobs=$(nproc)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp)
echo "test.sh: instruction set: $DTC_TEST_ISA"
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv -j "$jobs" "${targets[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
count() { sed -n "s/^ *$1: *\([0-9]*\).*/\1/p" "$log" | tail -1; }
passed=$(count Passed); failed=$(count Failed); unsupported=$(count Unsupported)
xfail=$(count "Expectedly Failed"); xpass=$(count "Unexpectedly Passed")
timeouts=$(count "Timed Out")
passed=$(( ${passed:-0} + ${xfail:-0} ))
failed=$(( ${failed:-0} + ${xpass:-0} + ${timeouts:-0} ))
rm -f "$log"
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "${passed} passed, ${failed} failed, ${unsupported:-0} skipped"
exit "$status"
