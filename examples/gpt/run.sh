#!/bin/sh
# Exports the GPT example and checks dtc's import and interpreter against
# PyTorch on it. Usage: examples/gpt/run.sh [OUTDIR] (see ../common/run.sh).
exec "$(dirname "$0")/../common/run.sh" "$(dirname "$0")" 4 \
  "tokens targets" "logits loss" "$@"
