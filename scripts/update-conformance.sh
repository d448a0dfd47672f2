#!/usr/bin/env bash
# Reruns the ONNX backend-test suites and rewrites test/onnx/expected-*.txt
# (the tests that must keep passing) and test/onnx/results-*.txt (every
# test's status and reason, for the record). Run after improving coverage.
set -euo pipefail
cd "$(dirname "$0")/.."
# Debian's libonnx-testdata (opsets up to 17), then the node tests of opsets
# 18-21 checked in under test/onnx/data (scripts/update-onnx-testdata.sh).
for suite in node pytorch-converted pytorch-operator simple node18; do
  data=/usr/share/libonnx-testdata/data
  [ "$suite" = node18 ] && data=test/onnx/data
  out=$(mktemp)
  build/bin/dtc test-onnx "$data/$suite" -j "$(nproc)" > "$out" || true
  {
    echo "# Tests of the '$suite' suite expected to pass (scripts/update-conformance.sh)."
    sed -n 's/^PASS //p' "$out"
  } > "test/onnx/expected-$suite.txt"
  grep -v '^REGRESSION' "$out" > "test/onnx/results-$suite.txt"
  echo "$suite: $(tail -1 "$out")"
  rm -f "$out"
done
