#!/usr/bin/env python3
"""Writes a corpus of malformed and unsupported ONNX models into a folder.

    make_malformed.py OUTDIR

Each file is one thing a user (or an attacker) can hand `dtc import`: a file
that is not a model, a truncated model, a model that breaks ONNX's rules
(cycles, undefined or twice-defined values, tensors whose data does not match
their dims, external data that leaves the model's folder), or a valid model
that uses something dtc does not support (an opset, an op, a domain, a data
type, a sequence, a subgraph). test/Import/ONNX/malformed.test checks the
message dtc prints for each; scripts/fuzz.sh seeds the fuzzer with them.

Needs the system Python (/usr/bin/python3) for Debian's python3-onnx.
"""

import os
import random
import sys

from onnx import TensorProto, helper

FLOAT = TensorProto.FLOAT
INT64 = TensorProto.INT64


def model(nodes, inputs, outputs, initializers=(), opset=13, **kwargs):
    """A ModelProto of one graph; no checking, so broken graphs stay broken."""
    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs),
                              initializer=list(initializers))
    opsets = kwargs.pop("opsets", None)
    if opsets is None:
        opsets = [helper.make_opsetid("", opset)]
    return helper.make_model(graph, opset_imports=opsets,
                             producer_name="make_malformed", **kwargs)


def tensor_in(name, shape, elem=FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def relu_model(**kwargs):
    """x[2,3] -> Relu -> y: a valid base to break."""
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [tensor_in("x", [2, 3])], [tensor_in("y", None)], **kwargs)


def add_weight_model(weight):
    """y = x + w with initializer `weight` (named 'w', dims [2])."""
    return model([helper.make_node("Add", ["x", "w"], ["y"], name="add")],
                 [tensor_in("x", [2])], [tensor_in("y", None)], [weight])


def raw_tensor(name, elem, dims, raw):
    """A TensorProto with `raw` as raw_data, unchecked against dims."""
    t = TensorProto()
    t.name = name
    t.data_type = elem
    t.dims.extend(dims)
    t.raw_data = raw
    return t


def external_weight(entries):
    """A float initializer 'w' of dims [2] whose data is external."""
    w = TensorProto()
    w.name = "w"
    w.data_type = FLOAT
    w.dims.extend([2])
    w.data_location = TensorProto.EXTERNAL
    for key, value in entries:
        entry = w.external_data.add()
        entry.key = key
        entry.value = value
    return w


