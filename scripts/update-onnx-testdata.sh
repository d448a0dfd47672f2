#!/usr/bin/env bash
# Rewrites test/onnx/data/{node18,light} (scripts/make-onnx-testdata.py) with
# PyPI's onnx 1.16.2, the last release whose newest opset is 21, in a virtual
# environment of its own (VENV, default build/venv-onnx), then the outputs
# ONNX corrected since with onnx 1.23.2 (LATER_VENV). The suite reads the
# checked-in files and needs no PyPI package.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-build/venv-onnx}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet onnx==1.16.2 numpy
fi
"$venv/bin/python" scripts/make-onnx-testdata.py
# Outputs that 1.16.2's reference evaluator got wrong, from a later release's
# (scripts/refresh-stale-onnx-outputs.py lists them and why).
later=${LATER_VENV:-build/venv-onnx-later}
if [ ! -x "$later/bin/python" ]; then
  python3 -m venv "$later"
  "$later/bin/pip" install --quiet onnx==1.23.2 numpy
fi
"$later/bin/python" scripts/refresh-stale-onnx-outputs.py
