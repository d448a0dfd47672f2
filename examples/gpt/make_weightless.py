#!/usr/bin/python3
"""Writes a GPT of any size as a "weightless" ONNX model: the graph of
model.py's GPT (token and position embeddings, pre-LayerNorm blocks of
causal multi-head attention and a 4x MLP with exact GELU, a final LayerNorm,
a language-model head tied to the token embedding, the mean cross entropy
over targets that are not -1) whose float initializers point at external
data that is absent. `dtc plan` and `dtc autotune` read only tensor
metadata, so they plan models far larger than this machine could hold;
`dtc compile` rejects such a model, naming the missing file.

The graph is written with onnx.helper, not exported by PyTorch (that would
need the weights): static shapes but for the batch axis, the parameters
named as PyTorch names them (transformer.h.N.attn.c_attn.weight, ...),
linear layers as PyTorch exports nn.Linear (the weight [out, in] through a
Transpose into MatMul, then the bias added), the node names /h.N/attn/...
as PyTorch's exporter makes them. Parameters per Megatron-LM's
eq. 2 (../../../shared/REFERENCE.md): 12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l
h)).

Usage: make_weightless.py --out DIR [--layers N --hidden N --heads N --seq N
--vocab N]  (writes DIR/model.onnx; prints the parameter count)."""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

#: GPT-2 small unless told otherwise.
DEFAULTS = dict(layers=12, hidden=768, heads=12, seq=1024, vocab=50304)

#: Absent external data of every float initializer.
WEIGHTS_FILE = "weights.absent.bin"


