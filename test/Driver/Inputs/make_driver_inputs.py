#!/usr/bin/env python3
"""Writes the inputs of test/Driver/errors.test into a folder.

    make_driver_inputs.py OUTDIR

relu.onnx (y = Relu(x), x of shape [N, 3]), good and bad .npy files for it,
and suite/, a folder of ONNX backend-test folders for `dtc test-onnx`: one
that passes, one whose model.onnx is not a model, one without data sets.

Needs the system Python (/usr/bin/python3) for Debian's python3-onnx and
python3-numpy.
"""

import os
import struct
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper


def npy_raw(header, payload=b""):
    """A version-1 .npy file with `header` (padded) and `payload`."""
    text = header.encode()
    pad = (64 - (10 + len(text) + 1) % 64) % 64
    text += b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + payload


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_driver_inputs.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)

    def path(*names):
        return os.path.join(out, *names)

    relu = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]),
        opset_imports=[helper.make_opsetid("", 13)])
    with open(path("relu.onnx"), "wb") as f:
        f.write(relu.SerializeToString())

    x = np.array([[1, -2, 3], [-4, 5, -6]], dtype=np.float32)
    np.save(path("x.npy"), x)
    np.save(path("y.npy"), np.maximum(x, 0))
    np.save(path("x-f64.npy"), x.astype(np.float64))
    np.save(path("x-4x3.npy"), np.zeros((4, 3), dtype=np.float32))
    np.save(path("x-c8.npy"), x.astype(np.complex64))
    np.save(path("x-fortran.npy"), np.asfortranarray(x))
    with open(path("x.npy"), "rb") as f:
        good = f.read()
    with open(path("x-cut-data.npy"), "wb") as f:
        f.write(good[:-5])
    with open(path("x-cut-header.npy"), "wb") as f:
        f.write(good[:20])
    with open(path("not-npy.npy"), "w") as f:
        f.write("1 2 3\n")
    with open(path("x-version9.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x09\x00" + good[8:])
    with open(path("x-bad-shape.npy"), "wb") as f:
        f.write(npy_raw("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (2, three), }"))
    with open(path("x-huge-shape.npy"), "wb") as f:
        f.write(npy_raw("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (1099511627776, 1099511627776), }"))
    with open(path("a-file"), "w") as f:
        f.write("not a folder\n")

    # Backend-test folders.
    ok = path("suite", "ok")
    os.makedirs(os.path.join(ok, "test_data_set_0"), exist_ok=True)
    fixed = helper.make_model(
        helper.make_graph(
            [helper.make_node("Relu", ["x"], ["y"], name="relu")], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]),
        opset_imports=[helper.make_opsetid("", 13)])
    with open(os.path.join(ok, "model.onnx"), "wb") as f:
        f.write(fixed.SerializeToString())
    for name, value in (("input_0.pb", x), ("output_0.pb", np.maximum(x, 0))):
        with open(os.path.join(ok, "test_data_set_0", name), "wb") as f:
            f.write(numpy_helper.from_array(value).SerializeToString())
    garbage = path("suite", "garbage")
    os.makedirs(os.path.join(garbage, "test_data_set_0"), exist_ok=True)
    with open(os.path.join(garbage, "model.onnx"), "w") as f:
        f.write("this is not a model\n")
    nosets = path("suite", "no-data-sets")
    os.makedirs(nosets, exist_ok=True)
    with open(os.path.join(nosets, "model.onnx"), "wb") as f:
        f.write(fixed.SerializeToString())
    os.makedirs(path("empty-folder"), exist_ok=True)


if __name__ == "__main__":
    main()
