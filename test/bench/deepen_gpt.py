#!/usr/bin/python3
"""Makes a deep GPT export from a shallow one, without exporting it.

Usage: deepen_gpt.py IN_DIR OUT_DIR LAYERS

PyTorch's ONNX exporter needs several copies of a model's weights in memory:
a GPT-2 XL-sized model (1.5B parameters) does not export on a 24 GiB
machine. This script takes an export of the GPT example with two or more
layers (examples/gpt/make_example.py --layers 2 ...) and repeats its last
block (the nodes named /h.K/..., K the last layer, and the initializers
transformer.h.K.*) until the model has LAYERS blocks, each copy reading the
previous one's output and owning a copy of the block's weights under its own
names (transformer.h.N.*). The weights go to OUT_DIR/model.onnx's external
data (weights.data), written tensor by tensor: only the shallow model's
weights are held in memory. The
copies' weights are the last block's, so the deep model computes something
real (and trains), though not what a freshly initialized one would.
OUT_DIR/train/ gets IN_DIR/train/'s data.
"""
import os
import shutil
import sys

import onnx
import onnx.numpy_helper


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, out, layers = argv[1], argv[2], int(argv[3])
    model = onnx.load(os.path.join(src, "model.onnx"))
    graph = model.graph
    blocks = sorted({int(n.name.split("/h.")[1].split("/")[0])
                     for n in graph.node if n.name.startswith("/h.")})
    last = blocks[-1]
    if layers <= last:
        print("deepen_gpt.py: the model already has %d blocks" %
              (last + 1), file=sys.stderr)
        return 2
    tag = "/h.%d/" % last
    block = [n for n in graph.node if tag in n.name]
    produced = {o for n in block for o in n.output}
    others = [n for n in graph.node if tag not in n.name]
    # The block's output: what it produces that the rest of the graph reads.
    consumed_outside = {i for n in others for i in n.input} | {
        o.name for o in graph.output}
    outputs = [t for t in produced if t in consumed_outside]
    if len(outputs) != 1:
        print("deepen_gpt.py: the last block has outputs %s, not one" %
              outputs, file=sys.stderr)
        return 2
    block_out = outputs[0]
    # Its input: what it reads that an earlier node computed (constants
    # the exporter shares between blocks stay shared).
    earlier = {o for n in others if n.op_type != "Constant"
               for o in n.output}
    inputs = sorted({i for n in block for i in n.input if i in earlier})
    if len(inputs) != 1:
        print("deepen_gpt.py: the last block reads %s, not one tensor" %
              inputs, file=sys.stderr)
        return 2
    block_in = inputs[0]
    prefix = "transformer.h.%d." % last
    inits = {i.name: i for i in graph.initializer}
    own = [name for name in inits if name.startswith(prefix)]

    previous = block_out
    new_nodes = []
    new_inits = []
    source_of = {}
    for k in range(last + 1, layers):
        rename = {block_in: previous}
        for name in own:
            rename[name] = "transformer.h.%d.%s" % (k, name[len(prefix):])
        for t in produced:
            rename[t] = "%s__h%d" % (t, k)
        for n in block:
            copy = onnx.NodeProto()
            copy.CopyFrom(n)
            copy.name = n.name.replace(tag, "/h.%d/" % k)
            for i, name in enumerate(copy.input):
                copy.input[i] = rename.get(name, name)
            for i, name in enumerate(copy.output):
                copy.output[i] = rename.get(name, name)
            new_nodes.append(copy)
        for name in own:
            # Metadata only: the bytes are the source's, written below.
            t = onnx.TensorProto()
            t.name = rename[name]
            t.data_type = inits[name].data_type
            t.dims.extend(inits[name].dims)
            source_of[t.name] = name
            new_inits.append(t)
        previous = rename[block_out]
    # The rest of the graph reads the last copy's output.
    for n in others:
        for i, name in enumerate(n.input):
            if name == block_out:
                n.input[i] = previous
    for o in graph.output:
        if o.name == block_out:
            o.name = previous
    # Insert the copies right after the last block's nodes (topological).
    position = max(i for i, n in enumerate(graph.node) if tag in n.name) + 1
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(nodes[:position] + new_nodes + nodes[position:])
    graph.initializer.extend(new_inits)

    os.makedirs(out, exist_ok=True)
    # External data, one tensor at a time (the shallow model's bytes, read
    # before its tensors are rewritten; the copies' are theirs).
    original = {name: onnx.numpy_helper.to_array(t).tobytes()
                for name, t in inits.items()}
    data_path = os.path.join(out, "weights.data")
    offset = 0
    with open(data_path, "wb") as f:
        for t in graph.initializer:
            raw = original[source_of.get(t.name, t.name)]
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.ClearField("int64_data")
            t.ClearField("int32_data")
            t.ClearField("double_data")
            t.data_location = onnx.TensorProto.EXTERNAL
            del t.external_data[:]
            for key, value in (("location", "weights.data"),
                               ("offset", str(offset)),
                               ("length", str(len(raw)))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            f.write(raw)
            offset += len(raw)
            pad = (-offset) % 64
            f.write(b"\0" * pad)
            offset += pad
    onnx.save_model(model, os.path.join(out, "model.onnx"))
    if os.path.isdir(os.path.join(src, "train")):
        shutil.copytree(os.path.join(src, "train"),
                        os.path.join(out, "train"), dirs_exist_ok=True)
    print("deepen_gpt.py: %d blocks, %d initializers, %.2f GB of weights "
          "-> %s" % (layers, len(graph.initializer), offset / 1e9, out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
