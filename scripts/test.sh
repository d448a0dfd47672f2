#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (lit: dialects, passes,
# importer, ONNX conformance, examples, fuzzing). Ends with the line
# "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }
# The importer's libFuzzer target (test/fuzz), in its own clang tree.
bash scripts/fuzz.sh --build || { echo "0 passed, 1 failed"; exit 1; }
# (nproc honours OMP_NUM_THREADS: count the cores before setting it.)
jobs=$(nproc)
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log=$(mktemp)
python3 /usr/lib/llvm-19/build/utils/lit/lit.py -sv -j "$jobs" build/test 2>&1 | tee "$log"
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
