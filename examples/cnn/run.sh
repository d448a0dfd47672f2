#!/bin/sh
# Exports the CNN example and checks dtc's import and interpreter against
# PyTorch on it. Usage: examples/cnn/run.sh [OUTDIR] (see ../common/run.sh).
exec "$(dirname "$0")/../common/run.sh" "$(dirname "$0")" 4 \
  "images labels" "logits loss" "$@"
