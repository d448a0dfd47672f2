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
# Timings that two cores cannot take while another test runs beside them
# (the pipeline bubble at one core per rank) run alone, after the rest.
alone='pipeline-bubble'
# Runs lit, its output also in $log; returns lit's status.
lit() {
  python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv "$@" 2>&1 | tee "$log"
  return "${PIPESTATUS[0]}"
}
# A figure of lit's summary ("  Passed: 4", or "  Passed  : 4" when a
# filter excluded tests).
count() { sed -n "s/^ *$1 *: *\([0-9]*\).*/\1/p" "$log" | tail -1; }
passed=0; failed=0; unsupported=0; status=0
tally() {
  local p f u x xp t
  p=$(count Passed); f=$(count Failed); u=$(count Unsupported)
  x=$(count "Expectedly Failed"); xp=$(count "Unexpectedly Passed")
  t=$(count "Timed Out")
  passed=$(( passed + ${p:-0} + ${x:-0} ))
  failed=$(( failed + ${f:-0} + ${xp:-0} + ${t:-0} ))
  unsupported=$(( unsupported + ${u:-0} ))
}
first=0
lit -j "$jobs" --filter-out "$alone" "${targets[@]}" || first=$?
tally
# (lit exits 1 when its filter leaves no test: the targets may hold none.)
second=0
lit -j 1 --param alone=1 --filter "$alone" "${targets[@]}" || second=$?
if grep -q "^-- Testing: [1-9]" "$log"; then tally; else second=0; fi
if [ "$first" -ne 0 ] || [ "$second" -ne 0 ]; then status=1; fi
rm -f "$log"
if [ "$status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "${passed} passed, ${failed} failed, ${unsupported} skipped"
exit "$status"