class Graph:
    def __init__(self):
        self.nodes, self.initializers, self.offset = [], [], 0

    def node(self, op, inputs, name, outputs=1, **attrs):
        outs = [f"{name}_output_{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=name,
                                           **attrs))
        return outs[0] if outputs == 1 else outs

    def constant(self, name, array):
        """A Constant node (a constant, never a trainable parameter)."""
        return self.node("Constant", [], name,
                         value=numpy_helper.from_array(array, name + "_value"))

    def weight(self, name, shape):
        """A float parameter whose data is absent external data."""
        t = TensorProto(name=name, data_type=TensorProto.FLOAT,
                        dims=list(shape))
        t.data_location = TensorProto.EXTERNAL
        length = 4 * int(np.prod(shape))
        for key, value in (("location", WEIGHTS_FILE),
                           ("offset", str(self.offset)),
                           ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += length
        self.initializers.append(t)
        return name


def build(layers, hidden, heads, seq, vocab):
    g = Graph()
    h, a, s, d = hidden, heads, seq, hidden // heads
    wte = g.weight("transformer.wte.weight", (vocab, h))
    wpe = g.weight("transformer.wpe.weight", (s, h))
    positions = g.constant("/positions", np.arange(s, dtype=np.int64))
    x = g.node("Add", [g.node("Gather", [wte, "tokens"], "/wte/Gather"),
                       g.node("Gather", [wpe, positions], "/wpe/Gather")],
               "/Add")
    mask = g.constant("/attn_mask",
                      np.tril(np.ones((s, s), dtype=bool)).reshape(1, 1, s, s))
    heads_shape = g.constant("/heads_shape", np.array([0, s, a, d], np.int64))
    merged_shape = g.constant("/merged_shape", np.array([0, s, h], np.int64))
    scale = g.constant("/scale", np.array(1.0 / np.sqrt(d), np.float32))
    minus_inf = g.constant("/minus_inf", np.array(-np.inf, np.float32))
    half = g.constant("/half", np.array(0.5, np.float32))
    one = g.constant("/one", np.array(1.0, np.float32))
    sqrt2 = g.constant("/sqrt2", np.array(np.sqrt(2.0), np.float32))
    split = g.constant("/split", np.array([h, h, h], np.int64))

    def norm(x, prefix, node):
        return g.node("LayerNormalization",
                      [x, g.weight(prefix + ".weight", (h,)),
                       g.weight(prefix + ".bias", (h,))],
                      node, axis=-1, epsilon=1e-5)

    def linear(x, prefix, node, n_in, n_out):
        # As PyTorch exports nn.Linear: the weight [out, in], transposed.
        w = g.node("Transpose", [g.weight(prefix + ".weight", (n_out, n_in))],
                   node + "/Transpose", perm=[1, 0])
        y = g.node("MatMul", [x, w], node + "/MatMul")
        return g.node("Add", [g.weight(prefix + ".bias", (n_out,)), y],
                      node + "/Add")

    for i in range(layers):
        p, n = f"transformer.h.{i}", f"/h.{i}"
        y = norm(x, p + ".ln_1", n + "/ln_1/LayerNormalization")
        qkv = linear(y, p + ".attn.c_attn", n + "/attn/c_attn", h, 3 * h)
        q, k, v = g.node("Split", [qkv, split], n + "/attn/Split", outputs=3,
                         axis=2)
        per_head = []
        for name, t, perm in (("q", q, [0, 2, 1, 3]), ("k", k, [0, 2, 3, 1]),
                              ("v", v, [0, 2, 1, 3])):
            r = g.node("Reshape", [t, heads_shape],
                       f"{n}/attn/Reshape_{name}")
            per_head.append(g.node("Transpose", [r],
                                   f"{n}/attn/Transpose_{name}", perm=perm))
        q, k, v = per_head
        att = g.node("Mul", [g.node("MatMul", [q, k], n + "/attn/MatMul"),
                             scale], n + "/attn/Mul")
        att = g.node("Where", [mask, att, minus_inf], n + "/attn/Where")
        att = g.node("Softmax", [att], n + "/attn/Softmax", axis=-1)
        y = g.node("MatMul", [att, v], n + "/attn/MatMul_1")
        y = g.node("Transpose", [y], n + "/attn/Transpose", perm=[0, 2, 1, 3])
        y = g.node("Reshape", [y, merged_shape], n + "/attn/Reshape")
        y = linear(y, p + ".attn.c_proj", n + "/attn/c_proj", h, h)
        x = g.node("Add", [x, y], n + "/Add")
        y = norm(x, p + ".ln_2", n + "/ln_2/LayerNormalization")
        y = linear(y, p + ".mlp.c_fc", n + "/mlp/c_fc", h, 4 * h)
        erf = g.node("Erf", [g.node("Div", [y, sqrt2], n + "/mlp/gelu/Div")],
                     n + "/mlp/gelu/Erf")
        y = g.node("Mul", [g.node("Mul", [y, half], n + "/mlp/gelu/Mul"),
                           g.node("Add", [erf, one], n + "/mlp/gelu/Add")],
                   n + "/mlp/gelu/Mul_1")
        y = linear(y, p + ".mlp.c_proj", n + "/mlp/c_proj", 4 * h, h)
        x = g.node("Add", [x, y], n + "/Add_1")
    x = norm(x, "transformer.ln_f", "/ln_f/LayerNormalization")
    head = g.node("Transpose", [wte], "/lm_head/Transpose", perm=[1, 0])
    g.nodes.append(helper.make_node("MatMul", [x, head], ["logits"],
                                    name="/lm_head/MatMul"))
    flat = g.node("Reshape", ["logits", g.constant(
        "/flat_shape", np.array([-1, vocab], np.int64))], "/Reshape")
    flat_targets = g.node("Reshape", ["targets", g.constant(
        "/flat_targets_shape", np.array([-1], np.int64))], "/Reshape_1")
    g.nodes.append(helper.make_node(
        "SoftmaxCrossEntropyLoss", [flat, flat_targets], ["loss"],
        name="/SoftmaxCrossEntropyLoss", ignore_index=-1, reduction="mean"))

    tokens = helper.make_tensor_value_info("tokens", TensorProto.INT64,
                                           ["batch", s])
    targets = helper.make_tensor_value_info("targets", TensorProto.INT64,
                                            ["batch", s])
    logits = helper.make_tensor_value_info("logits", TensorProto.FLOAT,
                                           ["batch", s, vocab])
    loss = helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])
    graph = helper.make_graph(g.nodes, "gpt", [tokens, targets],
                              [logits, loss], initializer=g.initializers)
    model = helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 17)], producer_name="dtc make_weightless.py")
    parameters = sum(int(np.prod(t.dims)) for t in g.initializers)
    return model, parameters


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for model.onnx")
    for name, default in DEFAULTS.items():
        parser.add_argument("--" + name, type=int, default=default,
                            metavar="N", help=f"(default {default})")
    args = parser.parse_args(argv[1:])
    for name in DEFAULTS:
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be a positive integer")
    if args.hidden % args.heads:
        parser.error(f"--heads {args.heads} does not divide --hidden "
                     f"{args.hidden}")
    model, parameters = build(args.layers, args.hidden, args.heads, args.seq,
                              args.vocab)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    print(f"wrote {os.path.join(args.out, 'model.onnx')}: {parameters} "
          f"parameters, weights absent ({WEIGHTS_FILE})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
