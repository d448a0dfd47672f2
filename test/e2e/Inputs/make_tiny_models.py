"""Writes tiny ONNX models (made with onnx.helper) whose outputs do not name
one loss, for the error tests of `dtc compile`, and data for the one that
can be trained once a loss is appended.

Usage: make_tiny_models.py OUTDIR
       make_tiny_models.py check OUTDIR LOG.jsonl --global-batch G --lr LR
                           [--weight-decay WD]

  OUTDIR/no_loss.onnx       x [B, 4] float, t [B, 3] float ->
                            y = Relu(x W + b) [B, 3] (no scalar output)
  OUTDIR/two_losses.onnx    the same with two scalar float outputs,
                            l1 = ReduceMean(y) and l2 = ReduceSum(y)
  OUTDIR/x.npy, OUTDIR/t.npy  16 samples for no_loss.onnx with --loss mse

`check` trains no_loss.onnx with the appended loss mean((y - t)^2) and AdamW
(betas 0.9, 0.999, eps 1e-8, decoupled weight decay) in float64 numpy, on
the global batch of samples [(k-1)G, kG) of step k, and holds the losses of
LOG.jsonl (a `train` log) against it: within 1e-4 relative, else FAIL.
"""
import argparse
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def base_graph(rng):
    w = numpy_helper.from_array(
        rng.standard_normal((4, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(
        rng.standard_normal((3,)).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
        helper.make_node("Add", ["xw", "b"], ["pre"], name="add"),
        helper.make_node("Relu", ["pre"], ["y"], name="relu"),
    ]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, ["B", 4]),
        helper.make_tensor_value_info("t", TensorProto.FLOAT, ["B", 3]),
    ]
    return nodes, inputs, [w, b]


def save(model, path):
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)


def check(argv):
    parser = argparse.ArgumentParser(prog="make_tiny_models.py check")
    parser.add_argument("out")
    parser.add_argument("log")
    parser.add_argument("--global-batch", type=int, required=True)
    parser.add_argument("--lr", type=float, required=True)
    parser.add_argument("--weight-decay", type=float, default=0.01)
    args = parser.parse_args(argv)
    model = onnx.load(os.path.join(args.out, "no_loss.onnx"))
    params = {i.name: numpy_helper.to_array(i).astype(np.float64)
              for i in model.graph.initializer}
    x = np.load(os.path.join(args.out, "x.npy")).astype(np.float64)
    t = np.load(os.path.join(args.out, "t.npy")).astype(np.float64)
    with open(args.log) as f:
        got = [json.loads(line)["loss"] for line in f if line.strip()]
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    want = []
    G, n = args.global_batch, x.shape[0]
    for k in range(1, len(got) + 1):
        index = (np.arange(G) + (k - 1) * G) % n
        xb, tb = x[index], t[index]
        pre = xb @ params["w"] + params["b"]
        y = np.maximum(pre, 0)
        want.append(float(np.mean((y - tb) ** 2)))
        dpre = 2 * (y - tb) / y.size * (pre > 0)
        grads = {"w": xb.T @ dpre, "b": dpre.sum(axis=0)}
        for name, p in params.items():
            g = grads[name]
            p *= 1 - args.lr * args.weight_decay
            m[name] = b1 * m[name] + (1 - b1) * g
            v2[name] = b2 * v2[name] + (1 - b2) * g * g
            mhat = m[name] / (1 - b1 ** k)
            vhat = v2[name] / (1 - b2 ** k)
            p -= args.lr * mhat / (np.sqrt(vhat) + eps)
    rel = np.abs(np.array(got) - want) / np.maximum(np.abs(want), 1e-12)
    print(f"appended mse loss, adamw: {len(got)} steps, worst relative loss "
          f"difference {rel.max():.2e}")
    ok = len(got) > 0 and rel.max() <= 1e-4
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


def main(argv):
    if len(argv) > 1 and argv[1] == "check":
        return check(argv[2:])
    out = argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    opset = [helper.make_opsetid("", 17)]

    nodes, inputs, inits = base_graph(rng)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["B", 3])
    graph = helper.make_graph(nodes, "no_loss", inputs, [y], inits)
    save(helper.make_model(graph, opset_imports=opset),
         os.path.join(out, "no_loss.onnx"))

    nodes, inputs, inits = base_graph(rng)
    nodes += [
        helper.make_node("ReduceMean", ["y"], ["l1"], name="mean",
                         keepdims=0),
        helper.make_node("ReduceSum", ["y"], ["l2"], name="sum", keepdims=0),
    ]
    outputs = [
        helper.make_tensor_value_info("l1", TensorProto.FLOAT, []),
        helper.make_tensor_value_info("l2", TensorProto.FLOAT, []),
    ]
    graph = helper.make_graph(nodes, "two_losses", inputs, outputs, inits)
    save(helper.make_model(graph, opset_imports=opset),
         os.path.join(out, "two_losses.onnx"))

    np.save(os.path.join(out, "x.npy"),
            rng.standard_normal((16, 4)).astype(np.float32))
    np.save(os.path.join(out, "t.npy"),
            rng.standard_normal((16, 3)).astype(np.float32))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
