#!/usr/bin/env bash
# Rewrites test/e2e/Inputs/dynamo/: the MLP, GPT and CNN examples exported
# by PyTorch 2's default exporter (make_example.py --dynamo, which makes its
# virtual environment with PyTorch 2 and onnxscript from PyPI on first use;
# DTC_TORCH2_VENV names another), and the GPT once more with the exporter's
# optimizer (--dynamo-optimize). The suite reads the checked-in files.
set -euo pipefail
cd "$(dirname "$0")/.."
out=test/e2e/Inputs/dynamo
rm -rf "$out"
for example in mlp gpt cnn; do
  "${PYTHON:-/usr/bin/python3}" "examples/$example/make_example.py" --out "$out/$example" --dynamo
done
"${PYTHON:-/usr/bin/python3}" examples/gpt/make_example.py --out "$out/gpt-optimized" --dynamo \
  --dynamo-optimize
"${PYTHON:-/usr/bin/python3}" - "$out" <<'PY'
import onnx, os, sys
for name in sorted(os.listdir(sys.argv[1])):
    m = onnx.load(os.path.join(sys.argv[1], name, "model.onnx"),
                  load_external_data=False)
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    print("%s: %s %s, IR version %d, opset %s" % (
        name, m.producer_name, m.producer_version, m.ir_version, opset))
PY