def cases(out):
    """Yields (file name, bytes or ModelProto)."""
    yield "empty.onnx", b""
    yield "random.onnx", bytes(random.Random(0).getrandbits(8)
                               for _ in range(512))
    yield "text.onnx", b"ir_version: 8\ngraph {\n  node { op_type: 'Relu' }\n}\n"

    valid = relu_model().SerializeToString()
    for where, cut in (("header", 3), ("half", len(valid) // 2),
                       ("last-byte", len(valid) - 1)):
        yield "truncated-%s.onnx" % where, valid[:cut]
    # As PyTorch 2's exporter writes them: opset 20, IR version 10.
    yield "truncated-opset20.onnx", relu_model(
        opset=20, ir_version=10).SerializeToString()[:-1]

    # Headers and opsets.
    no_graph = helper.make_model(helper.make_graph([], "g", [], []))
    no_graph.ClearField("graph")
    yield "no-graph.onnx", no_graph
    yield "opset99.onnx", relu_model(opset=99)
    yield "opset22.onnx", relu_model(opset=22, ir_version=10)
    yield "opset21.onnx", relu_model(opset=21, ir_version=10)
    yield "no-default-opset.onnx", relu_model(
        opsets=[helper.make_opsetid("com.example", 1)])
    yield "no-opset-import.onnx", relu_model(opsets=[])
    gru = model([helper.make_node("GRU", ["x", "w", "r"], ["y"], name="gru",
                                  hidden_size=2)],
                [tensor_in("x", [1, 2, 3]), tensor_in("w", [1, 6, 3]),
                 tensor_in("r", [1, 6, 2])],
                [tensor_in("y", None)], opset=5)
    yield "opset5-gru.onnx", gru

    yield "opset0.onnx", relu_model(opset=0)
    yield "opset-negative.onnx", relu_model(opset=-5)

    # What ONNX's version converter needs of an old model (it crashes
    # otherwise): below IR version 4, initializers among the graph inputs;
    # nodes that match their schemas; ops of the default domain.
    old_ir = model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                   [tensor_in("x", [2])],
                   [tensor_in("y", None), tensor_in("w", None)],
                   [helper.make_tensor("w", FLOAT, [2], [1.0, 2.0])], opset=6)
    old_ir.ir_version = 3
    yield "ir3-initializer-not-input.onnx", old_ir
    yield "opset6-bad-arity.onnx", model(
        [helper.make_node("Add", ["x"], ["y"], name="add")],
        [tensor_in("x", [2])], [tensor_in("y", None)], opset=6)
    yield "opset6-unknown-op.onnx", model(
        [helper.make_node("ATen", ["x"], ["y"], name="aten")],
        [tensor_in("x", [2])], [tensor_in("y", None)], opset=6)
    yield "opset6-other-domain.onnx", model(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="frob",
                          domain="com.example")],
        [tensor_in("x", [2])], [tensor_in("y", None)],
        opsets=[helper.make_opsetid("", 6),
                helper.make_opsetid("com.example", 1)])
    # Gemm's B declared rank 0: opset 6's shape inference in libonnx reads
    # B's second dimension without looking at its rank (a fuzzer's find).
    yield "opset6-gemm-scalar-b.onnx", model(
        [helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="gemm")],
        [tensor_in("a", [2, 3]), tensor_in("b", []), tensor_in("c", [1])],
        [tensor_in("y", None)],
        opset=6)
    yield "opset6-ok.onnx", model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        [tensor_in("x", [2]), tensor_in("w", [2])], [tensor_in("y", None)],
        [helper.make_tensor("w", FLOAT, [2], [1.0, 2.0])], opset=6)

    # Ops.
    yield "unknown-domain.onnx", model(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="frob",
                          domain="com.example")],
        [tensor_in("x", [2])], [tensor_in("y", None)],
        opsets=[helper.make_opsetid("", 13),
                helper.make_opsetid("com.example", 1)])
    yield "unknown-domain-opset20.onnx", model(
        [helper.make_node("Gelu", ["x"], ["y"], name="gelu",
                          domain="com.microsoft")],
        [tensor_in("x", [2])], [tensor_in("y", None)], ir_version=10,
        opsets=[helper.make_opsetid("", 20),
                helper.make_opsetid("com.microsoft", 1)])
    yield "unknown-op.onnx", model(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="frob")],
        [tensor_in("x", [2])], [tensor_in("y", None)])
    then_graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["t"])], "then", [],
        [tensor_in("t", [2])])
    else_graph = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"])], "else", [],
        [tensor_in("e", [2])])
    yield "if-subgraph.onnx", model(
        [helper.make_node("If", ["c"], ["y"], name="branch",
                          then_branch=then_graph, else_branch=else_graph)],
        [tensor_in("c", [], TensorProto.BOOL), tensor_in("x", [2])],
        [tensor_in("y", None)])

    # Graph structure.
    yield "cycle.onnx", model(
        [helper.make_node("Relu", ["b"], ["a"], name="first"),
         helper.make_node("Neg", ["a"], ["b"], name="second")],
        [tensor_in("x", [2])], [tensor_in("a", None)])
    yield "undefined-input.onnx", model(
        [helper.make_node("Relu", ["ghost"], ["y"], name="reader")],
        [tensor_in("x", [2])], [tensor_in("y", None)])
    yield "defined-twice.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="first"),
         helper.make_node("Neg", ["x"], ["y"], name="second")],
        [tensor_in("x", [2])], [tensor_in("y", None)])
    yield "input-redefined.onnx", model(
        [helper.make_node("Relu", ["x"], ["x"], name="clobber")],
        [tensor_in("x", [2])], [tensor_in("x", None)])
    yield "output-undefined.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [2])], [tensor_in("z", None)])

    # Initializers.
    w = helper.make_tensor("w", FLOAT, [2], [1.0, 2.0])
    w.ClearField("name")
    yield "initializer-no-name.onnx", add_weight_model(w)
    yield "initializer-twice.onnx", model(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")],
        [tensor_in("x", [2])], [tensor_in("y", None)],
        [helper.make_tensor("w", FLOAT, [2], [1.0, 2.0]),
         helper.make_tensor("w", FLOAT, [2], [3.0, 4.0])])
    yield "raw-size.onnx", add_weight_model(
        raw_tensor("w", FLOAT, [2], b"\0" * 7))
    count = helper.make_tensor("w", FLOAT, [2], [1.0, 2.0])
    count.float_data.append(3.0)
    yield "value-count.onnx", add_weight_model(count)
    # A [2^30] float initializer with 8 bytes of data: refused before
    # anything is allocated.
    yield "dims-without-data.onnx", add_weight_model(
        raw_tensor("w", FLOAT, [1 << 30], b"\0" * 8))
    negative = helper.make_tensor("w", FLOAT, [2], [1.0, 2.0])
    negative.dims[0] = -2
    yield "negative-dims.onnx", add_weight_model(negative)
    # 2^40 * 2^40 overflows int64: refused before any product is taken.
    huge = helper.make_tensor("w", FLOAT, [2], [1.0, 2.0])
    huge.ClearField("dims")
    huge.dims.extend([1 << 40, 1 << 40])
    yield "overflow-dims.onnx", add_weight_model(huge)
    yield "string-initializer.onnx", add_weight_model(
        helper.make_tensor("w", TensorProto.STRING, [2], [b"a", b"b"]))
    segmented = helper.make_tensor("w", FLOAT, [2], [1.0, 2.0])
    segmented.segment.begin = 0
    segmented.segment.end = 2
    yield "segmented-initializer.onnx", add_weight_model(segmented)
    sparse_model = relu_model()
    sparse_model.graph.sparse_initializer.append(helper.make_sparse_tensor(
        helper.make_tensor("sp", FLOAT, [1], [1.0]),
        helper.make_tensor("sp_indices", INT64, [1], [0]), [4]))
    yield "sparse-initializer.onnx", sparse_model

    # External data (the folder holds weights.bin, 16 bytes, and subdir/).
    yield "external-parent.onnx", add_weight_model(
        external_weight([("location", "../weights.bin")]))
    yield "external-absolute.onnx", add_weight_model(
        external_weight([("location", "/etc/passwd")]))
    yield "external-symlink.onnx", add_weight_model(
        external_weight([("location", "outside.bin")]))
    yield "external-absent.onnx", add_weight_model(
        external_weight([("location", "absent.bin")]))
    yield "external-directory.onnx", add_weight_model(
        external_weight([("location", "subdir")]))
    yield "external-no-location.onnx", add_weight_model(
        external_weight([("offset", "0")]))
    yield "external-bad-offset.onnx", add_weight_model(
        external_weight([("location", "weights.bin"), ("offset", "eight")]))
    yield "external-negative-length.onnx", add_weight_model(
        external_weight([("location", "weights.bin"), ("length", "-8")]))
    yield "external-range.onnx", add_weight_model(
        external_weight([("location", "weights.bin"), ("offset", "12"),
                         ("length", "8")]))
    yield "external-offset-beyond.onnx", add_weight_model(
        external_weight([("location", "weights.bin"), ("offset", "100")]))
    yield "external-length.onnx", add_weight_model(
        external_weight([("location", "weights.bin"), ("offset", "0"),
                         ("length", "4")]))
    yield "external-ok.onnx", add_weight_model(
        external_weight([("location", "weights.bin"), ("offset", "8"),
                         ("length", "8")]))

    # Graph inputs.
    yield "input-no-shape.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [helper.make_tensor_value_info("x", FLOAT, None)],
        [tensor_in("y", None)])
    yield "input-symbolic.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [2, "seq"])], [tensor_in("y", None)])
    yield "input-symbolic-batch.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", ["N", 3])], [tensor_in("y", None)])
    unknown_dim = model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [2, 3])], [tensor_in("y", None)])
    unknown_dim.graph.input[0].type.tensor_type.shape.dim[1].Clear()
    yield "input-unknown-dim.onnx", unknown_dim
    yield "input-huge.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [1 << 16, 1 << 16])], [tensor_in("y", None)])
    yield "input-sequence.onnx", model(
        [helper.make_node("Identity", ["s"], ["y"], name="id")],
        [helper.make_tensor_sequence_value_info("s", FLOAT, [2])],
        [tensor_in("y", None)])
    yield "input-string.onnx", model(
        [helper.make_node("Identity", ["x"], ["y"], name="id")],
        [tensor_in("x", [2], TensorProto.STRING)], [tensor_in("y", None)])
    yield "input-twice.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [2]), tensor_in("x", [3])], [tensor_in("y", None)])
    yield "input-no-name.onnx", model(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        [tensor_in("x", [2]), tensor_in("", [2])], [tensor_in("y", None)])

    # What the core checks for every handler.
    yield "node-missing-input.onnx", model(
        [helper.make_node("Add", ["x", ""], ["y"], name="add")],
        [tensor_in("x", [2])], [tensor_in("y", None)])
    yield "node-extra-output.onnx", model(
        [helper.make_node("Relu", ["x"], ["y", "z"], name="relu")],
        [tensor_in("x", [2])], [tensor_in("y", None)])
    yield "node-not-constant.onnx", model(
        [helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
        [tensor_in("x", [2]), tensor_in("lo", [])], [tensor_in("y", None)])
    yield "node-broken-constant.onnx", model(
        [helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
        [tensor_in("x", [2])], [tensor_in("y", None)],
        [raw_tensor("lo", FLOAT, [], b"\0\0")])
    yield "node-huge-result.onnx", model(
        [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
        [tensor_in("a", [1 << 16, 1]), tensor_in("b", [1, 1 << 16])],
        [tensor_in("y", None)])
    yield "node-shape-mismatch.onnx", model(
        [helper.make_node("Add", ["a", "b"], ["y"], name="add")],
        [tensor_in("a", [2, 3]), tensor_in("b", [4, 5])],
        [tensor_in("y", None)])
    yield "node-float-shape.onnx", model(
        [helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
        [tensor_in("x", [2, 3])], [tensor_in("y", None)],
        [helper.make_tensor("shape", FLOAT, [1], [6.0])])
    yield "node-axis-out-of-range.onnx", model(
        [helper.make_node("Concat", ["x", "x"], ["y"], name="concat", axis=5)],
        [tensor_in("x", [2, 3])], [tensor_in("y", None)])
    constant_float = helper.make_node("Constant", [], ["y"], name="const")
    constant_float.attribute.append(helper.make_attribute("value", 1.5))
    yield "constant-not-tensor.onnx", model(
        [constant_float], [], [tensor_in("y", None)])
    yield "constant-bad-tensor.onnx", model(
        [helper.make_node("Constant", [], ["y"], name="const",
                          value=raw_tensor("", FLOAT, [3], b"\0" * 4))],
        [], [tensor_in("y", None)])
    yield "constant-string-tensor.onnx", model(
        [helper.make_node("Constant", [], ["y"], name="const",
                          value=helper.make_tensor("", TensorProto.STRING,
                                                   [1], [b"a"]))],
        [], [tensor_in("y", None)])


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_malformed.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "subdir"), exist_ok=True)
    with open(os.path.join(out, "weights.bin"), "wb") as f:
        f.write(bytes(range(16)))
    link = os.path.join(out, "outside.bin")
    if not os.path.lexists(link):
        os.symlink("/etc/passwd", link)
    for name, content in cases(out):
        if not isinstance(content, bytes):
            content = content.SerializeToString()
        with open(os.path.join(out, name), "wb") as f:
            f.write(content)


if __name__ == "__main__":
    main()
