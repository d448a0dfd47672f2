#!/usr/bin/python3
"""Exports the MLP example (x [B, 16] float, y [B] int64 -> logits [B, 10],
loss []) with PyTorch's reference outputs, and with --train-data and
--reference-training its training data and PyTorch's reference training
(../common/train_reference.py). Run with --help for the options."""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import torch  # noqa: E402

import export  # noqa: E402
from model import MLP  # noqa: E402

IN_FEATURES = 16
NUM_CLASSES = 10


def make_inputs(batch, generator):
    x = torch.randn(batch, IN_FEATURES, generator=generator)
    y = torch.randint(0, NUM_CLASSES, (batch,), generator=generator)
    return [x, y]


def make_train_data(samples, generator):
    """A learnable task: each class has a random prototype, and a sample is
    its class's prototype plus as much Gaussian noise."""
    prototypes = torch.randn(NUM_CLASSES, IN_FEATURES, generator=generator)
    y = torch.randint(0, NUM_CLASSES, (samples,), generator=generator)
    x = prototypes[y] + torch.randn(samples, IN_FEATURES, generator=generator)
    return [x, y]


EXAMPLE = export.Example(
    "mlp", lambda: MLP(IN_FEATURES, 64, NUM_CLASSES), make_inputs,
    ["x", "y"], ["logits", "loss"], default_batch=8)
#: The input the loss's targets come from, and the target it does not count.
LABELS = "y"
IGNORE_INDEX = -100
#: Hyperparameters of --reference-training, per optimizer.
REFERENCE_TRAINING = {
    "sgd": dict(lr=0.1, momentum=0.9),
    "adamw": dict(lr=1e-2),
}

if __name__ == "__main__":
    import train_reference  # noqa: E402

    train_reference.example_main(sys.modules[__name__])
