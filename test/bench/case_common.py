"""What train_speed.py's cases that build their module in Python
(torchvision_case.py, hf_case.py) share: writing the training data and the
training-mode export, and loading the export's weights back."""

import os
import warnings

import numpy as np
import torch


def save_and_export(model, out, batch, inputs):
    """Writes each of `inputs` (name -> tensor of every sample) to
    OUT/train/NAME.npy and exports `model` on the first `batch` samples to
    OUT/model.onnx: opset 17, training mode, no constant folding, the inputs
    and `logits` with a dynamic batch axis, outputs `logits` and `loss`."""
    os.makedirs(os.path.join(out, "train"), exist_ok=True)
    for name, tensor in inputs.items():
        np.save(os.path.join(out, "train", name + ".npy"), tensor.numpy())
    axes = {name: {0: "batch"} for name in list(inputs) + ["logits"]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            model, tuple(t[:batch] for t in inputs.values()),
            os.path.join(out, "model.onnx"), input_names=list(inputs),
            output_names=["logits", "loss"], opset_version=17,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False, dynamic_axes=axes)


def load_weights(model, onnx_model):
    """Copies the export's initializers into the module's parameters and
    buffers of the same names; returns the names of the parameters."""
    from onnx import numpy_helper
    values = {i.name: i for i in onnx_model.graph.initializer}
    params = {name for name, _ in model.named_parameters()}
    with torch.no_grad():
        for name, tensor in model.state_dict().items():
            if name in values:
                tensor.copy_(torch.from_numpy(
                    numpy_helper.to_array(values[name]).copy()))
            elif name in params:
                raise SystemExit("the export has no initializer for %s" %
                                 name)
    return sorted(params)
