#!/bin/bash
# The CUDA target's checks on a real GPU, in two halves (the GPU machine has
# no MLIR, so dtc compiles here):
#
#   scripts/gpu-check.sh prepare DIR   # here: build every case for sm_90,
#                                      # with the CPU target's trajectories
#   scripts/gpu-check.sh run DIR OUT   # on the GPU machine
#
# Cases: the MLP (AdamW), GPT (SGD, AdamW; gptt: with the tanh GELU) and
# CNN (SGD) examples in fp32 and bf16. On
# the GPU each trains 20 steps; its losses are compared with the CPU
# target's (fp32 within 1e-5 relative, bf16 within 2e-2); compute-sanitizer
# (memcheck, and racecheck/synccheck on the MLP) runs 2 steps of each fp32
# case; test/cuda/Inputs/bias_grad.cu checks the bias-gradient epilogues
# (cuBLASLt's BGRADA/BGRADB) against host loops; then
# test/bench/cuda_speed.py times dtc against PyTorch.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mode=$1
DIR=$(realpath -m "$2")

cases="mlp-adamw-fp32 gpt-sgd-fp32 gpt-adamw-fp32 gptt-adamw-fp32 cnn-sgd-fp32 mlp-adamw-bf16 gpt-adamw-bf16 gptt-adamw-bf16 cnn-sgd-bf16"

data_of() {
  case $1 in
    mlp) echo "x=$DIR/mlp/train/x.npy,y=$DIR/mlp/train/y.npy" ;;
    gpt*) echo "tokens=$DIR/$1/train/tokens.npy,targets=$DIR/$1/train/targets.npy" ;;
    cnn) echo "images=$DIR/cnn/train/images.npy,labels=$DIR/cnn/train/labels.npy" ;;
  esac
}

