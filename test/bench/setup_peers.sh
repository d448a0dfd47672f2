#!/bin/sh
# Makes the virtual environment that train_speed.py runs its peers in (once;
# a few GB): ONNX Runtime Training, PyTorch 2 and transformers (the Llama
# case's model) from PyPI, at the versions
# the figures in README.md were measured with. Not part of the suite or of the
# README's two commands.
#   test/bench/setup_peers.sh            # into $DTC_BENCH_VENV or
#                                        # ~/.cache/dtc/venv-bench
set -eu
venv=${DTC_BENCH_VENV:-$HOME/.cache/dtc/venv-bench}
if [ -x "$venv/bin/python" ] &&
   "$venv/bin/python" -c 'import torch, torchvision, transformers, onnxruntime.training.api' 2>/dev/null
then
  echo "$venv: ready"
  exit 0
fi
python3 -m venv "$venv"
# onnx 1.16: ONNX Runtime 1.19 loads models up to IR version 10, and newer
# onnx writes the artifacts' optimizer model at a later one.
"$venv/bin/pip" install --quiet torch==2.5.1 onnxruntime-training-cpu==1.19.2 \
  torchvision==0.20.1 onnx==1.16.2 transformers==4.46.3 numpy
echo "$venv: ready"
