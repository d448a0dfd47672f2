"""Writes OUTDIR/model.onnx: loss = ReduceMean(x * p) with a parameter named
"layer/p", whose gradient cannot be written as NAME.npy, and OUTDIR/x.npy."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(out):
    os.makedirs(out, exist_ok=True)
    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "layer/p"], ["y"]),
         helper.make_node("ReduceMean", ["y"], ["loss"], keepdims=0)],
        "slash_parameter",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.ones(4, np.float32), "layer/p")])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    np.save(os.path.join(out, "x.npy"), np.ones((2, 4), np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
