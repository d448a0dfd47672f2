#!/bin/sh
# Runs the training-speed benchmark (train_speed.py) with the dtc already
# built in build/bin (this script builds nothing), after making the peers'
# virtual environment if it is missing (setup_peers.sh). Options go through:
#   test/bench/run.sh --quick
#   test/bench/run.sh --cases gpt-small,gpt-large --precisions fp32
# DTC=/path/to/dtc and DTC_BENCH_VENV=/path/to/venv override the defaults.
set -eu
bench=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$bench/../.." && pwd)
"$bench/setup_peers.sh"
exec /usr/bin/python3 "$bench/train_speed.py" \
  --dtc "${DTC:-$root/build/bin/dtc}" "$@"
