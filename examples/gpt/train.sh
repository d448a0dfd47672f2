#!/bin/sh
# The main job: exports the GPT example from PyTorch with training data,
# compiles its training step with dtc for 2 data-parallel ranks (AdamW,
# warmup + cosine, ZeRO 1, a global batch of 16: 2 micro-batches of 4 on each
# rank), trains it for 20 steps under mpirun on the CPU, and compares the
# loss trajectory with PyTorch's torch.optim run on the same weights and data
# (one process, the same 16 samples a step).
# Usage: examples/gpt/train.sh [OUTDIR]   (default examples/gpt/generated)
set -eu
example=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$example/../.." && pwd)
out=${1:-$example/generated}
python=${PYTHON:-/usr/bin/python3}
dtc=${DTC:-$root/build/bin/dtc}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

echo "== export the GPT example with 256 training samples into $out"
"$python" "$example/make_example.py" --out "$out" --opset 17 --training \
  --train-data 256 > /dev/null

set -- --global-batch 16 --optimizer adamw --lr 3e-3 --lr-schedule cosine \
  --warmup 4 --total-steps 20 --min-lr 1e-4
echo "== dtc compile (mesh 2x1x1, ZeRO 1, micro-batch 4) -> $out/out/train"
"$dtc" compile "$out/model.onnx" --mesh 2x1x1 --zero 1 -o "$out/out" \
  --micro-batch 4 "$@"

echo "== mpirun -np 2 train: 20 steps"
mpirun -np 2 --oversubscribe "$out/out/train" \
  --data "tokens=$out/train/tokens.npy,targets=$out/train/targets.npy" \
  --steps 20 --log-jsonl "$out/train.jsonl"

echo "== PyTorch reference and comparison"
"$python" "$root/examples/common/train_reference.py" --example gpt \
  --model-dir "$out" --data-dir "$out/train" --out "$out/reference" \
  --steps 20 "$@" > /dev/null
"$python" "$root/test/e2e/Inputs/compare_training.py" "$out/train.jsonl" \
  "$out/reference"
