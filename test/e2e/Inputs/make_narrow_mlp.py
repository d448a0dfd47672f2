"""Writes an MLP that trains through 8-bit float and 4-bit integer casts
(quantize-dequantize pairs, as FP8 training recipes simulate them), and its
data.

    make_narrow_mlp.py OUTDIR

model.onnx (opset 21): x [8, 16] -> Cast(Cast(x, FLOAT8E4M3FN), FLOAT)
-> MatMul with w1 [16, 32] seen through Cast(Cast(w1, FLOAT8E5M2,
saturate=0), FLOAT) -> Relu -> + Cast(Cast(x4, INT4), FLOAT) (a 4-bit
feature of x scaled by 4, [8, 32] after a MatMul with a constant
p [16, 32]) ->
MatMul w2 [32, 4] -> logits. Data: x.npy [32, 16], y.npy [32] (classes).
"""
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

FLOAT8E4M3FN, FLOAT8E5M2, INT4 = 17, 19, 22


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    w1 = (rng.standard_normal((16, 32)) * 0.25).astype(np.float32)
    p = (rng.standard_normal((16, 32)) * 0.5).astype(np.float32)
    w2 = (rng.standard_normal((32, 4)) * 0.2).astype(np.float32)
    four = np.array(4.0, dtype=np.float32)
    nodes = [
        helper.make_node("Constant", [], ["p"],
                         value=numpy_helper.from_array(p, "p")),
        helper.make_node("Constant", [], ["four"],
                         value=numpy_helper.from_array(four, "four")),
        helper.make_node("Cast", ["x"], ["x8"], to=FLOAT8E4M3FN),
        helper.make_node("Cast", ["x8"], ["xq"], to=1),
        helper.make_node("Cast", ["w1"], ["w18"], to=FLOAT8E5M2, saturate=0),
        helper.make_node("Cast", ["w18"], ["w1q"], to=1),
        helper.make_node("MatMul", ["xq", "w1q"], ["h"]),
        helper.make_node("Relu", ["h"], ["a"]),
        helper.make_node("MatMul", ["x", "p"], ["f"]),
        helper.make_node("Mul", ["f", "four"], ["f4"]),
        helper.make_node("Cast", ["f4"], ["f44"], to=INT4),
        helper.make_node("Cast", ["f44"], ["fq"], to=1),
        helper.make_node("Add", ["a", "fq"], ["b"]),
        helper.make_node("MatMul", ["b", "w2"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes, "narrow_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [8, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [8, 4])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.save(model, os.path.join(out, "model.onnx"))
    # Inputs over E4M3FN's range and past it (saturated), ties included.
    x = (rng.standard_normal((32, 16)) * 3).astype(np.float32)
    x[0, :4] = [500.0, -1000.0, 0.5625, 0.0009765625]
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), rng.integers(0, 4, 32).astype(np.int64))


if __name__ == "__main__":
    main()