if [ "$mode" = prepare ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  DTC=$ROOT/build/bin/dtc
  rm -rf "$DIR" && mkdir -p "$DIR"
  for m in mlp gpt cnn; do
    /usr/bin/python3 "$ROOT/examples/$m/make_example.py" --out "$DIR/$m" \
      --training --train-data 64 > /dev/null
  done
  # gptt: the GPT with GPT-2's tanh GELU (cuBLASLt's GELU_AUX_BIAS epilogue).
  /usr/bin/python3 "$ROOT/examples/gpt/make_example.py" --out "$DIR/gptt" \
    --training --train-data 64 --gelu tanh > /dev/null
  for c in $cases; do
    IFS=- read -r m opt prec <<< "$c"
    case $opt in
      sgd) o="--optimizer sgd --lr $([ $m = cnn ] && echo 0.02 || echo 0.1) --momentum 0.9" ;;
      adamw) o="--optimizer adamw --lr 3e-3" ;;
    esac
    flags="--mesh 1x1x1 --global-batch 8 $o --precision $prec"
    $DTC compile "$DIR/$m/model.onnx" $flags -o "$DIR/$c/cpu" 2> /dev/null
    $DTC compile "$DIR/$m/model.onnx" $flags -o "$DIR/$c/cuda" \
      --target cuda --cuda-arch 90 2> /dev/null
    data=$(data_of $m)
    "$DIR/$c/cpu/train" --data "$data" --steps 20 \
      --log-jsonl "$DIR/$c/cpu.jsonl" 2> /dev/null
    # Only what `train` reads travels (the device tool carries 64 MiB).
    rm -rf "$DIR/$c/cpu" "$DIR/$c/cuda/model.onnx" "$DIR/$c/cuda/train.cu" \
      "$DIR/$c/cuda/step.mlir" "$DIR/$c/cuda/plan.json" \
      "$DIR/$c/cuda/build.log" "$DIR/$c/cuda/CMakeLists.txt"
  done
  rm -f "$DIR"/*/model.onnx
  /usr/local/cuda/bin/nvcc -std=c++17 -O3 --extended-lambda \
    --expt-relaxed-constexpr -fmad=false -Xcompiler -w \
    -gencode=arch=compute_90,code=sm_90 -I"$ROOT/runtime/include" \
    -x cu "$ROOT/test/cuda/Inputs/bias_grad.cu" -o "$DIR/bias-grad" \
    -lcublasLt > "$DIR/bias-grad.build.log" 2>&1 ||
    { cat "$DIR/bias-grad.build.log"; exit 1; }
  /usr/bin/python3 "$ROOT/test/bench/cuda_speed.py" prepare --out "$DIR/bench"
  du -sh "$DIR"
  exit 0
fi

OUT=$3
mkdir -p "$OUT"
# libnccl and libcudnn are PyTorch's (the nvidia-nccl and nvidia-cudnn
# wheels): too large to carry.
wheels=$(python3 -c 'import nvidia.nccl, nvidia.cudnn
print(":".join(list(m.__path__)[0] + "/lib" for m in (nvidia.nccl, nvidia.cudnn)))' \
  2> /dev/null || true)
export LD_LIBRARY_PATH=$DIR/bench/lib:${wheels:+$wheels:}${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
status=0
for c in $cases; do
  IFS=- read -r m opt prec <<< "$c"
  # Cases left behind (the device tool carries 64 MiB) are skipped.
  [ -d "$DIR/$c" ] || { echo "$c: not carried, skipped"; continue; }
  data=$(data_of $m)
  if ! "$DIR/$c/cuda/train" --data "$data" --steps 20 \
      --log-jsonl "$OUT/$c.jsonl" > "$OUT/$c.log" 2>&1; then
    echo "$c: train failed"; tail -5 "$OUT/$c.log"; status=1; continue
  fi
  # A bias-gradient epilogue that failed its check on this GPU (Device.h:
  # biasGradChecked) says so in the log.
  grep -h "bias-gradient epilogue" "$OUT/$c.log" | sed "s/^/$c: /" || true
  tol=$([ $prec = fp32 ] && echo 1e-5 || echo 2e-2)
  python3 - "$DIR/$c/cpu.jsonl" "$OUT/$c.jsonl" "$c" "$tol" <<'PY' || status=1
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
worst = max(abs(x["loss"] - y["loss"]) / abs(x["loss"]) for x, y in zip(a, b))
times = sorted(l["step_time_s"] for l in b[2:])
ok = len(a) == len(b) == 20 and worst <= float(sys.argv[4])
print("%s: 20-step losses vs the CPU target: worst relative %.2e (%s, "
      "tolerance %s); last loss %.6f vs %.6f; median step %.3f ms" % (
          sys.argv[3], worst, "ok" if ok else "MISMATCH", sys.argv[4],
          a[-1]["loss"], b[-1]["loss"], 1e3 * times[len(times) // 2]))
sys.exit(0 if ok else 1)
PY
  if [ $prec = fp32 ]; then
    tools="memcheck"
    [ $m = mlp ] && tools="memcheck racecheck synccheck"
    for tool in $tools; do
      if compute-sanitizer --tool $tool --error-exitcode 9 \
          "$DIR/$c/cuda/train" --data "$data" --steps 2 \
          > "$OUT/$c.$tool.log" 2>&1; then
        echo "$c: compute-sanitizer $tool: $(grep -h "SUMMARY" "$OUT/$c.$tool.log" | tail -1)"
      else
        echo "$c: compute-sanitizer $tool FAILED"; tail -20 "$OUT/$c.$tool.log"
        status=1
      fi
    done
  fi
done
if "$DIR/bias-grad" > "$OUT/bias-grad.log" 2>&1; then
  echo "bias-grad: $(tail -1 "$OUT/bias-grad.log")"
else
  echo "bias-grad FAILED"; cat "$OUT/bias-grad.log"; status=1
fi
# SKIP_BENCH=1: the correctness checks alone.
if [ -z "${SKIP_BENCH:-}" ]; then
  python3 "$ROOT/test/bench/cuda_speed.py" run --dir "$DIR/bench" \
    --profile "$OUT" || status=1
fi
# The device tool brings back a few files: the logs travel as one archive.
(cd "$OUT" && tar czf logs.tar.gz --remove-files *.jsonl *.log 2> /dev/null)
exit $status
