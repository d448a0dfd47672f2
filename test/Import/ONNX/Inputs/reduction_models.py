"""Writes small ONNX models that the reduction-family handlers must reject.

Usage: reduction_models.py OUTDIR. Each model holds one node, named after the
model file, so the diagnostics checked by reduction-errors.test name it.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I32 = TensorProto.INT32
I64 = TensorProto.INT64


def model(out, name, op, inputs, inits=None, outputs=("y",), attrs=None,
          opset=13, node_inputs=None):
    """Saves OUT/NAME.onnx: one `op` node named NAME.

    inputs: [(name, elem_type, shape)] graph inputs; inits: {name: array}
    initializers; node_inputs: the node's input names (default: graph inputs
    then initializers, in order).
    """
    inits = inits or {}
    if node_inputs is None:
        node_inputs = [i[0] for i in inputs] + list(inits)
    node = helper.make_node(op, node_inputs, list(outputs), name=name,
                            **(attrs or {}))
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(o, F, None) for o in outputs if o],
        initializer=[numpy_helper.from_array(np.asarray(v), k)
                     for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


def ints(*values):
    return np.array(values, dtype=np.int64)


def main(out):
    os.makedirs(out, exist_ok=True)
    x23 = [("x", F, [2, 3])]
    scores = [("x", F, [2, 3])]
    labels = [("t", I64, [2])]

    # Reductions
    model(out, "reduce_keepdims", "ReduceMean", x23, attrs={"keepdims": 2})
    model(out, "reduce_axis_range", "ReduceMean", x23, attrs={"axes": [2]})
    model(out, "reduce_axis_twice", "ReduceMax", x23, attrs={"axes": [1, -1]})
    model(out, "reducesum_axis_range", "ReduceSum", x23, {"a": ints(3)})
    model(out, "reducesum_axis_twice", "ReduceSum", x23, {"a": ints(0, -2)})
    model(out, "reducesum_axes_input", "ReduceSum", x23 + [("a", I64, [1])])
    model(out, "reducesum_axes_float", "ReduceSum", x23,
          {"a": np.array([1.0], np.float32)})
    model(out, "reducesum_noop", "ReduceSum", x23,
          attrs={"noop_with_empty_axes": 2})

    # Arg-reductions and CumSum
    model(out, "argmax_axis", "ArgMax", x23, attrs={"axis": 2})
    model(out, "argmin_last", "ArgMin", x23, attrs={"select_last_index": 3})
    model(out, "cumsum_axis_shape", "CumSum", x23, {"a": ints(0, 1)})
    model(out, "cumsum_axis_range", "CumSum", x23, {"a": ints(2)})
    model(out, "cumsum_axis_input", "CumSum", x23 + [("a", I64, [])])
    model(out, "cumsum_exclusive", "CumSum", x23, {"a": ints(0)},
          attrs={"exclusive": 2})

    # Losses
    model(out, "nll_reduction", "NegativeLogLikelihoodLoss", scores + labels,
          attrs={"reduction": "avg"})
    model(out, "nll_rank", "NegativeLogLikelihoodLoss",
          [("x", F, [3]), ("t", I64, [])])
    model(out, "sce_int", "SoftmaxCrossEntropyLoss",
          [("x", I32, [2, 3])] + labels)
    model(out, "sce_reduction", "SoftmaxCrossEntropyLoss", scores + labels,
          attrs={"reduction": "avg"})


if __name__ == "__main__":
    main(sys.argv[1])
