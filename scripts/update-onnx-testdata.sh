#!/usr/bin/env bash
# Rewrites test/onnx/data/{node18,light} (scripts/make-onnx-testdata.py) with
# PyPI's onnx 1.16.2, the last release whose newest opset is 21, in a virtual
# environment of its own (VENV, default build/venv-onnx). The suite reads the
# checked-in files and needs no PyPI package.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-build/venv-onnx}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet onnx==1.16.2 numpy
fi
"$venv/bin/python" scripts/make-onnx-testdata.py
