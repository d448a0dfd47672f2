"""Makes a model zoo classic as ONNX's wheel ships it (onnx/backend/test/
data/light: every float weight a ConstantOfShape node) trainable again, as
the zoo's full model is: each ConstantOfShape whose shape is an initializer
becomes an initializer of that name, He-normal (std sqrt(2 / fan_in),
seeded) where it has two or more dimensions (convolution and dense
weights), its ConstantOfShape fill value where it has one (biases,
BatchNormalization's scale, shift and statistics). Also writes a batch of
data: IMAGES.npy (standard normal, the model's input shape with axis 0 set
to --batch) and LABELS.npy (int64 classes below --classes).

Usage: zoo_trainable.py LIGHT.onnx OUT.onnx --batch N --classes C
           --data-dir DIR [--seed S]
"""
import argparse
import os

import numpy as np
import onnx
from onnx import numpy_helper


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("light")
    parser.add_argument("out")
    parser.add_argument("--batch", type=int, required=True)
    parser.add_argument("--classes", type=int, required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    model = onnx.load(args.light)
    graph = model.graph
    shapes = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    kept, weights = [], []
    for node in graph.node:
        if node.op_type != "ConstantOfShape" or node.input[0] not in shapes:
            kept.append(node)
            continue
        shape = tuple(int(d) for d in shapes[node.input[0]])
        fill = float(numpy_helper.to_array(node.attribute[0].t).ravel()[0])
        if len(shape) >= 2:
            fan_in = int(np.prod(shape[1:]))
            value = rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)
        else:
            value = np.full(shape, fill)
        weights.append(numpy_helper.from_array(value.astype(np.float32),
                                               node.output[0]))
    del graph.node[:]
    graph.node.extend(kept)
    graph.initializer.extend(weights)
    # IR version 3 lists initializers among the inputs.
    if model.ir_version < 4:
        for w in weights:
            graph.input.append(onnx.helper.make_tensor_value_info(
                w.name, onnx.TensorProto.FLOAT, list(w.dims)))
    onnx.save(model, args.out)

    inits = {i.name for i in graph.initializer}
    data = [i for i in graph.input if i.name not in inits][0]
    dims = [d.dim_value for d in data.type.tensor_type.shape.dim]
    dims[0] = args.batch
    os.makedirs(args.data_dir, exist_ok=True)
    np.save(os.path.join(args.data_dir, "images.npy"),
            rng.standard_normal(dims).astype(np.float32))
    np.save(os.path.join(args.data_dir, "labels.npy"),
            rng.integers(0, args.classes, args.batch).astype(np.int64))
    print("%s: %d weights as initializers (%d values), input '%s' %s" % (
        os.path.basename(args.out), len(weights),
        sum(int(np.prod(w.dims)) for w in weights), data.name, dims))


if __name__ == "__main__":
    main()
