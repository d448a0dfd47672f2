"""Writes a model whose loss is mean(Pow(x W, 2)) (the square as RMSNorm
and Llama's ONNX write it, exponent a Constant node) and 16 samples of x.

Usage: make_pow_model.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(
        rng.standard_normal((4, 3)).astype(np.float32), "w")
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["h"], name="matmul"),
        helper.make_node("Constant", [], ["e"], name="exponent", value=two),
        helper.make_node("Pow", ["h", "e"], ["sq"], name="square"),
        helper.make_node("ReduceMean", ["sq"], ["loss"], name="mean",
                         keepdims=0),
    ]
    graph = helper.make_graph(
        nodes, "pow", [helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, ["B", 4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        initializer=[w])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "x.npy"),
            rng.standard_normal((16, 4)).astype(np.float32))


if __name__ == "__main__":
    main(sys.argv[1])
