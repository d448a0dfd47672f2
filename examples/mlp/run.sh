#!/bin/sh
# Exports the MLP example and checks dtc's import and interpreter against
# PyTorch on it. Usage: examples/mlp/run.sh [OUTDIR] (see ../common/run.sh).
exec "$(dirname "$0")/../common/run.sh" "$(dirname "$0")" 8 \
  "x y" "logits loss" "$@"
