#!/bin/sh
# Runs the training-speed benchmark (train_speed.py) with the dtc already
# built in build/bin (this script builds nothing). Options go through, e.g.
#   test/bench/run.sh --quick
#   test/bench/run.sh --cases gpt-small,gpt-large --precisions fp32
# DTC=/path/to/dtc and PYTHON=/path/to/python (with PyTorch) override the
# defaults.
set -eu
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/../.." && pwd)
exec "${PYTHON:-/usr/bin/python3}" "$bench/train_speed.py" \
  --dtc "${DTC:-$root/build/bin/dtc}" "$@"
