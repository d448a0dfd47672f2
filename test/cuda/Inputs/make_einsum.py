"""Writes OUT: a one-layer classifier whose product is an ONNX Einsum
(x [4, 8] times W [8, 3] -> logits [4, 3]; node name 'proj'; the
labels y [4] for --loss cross_entropy), which the
CUDA target has no kernel for."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

w = numpy_helper.from_array(
    np.random.RandomState(0).randn(8, 3).astype(np.float32), "W")
graph = helper.make_graph(
    [helper.make_node("Einsum", ["x", "W"], ["logits"], name="proj",
                      equation="ij,jk->ik")],
    "einsum", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8]),
               helper.make_tensor_value_info("y", TensorProto.INT64, [4])],
    [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [4, 3])],
    [w])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          sys.argv[1])
