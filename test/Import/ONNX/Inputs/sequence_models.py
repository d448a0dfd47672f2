"""Writes small ONNX models of the sequence ops (SplitToSequence, SequenceAt,
SequenceInsert, SequenceErase, SequenceLength, SequenceConstruct,
ConcatFromSequence), their input x.npy and numpy's expected outputs, and the
models that must be refused. Usage: sequence_models.py OUTDIR."""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def save(out, name, nodes, x_shape, outputs, inits=None, expected=None):
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", F, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None)
         for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k)
                     for k, v in (inits or {}).items()])
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(os.path.join(out, name), exist_ok=True)
    onnx.save(model, os.path.join(out, name, "model.onnx"))
    for key, value in (expected or {}).items():
        np.save(os.path.join(out, name, key + ".npy"),
                np.array(value, order="C"))


def i64(*values):
    return np.array(values, dtype=np.int64)


def scalar(value):
    return np.array(value, dtype=np.int64)


def main(out):
    rng = np.random.default_rng(0)
    node = helper.make_node

    # Parts of 3 along axis 1 (the last one of 1), the last picked by a
    # negative position; the length as an int64 scalar.
    x = rng.standard_normal((2, 7)).astype(np.float32)
    save(out, "chunks", [
        node("SplitToSequence", ["x", "three"], ["seq"], axis=1),
        node("SequenceAt", ["seq", "minus_one"], ["last"]),
        node("SequenceAt", ["seq", "one"], ["middle"]),
        node("SequenceLength", ["seq"], ["count"]),
    ], [2, 7], ["last", "middle", "count"],
        {"three": scalar(3), "minus_one": scalar(-1), "one": scalar(1)},
        {"x": x, "last": x[:, 6:7], "middle": x[:, 3:6],
         "count": np.array(3, dtype=np.int64)})

    # Listed sizes; the second part moved to the front (erase + insert),
    # then joined again.
    x = rng.standard_normal((4, 3)).astype(np.float32)
    save(out, "reorder", [
        node("SplitToSequence", ["x", "sizes"], ["seq"], axis=0),
        node("SequenceAt", ["seq", "one"], ["tail"]),
        node("SequenceErase", ["seq", "one"], ["head_only"]),
        node("SequenceInsert", ["head_only", "tail", "zero"], ["swapped"]),
        node("ConcatFromSequence", ["swapped"], ["y"], axis=0),
    ], [4, 3], ["y"],
        {"sizes": i64(1, 3), "one": scalar(1), "zero": scalar(0)},
        {"x": x, "y": np.concatenate([x[1:], x[:1]], axis=0)})

    # No split: rows of one, the axis dropped (keepdims 0), stacked again
    # along a new axis 1 (a transpose); and a constructed sequence
    # concatenated.
    x = rng.standard_normal((3, 2)).astype(np.float32)
    save(out, "stack", [
        node("SplitToSequence", ["x"], ["rows"], axis=0, keepdims=0),
        node("ConcatFromSequence", ["rows"], ["t"], axis=1, new_axis=1),
        node("SequenceConstruct", ["x", "x"], ["pair"]),
        node("ConcatFromSequence", ["pair"], ["doubled"], axis=-1),
    ], [3, 2], ["t", "doubled"], None,
        {"x": x, "t": x.T, "doubled": np.concatenate([x, x], axis=-1)})

    # Refused: a sequence as a graph output, a position out of range, a
    # sequence read by a tensor op, a tensor read as a sequence.
    save(out, "output_sequence", [
        node("SplitToSequence", ["x"], ["seq"], name="split"),
    ], [2, 3], ["seq"])
    save(out, "position_range", [
        node("SplitToSequence", ["x"], ["seq"], name="split"),
        node("SequenceAt", ["seq", "five"], ["y"], name="at"),
    ], [2, 3], ["y"], {"five": scalar(5)})
    save(out, "tensor_op_reads_sequence", [
        node("SplitToSequence", ["x"], ["seq"], name="split"),
        node("Relu", ["seq"], ["y"], name="relu"),
    ], [2, 3], ["y"])
    save(out, "not_a_sequence", [
        node("SequenceAt", ["x", "zero"], ["y"], name="at"),
    ], [2, 3], ["y"], {"zero": scalar(0)})


if __name__ == "__main__":
    main(sys.argv[1])
