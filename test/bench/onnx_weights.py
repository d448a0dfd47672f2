"""The export's weights for the PyTorch side of train_speed.py's cases that
build their module in Python (torchvision_case.py, hf_case.py)."""

import torch


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
