#!/bin/sh
# Generates one example and checks dtc against PyTorch on it: exports the model
# (opset 17, training mode, dynamic batch axis) with PyTorch's reference
# outputs, imports it at batch size 3, and interprets it at the export's batch
# size and at 3, comparing every output with PyTorch's.
#
# Usage:
#   examples/common/run.sh EXAMPLE_DIR EXPORT_BATCH "INPUTS" "OUTPUTS" [OUTDIR]
#   INPUTS, OUTPUTS: the ONNX input and output names, space-separated.
#   OUTDIR: where the files go (default EXAMPLE_DIR/generated).
# Environment: DTC (the dtc binary; default build/bin/dtc, else dtc on PATH),
#   PYTHON (default /usr/bin/python3, whose PyTorch makes the references).
set -eu

if [ $# -lt 4 ] || [ $# -gt 5 ]; then
  echo "usage: $0 EXAMPLE_DIR EXPORT_BATCH \"INPUTS\" \"OUTPUTS\" [OUTDIR]" >&2
  exit 2
fi
example=$(cd "$1" && pwd)
batch=$2
inputs=$3
outputs=$4
out=${5:-$example/generated}
root=$(cd "$example/../.." && pwd)
python=${PYTHON:-/usr/bin/python3}
if [ -z "${DTC:-}" ]; then
  if [ -x "$root/build/bin/dtc" ]; then
    DTC=$root/build/bin/dtc
  else
    DTC=dtc
  fi
fi
ref_batch=3

# The --input/--expect flags for the data in directory $1.
data_flags() {
  for name in $inputs; do
    printf ' --input %s=%s/%s.npy' "$name" "$1" "$name"
  done
  for name in $outputs; do
    printf ' --expect %s=%s/%s.npy' "$name" "$1" "$name"
  done
}

echo "== export $(basename "$example") into $out"
"$python" "$example/make_example.py" --out "$out" --opset 17 --training \
  --batch "$batch" --ref-batch "$ref_batch"

echo "== dtc import --batch $ref_batch -> $out/model.mlir"
"$DTC" import "$out/model.onnx" --batch "$ref_batch" -o "$out/model.mlir"

echo "== dtc interpret at the export's batch size ($batch)"
# shellcheck disable=SC2046 # the flags are meant to split
"$DTC" interpret "$out/model.onnx" --batch "$batch" $(data_flags "$out")

echo "== dtc interpret at batch size $ref_batch"
# shellcheck disable=SC2046
"$DTC" interpret "$out/model.onnx" --batch "$ref_batch" \
  $(data_flags "$out/batch$ref_batch")
