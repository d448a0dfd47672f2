"""Writes small ONNX models that the shape-family handlers must reject.

Usage: shape_models.py OUTDIR. Each model holds one node, named after the
model file, so the diagnostics checked by shape-errors.test name it. The
models for batch rebinding (rebind_*) are valid: a static export with batch 4
whose Reshape targets dtc re-derives, or refuses, under --batch 2.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(out, name, op, inputs, inits=None, outputs=("y",), attrs=None,
          opset=13, node_inputs=None, graph_outputs=None):
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
    graph_outputs = graph_outputs or [o for o in outputs if o]
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(o, F, None) for o in graph_outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k)
                     for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(m, os.path.join(out, name + ".onnx"))


def ints(*values):
    return np.array(values, dtype=np.int64)


def main(out):
    os.makedirs(out, exist_ok=True)
    x23 = [("x", F, [2, 3])]
    x2345 = [("x", F, [2, 3, 4, 5])]

    # Reshape
    model(out, "reshape_negative", "Reshape", x23, {"s": ints(-2, 3)})
    model(out, "reshape_copy_rank", "Reshape", x23, {"s": ints(1, 6, 0)})
    model(out, "reshape_two_infer", "Reshape", x23, {"s": ints(-1, -1)})
    model(out, "reshape_allowzero", "Reshape", x23, {"s": ints(0, -1)},
          attrs={"allowzero": 1}, opset=14)
    model(out, "reshape_mismatch", "Reshape", x23, {"s": ints(4, 2)})
    model(out, "reshape_infer_mismatch", "Reshape", x23, {"s": ints(4, -1)})
    model(out, "reshape_not_constant", "Reshape",
          x23 + [("s", I64, [2])], node_inputs=["x", "s"])
    # Static export at batch 4 (rebound to 2 by --batch 2).
    x435 = [("x", F, [4, 3, 5])]
    model(out, "rebind_merged", "Reshape", x435, {"s": ints(12, 5)})
    model(out, "rebind_leading", "Reshape", x435, {"s": ints(4, -1)})
    model(out, "rebind_flat", "Reshape", x435, {"s": ints(60)})
    model(out, "rebind_infer", "Reshape", x435, {"s": ints(-1, 5)})
    model(out, "rebind_heads", "Reshape", [("x", F, [4, 16, 32])],
          {"s": ints(4, 16, 8, 4)})
    model(out, "rebind_ambiguous", "Reshape", [("x", F, [4, 6, 10])],
          {"s": ints(3, 4, 4, 5)})
    model(out, "rebind_no_batch", "Reshape", x435, {"s": ints(6, 10)})

    # Flatten, Squeeze, Unsqueeze
    model(out, "flatten_axis", "Flatten", x23, attrs={"axis": 3})
    model(out, "squeeze_size", "Squeeze", x23, {"axes": ints(1)})
    model(out, "squeeze_range", "Squeeze", x23, {"axes": ints(2)})
    model(out, "unsqueeze_repeat", "Unsqueeze", x23, {"axes": ints(0, -4)})

    # Transpose, DepthToSpace, SpaceToDepth
    model(out, "transpose_count", "Transpose", x23, attrs={"perm": [0]})
    model(out, "transpose_perm", "Transpose", x23, attrs={"perm": [1, 1]})
    model(out, "d2s_rank", "DepthToSpace", x23, attrs={"blocksize": 2})
    model(out, "d2s_blocksize", "DepthToSpace", x2345)
    model(out, "d2s_blocksize_zero", "DepthToSpace", x2345,
          attrs={"blocksize": 0})
    model(out, "d2s_channels", "DepthToSpace", x2345, attrs={"blocksize": 2})
    model(out, "d2s_mode", "DepthToSpace", [("x", F, [1, 4, 2, 2])],
          attrs={"blocksize": 2, "mode": "XYZ"})
    model(out, "s2d_size", "SpaceToDepth", x2345, attrs={"blocksize": 2})

    # Concat, Split, Slice
    model(out, "concat_none", "Concat", [], attrs={"axis": 0},
          graph_outputs=["y"])
    model(out, "concat_no_axis", "Concat", x23)
    model(out, "concat_axis", "Concat", x23, attrs={"axis": 2})
    model(out, "concat_type", "Concat", x23 + [("z", I64, [2, 3])],
          attrs={"axis": 0})
    model(out, "concat_shape", "Concat", x23 + [("z", F, [2, 4])],
          attrs={"axis": 0})
    model(out, "split_no_outputs", "Split", x23, outputs=(),
          graph_outputs=["x"])
    model(out, "split_count", "Split", x23, {"split": ints(1, 1, 1)},
          outputs=("y", "z"))
    model(out, "split_negative", "Split", x23, {"split": ints(3, -1)},
          outputs=("y", "z"), attrs={"axis": 1})
    model(out, "split_sum", "Split", x23, {"split": ints(1, 1)},
          outputs=("y", "z"), attrs={"axis": 1})
    model(out, "split_equal", "Split", x23, outputs=("y", "z"),
          attrs={"axis": 1})
    model(out, "slice_ends", "Slice", x23, {"b": ints(0), "e": ints(1, 2)})
    model(out, "slice_axes", "Slice", x23,
          {"b": ints(0), "e": ints(1), "a": ints(0, 1)})
    model(out, "slice_rank", "Slice", x23,
          {"b": ints(0, 0, 0), "e": ints(1, 1, 1)})
    model(out, "slice_steps", "Slice", x23,
          {"b": ints(0), "e": ints(1), "a": ints(0), "s": ints(1, 1)})
    model(out, "slice_step_zero", "Slice", x23,
          {"b": ints(0), "e": ints(1), "a": ints(1), "s": ints(0)})
    model(out, "slice_axes_repeat", "Slice", x23,
          {"b": ints(0, 0), "e": ints(1, 1), "a": ints(1, -1)})

    # Expand, Tile, Pad, Trilu
    model(out, "expand_negative", "Expand", x23, {"s": ints(-1, 3)})
    model(out, "expand_broadcast", "Expand", x23, {"s": ints(2, 4)})
    model(out, "expand_large", "Expand", x23, {"s": ints(1 << 20, 1 << 20, 1, 1)})
    model(out, "tile_count", "Tile", x23, {"r": ints(2)})
    model(out, "tile_negative", "Tile", x23, {"r": ints(2, -1)})
    model(out, "tile_large", "Tile", x23, {"r": ints(1 << 40, 1 << 40)})
    model(out, "pad_mode", "Pad", x23, {"p": ints(0, 0, 0, 0)},
          attrs={"mode": "wrap"})
    model(out, "pad_count", "Pad", x23, {"p": ints(0, 1)})
    model(out, "pad_size", "Pad", x23, {"p": ints(0, -2, 0, -2)})
    model(out, "pad_empty", "Pad", [("x", F, [2, 0])],
          {"p": ints(0, 1, 0, 1)}, attrs={"mode": "edge"})
    model(out, "pad_reflect", "Pad", x23, {"p": ints(0, 3, 0, 0)},
          attrs={"mode": "reflect"})
    model(out, "pad_large", "Pad", x23, {"p": ints(1 << 29, 0, 1 << 29, 0)})
    model(out, "pad_value", "Pad", x23,
          {"p": ints(0, 1, 0, 1), "v": np.array([1, 2], dtype=np.float32)})
    model(out, "trilu_rank", "Trilu", [("x", F, [3])], opset=14)
    model(out, "trilu_k", "Trilu", x23, {"k": ints(1, 2)}, opset=14)

    # Gather, GatherElements, ScatterElements
    model(out, "gather_type", "Gather", x23,
          {"i": np.array([0.0], dtype=np.float32)})
    model(out, "gather_range", "Gather", x23, {"i": ints(0, 2)})
    model(out, "gather_axis", "Gather", x23, {"i": ints(0)},
          attrs={"axis": 2})
    model(out, "gather_elements_rank", "GatherElements", x23,
          {"i": ints(0, 1)})
    model(out, "gather_elements_size", "GatherElements", x23,
          {"i": np.zeros((2, 4), dtype=np.int64)})
    upd = {"i": np.zeros((2, 3), dtype=np.int64),
           "u": np.zeros((2, 3), dtype=np.float32)}
    model(out, "scatter_mul", "ScatterElements", x23, upd,
          attrs={"reduction": "mul"}, opset=13)
    model(out, "scatter_reduction", "ScatterElements", x23, upd,
          attrs={"reduction": "sub"}, opset=16)
    model(out, "scatter_update_type", "ScatterElements", x23,
          {"i": upd["i"], "u": np.zeros((2, 3), dtype=np.int64)})
    model(out, "scatter_update_shape", "ScatterElements", x23,
          {"i": upd["i"], "u": np.zeros((2, 2), dtype=np.float32)})

    # GatherND, ScatterND
    model(out, "gathernd_type", "GatherND", x23,
          {"i": np.zeros((1, 2), dtype=np.float32)})
    model(out, "gathernd_rank", "GatherND", x23,
          {"i": np.array(0, dtype=np.int64)})
    model(out, "gathernd_batch_dims", "GatherND", x23,
          {"i": np.zeros((2, 1), dtype=np.int64)}, attrs={"batch_dims": 2})
    model(out, "gathernd_batch_shape", "GatherND", x23,
          {"i": np.zeros((3, 1), dtype=np.int64)}, attrs={"batch_dims": 1})
    model(out, "gathernd_tuple", "GatherND", x23,
          {"i": np.zeros((1, 3), dtype=np.int64)})
    model(out, "gathernd_range", "GatherND", x23,
          {"i": ints(1, -4).reshape(1, 2)})
    model(out, "scatternd_range", "ScatterND", x23,
          {"i": ints(2).reshape(1, 1), "u": np.zeros((1, 3), np.float32)})
    model(out, "scatternd_tuple", "ScatterND", x23,
          {"i": np.zeros((1, 3), dtype=np.int64),
           "u": np.zeros((1,), dtype=np.float32)})
    model(out, "scatternd_updates", "ScatterND", x23,
          {"i": np.zeros((1, 1), dtype=np.int64),
           "u": np.zeros((1, 2), dtype=np.float32)})

    # OneHot, Compress, ReverseSequence
    on_off = np.array([0, 1], dtype=np.float32)
    idx = [("x", I64, [2, 3])]
    model(out, "onehot_depth_count", "OneHot", idx,
          {"d": ints(2, 3), "v": on_off})
    model(out, "onehot_depth", "OneHot", idx, {"d": ints(0), "v": on_off})
    model(out, "onehot_values", "OneHot", idx,
          {"d": ints(3), "v": np.zeros(3, dtype=np.float32)})
    model(out, "onehot_axis", "OneHot", idx, {"d": ints(3), "v": on_off},
          attrs={"axis": 3})
    model(out, "onehot_large", "OneHot", idx,
          {"d": ints(1 << 30), "v": on_off})
    model(out, "compress_rank", "Compress", x23,
          {"c": np.ones((2, 2), dtype=bool)})
    model(out, "compress_beyond", "Compress", x23,
          {"c": np.array([0, 0, 1], dtype=bool)}, attrs={"axis": 0})
    model(out, "compress_dynamic", "Compress",
          x23 + [("c", TensorProto.BOOL, [2])])
    model(out, "reverse_rank", "ReverseSequence", [("x", F, [3])],
          {"l": ints(1)})
    model(out, "reverse_axes", "ReverseSequence", x23, {"l": ints(1, 1)},
          attrs={"batch_axis": 1, "time_axis": 1})
    model(out, "reverse_lens", "ReverseSequence", x23, {"l": ints(1, 1)})

    # Shape-known generators
    model(out, "cos_negative", "ConstantOfShape", [], {"s": ints(2, -1)})
    model(out, "cos_large", "ConstantOfShape", [], {"s": ints(1 << 40, 4)})
    model(out, "cos_value", "ConstantOfShape", [], {"s": ints(2)},
          attrs={"value": numpy_helper.from_array(
              np.zeros(2, dtype=np.float32))})
    model(out, "range_count", "Range", [],
          {"a": ints(0, 1), "b": ints(5), "c": ints(1)})
    model(out, "range_types", "Range", [],
          {"a": ints(0), "b": np.array(5, dtype=np.int32), "c": ints(1)})
    model(out, "range_zero_float", "Range", [],
          {"a": np.array(0, dtype=np.float32),
           "b": np.array(5, dtype=np.float32),
           "c": np.array(0, dtype=np.float32)})
    model(out, "range_zero", "Range", [],
          {"a": ints(0), "b": ints(5), "c": ints(0)})
    model(out, "range_large", "Range", [],
          {"a": ints(0), "b": ints(1 << 40), "c": ints(1)})
    model(out, "range_large_float", "Range", [],
          {"a": np.array(0, dtype=np.float32),
           "b": np.array(1e12, dtype=np.float32),
           "c": np.array(1, dtype=np.float32)})
    model(out, "eyelike_rank", "EyeLike", [("x", F, [3])])
    model(out, "eyelike_dtype", "EyeLike", x23,
          attrs={"dtype": TensorProto.STRING})
    model(out, "nonzero_dynamic", "NonZero", x23)
    model(out, "unique", "Unique", [("x", F, [4])])

    # Resize
    x1124 = [("x", F, [1, 1, 2, 4])]
    scales = np.array([1, 1, 2, 2], dtype=np.float32)
    model(out, "resize_both", "Resize", x1124,
          {"roi": np.zeros(0, np.float32), "scales": scales,
           "sizes": ints(1, 1, 4, 8)})
    model(out, "resize_neither", "Resize", x1124,
          node_inputs=["x", "", ""])
    model(out, "resize_antialias", "Resize", x1124,
          {"roi": np.zeros(0, np.float32), "scales": scales},
          attrs={"antialias": 1}, opset=18)
    model(out, "resize_mode", "Resize", x1124,
          {"roi": np.zeros(0, np.float32), "scales": scales},
          attrs={"mode": "area"})
    model(out, "resize_scale", "Resize", x1124,
          {"roi": np.zeros(0, np.float32),
           "scales": np.array([1, 1, 0, 2], dtype=np.float32)})


if __name__ == "__main__":
    main(sys.argv[1])
