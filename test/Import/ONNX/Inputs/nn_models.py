"""Writes small ONNX models that the NN-family handlers must reject.

Usage: nn_models.py OUTDIR. Each model holds one node, named after the model
file, so the diagnostics checked by nn-errors.test name it. The dropout_*
models are valid: nn-dropout.test checks how they import.
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


def dropout_chain(out, name, training, seed=None):
    """Saves OUT/NAME.onnx: two Dropout nodes in a row, the second's mask an
    output, both with ratio 0.25 and the given training mode."""
    attrs = {} if seed is None else {"seed": seed}
    nodes = [helper.make_node("Dropout", ["x", "r", "t"], ["h"], name="first",
                              **attrs),
             helper.make_node("Dropout", ["h", "r", "t"], ["y", "mask"],
                              name="second")]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, None),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, None)],
        initializer=[numpy_helper.from_array(np.float32(0.25), "r"),
                     numpy_helper.from_array(np.array(training), "t")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


def floats(*values):
    return np.array(values, dtype=np.float32)


def main(out):
    os.makedirs(out, exist_ok=True)
    x23 = [("x", F, [2, 3])]
    x234 = [("x", F, [2, 3, 4])]
    x2345 = [("x", F, [2, 3, 4, 5])]
    i23 = [("x", I32, [2, 3])]

    # Contractions
    model(out, "matmul_rank0", "MatMul", [("a", F, []), ("b", F, [2, 3])])
    model(out, "gemm_int", "Gemm", [("a", I32, [2, 3]), ("b", I32, [3, 2])])
    model(out, "gemm_rank", "Gemm", [("a", F, [2, 3, 4]), ("b", F, [4, 2])])
    model(out, "einsum_two_ellipses", "Einsum", x23,
          attrs={"equation": "...i..."})
    model(out, "einsum_bad_char", "Einsum", x23, attrs={"equation": "i1"})
    model(out, "einsum_term_count", "Einsum", x23,
          attrs={"equation": "ij,jk->ik"})
    model(out, "einsum_rank", "Einsum", x23, attrs={"equation": "ijk"})
    model(out, "einsum_too_many", "Einsum", [("x", F, [1] * 27)],
          attrs={"equation": "abcdefghijklmnopqrstuvwxyzA"})
    model(out, "einsum_output_unknown", "Einsum", x23,
          attrs={"equation": "ij->k"})
    model(out, "einsum_output_twice", "Einsum", x23,
          attrs={"equation": "ij->ii"})
    model(out, "einsum_no_equation", "Einsum", x23)
    model(out, "einsum_no_inputs", "Einsum", [], attrs={"equation": "->"})

    # Softmax family and Dropout
    model(out, "softmax_axis", "Softmax", x23, attrs={"axis": 2})
    model(out, "hardmax_axis", "Hardmax", x23, attrs={"axis": -3})
    model(out, "dropout_ratio_shape", "Dropout", x23,
          {"r": floats(0.1, 0.2)})
    model(out, "dropout_ratio_range", "Dropout", x23,
          {"r": np.float32(1.0), "t": np.array(True)})
    model(out, "dropout_mode_shape", "Dropout", x23,
          {"r": np.float32(0.5), "t": np.array([True, False])})
    model(out, "dropout_ratio_input", "Dropout", x23 + [("r", F, [])])
    model(out, "dropout_int", "Dropout", i23,
          {"r": np.float32(0.5), "t": np.array(True)})

    dropout_chain(out, "dropout_training", True, seed=7)
    dropout_chain(out, "dropout_inference", False)

    # Normalization
    bn_params = {k: floats(1, 1, 1) for k in ("s", "b", "m", "v")}
    model(out, "bn_mode", "BatchNormalization", x234, bn_params,
          attrs={"training_mode": 2}, opset=15)
    model(out, "bn_stats_inference", "BatchNormalization", x234, bn_params,
          outputs=("y", "rm", "rv"), opset=15)
    model(out, "instnorm_scale", "InstanceNormalization", x234,
          {"s": floats(1, 1, 1, 1), "b": floats(0, 0, 0)})
    model(out, "instnorm_rank", "InstanceNormalization", x23,
          {"s": floats(1, 1, 1), "b": floats(0, 0, 0)})
    model(out, "lpnorm_int", "LpNormalization", i23)
    model(out, "lpnorm_p", "LpNormalization", x23, attrs={"p": 3})
    model(out, "mvn_int", "MeanVarianceNormalization", [("x", I32, [2, 3, 4, 5])])
    model(out, "mvn_axes_twice", "MeanVarianceNormalization", x2345,
          attrs={"axes": [1, -3]})
    model(out, "lrn_rank", "LRN", x23, attrs={"size": 3})
    model(out, "lrn_int", "LRN", [("x", I32, [2, 3, 4])], attrs={"size": 3})
    model(out, "lrn_no_size", "LRN", x234)
    model(out, "lrn_size", "LRN", x234, attrs={"size": 0})
    model(out, "layernorm_rank0", "LayerNormalization", [("x", F, [])],
          {"s": np.float32(1.0)}, opset=17)
    model(out, "layernorm_stash", "LayerNormalization", x23,
          {"s": floats(1, 1, 1)}, attrs={"stash_type": TensorProto.FLOAT16},
          opset=17)

    # Convolution
    x1155 = [("x", F, [1, 1, 5, 5])]
    w33 = {"w": np.ones((1, 1, 3, 3), np.float32)}
    model(out, "conv_strides_count", "Conv", x1155, w33, attrs={"strides": [1]})
    model(out, "conv_strides_value", "Conv", x1155, w33,
          attrs={"strides": [0, 1]})
    model(out, "conv_kernel_mismatch", "Conv", x1155, w33,
          attrs={"kernel_shape": [2, 2]})
    model(out, "conv_auto_pad", "Conv", x1155, w33, attrs={"auto_pad": "FOO"})
    model(out, "conv_pads_and_auto_pad", "Conv", x1155, w33,
          attrs={"auto_pad": "SAME_UPPER", "pads": [1, 1, 1, 1]})
    model(out, "conv_rank", "Conv", x23, {"w": np.ones((2, 3), np.float32)})
    model(out, "conv_weight_rank", "Conv", x1155,
          {"w": np.ones((1, 1, 3), np.float32)})
    model(out, "conv_group", "Conv", x1155, w33, attrs={"group": 0})
    model(out, "convt_group", "ConvTranspose", x1155, w33, attrs={"group": 0})
    model(out, "convt_weight", "ConvTranspose", [("x", F, [1, 2, 5, 5])],
          {"w": np.ones((3, 1, 3, 3), np.float32)})
    model(out, "convt_auto_pad", "ConvTranspose", x1155, w33,
          attrs={"auto_pad": "FOO"})
    model(out, "convt_output_shape", "ConvTranspose", x1155, w33,
          attrs={"output_shape": [10]})
    model(out, "convt_output_shape_range", "ConvTranspose", x1155, w33,
          attrs={"output_shape": [10, 0]})
    model(out, "convt_empty", "ConvTranspose", [("x", F, [1, 1, 2, 2])],
          {"w": np.ones((1, 1, 1, 1), np.float32)},
          attrs={"pads": [1, 1, 1, 1]})

    # Pooling
    model(out, "maxpool_no_kernel", "MaxPool", x1155)
    model(out, "maxpool_rank", "MaxPool", x23, attrs={"kernel_shape": [2]})
    model(out, "maxpool_ceil", "MaxPool", x1155,
          attrs={"kernel_shape": [2, 2], "ceil_mode": 2})
    model(out, "maxpool_indices", "MaxPool", x1155, outputs=("y", "i"),
          attrs={"kernel_shape": [2, 2]})
    model(out, "maxpool_storage", "MaxPool", x1155,
          attrs={"kernel_shape": [2, 2], "storage_order": 2})
    model(out, "maxpool_int32", "MaxPool", [("x", I32, [1, 1, 5, 5])],
          attrs={"kernel_shape": [2, 2]})
    model(out, "avgpool_count", "AveragePool", x1155,
          attrs={"kernel_shape": [2, 2], "count_include_pad": 2})
    model(out, "lppool_int", "LpPool", [("x", I32, [1, 1, 5, 5])],
          attrs={"kernel_shape": [2, 2]})
    model(out, "lppool_p", "LpPool", x1155,
          attrs={"kernel_shape": [2, 2], "p": 0})
    model(out, "globalpool_rank", "GlobalAveragePool", [("x", F, [3])])
    model(out, "globallppool_int", "GlobalLpPool", [("x", I32, [1, 1, 5, 5])])


if __name__ == "__main__":
    main(sys.argv[1])
