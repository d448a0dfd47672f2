#!/usr/bin/python3
"""Exports the CNN example (images [B, 3, 16, 16] float, labels [B] int64 ->
logits [B, 10], loss []) with PyTorch's reference outputs, and with
--train-data and --reference-training its training data and PyTorch's
reference training (../common/train_reference.py). Run with --help for the
options."""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import torch  # noqa: E402

import export  # noqa: E402
from model import CNN  # noqa: E402

NUM_CLASSES = 10


def make_inputs(batch, generator):
    images = torch.randn(batch, 3, 16, 16, generator=generator)
    labels = torch.randint(0, NUM_CLASSES, (batch,), generator=generator)
    return [images, labels]


def make_train_data(samples, generator):
    """A learnable task: each class has a random image as prototype, and a
    sample is its class's prototype plus as much Gaussian noise."""
    prototypes = torch.randn(NUM_CLASSES, 3, 16, 16, generator=generator)
    labels = torch.randint(0, NUM_CLASSES, (samples,), generator=generator)
    noise = torch.randn(samples, 3, 16, 16, generator=generator)
    return [prototypes[labels] + noise, labels]


EXAMPLE = export.Example(
    "cnn", lambda: CNN(NUM_CLASSES), make_inputs, ["images", "labels"],
    ["logits", "loss"], default_batch=4)
#: The input the loss's targets come from, and the target it does not count.
LABELS = "labels"
IGNORE_INDEX = -100
#: Hyperparameters of --reference-training, per optimizer.
REFERENCE_TRAINING = {
    "sgd": dict(lr=0.02, momentum=0.9),
    "adamw": dict(lr=2e-3),
}

if __name__ == "__main__":
    import train_reference  # noqa: E402

    train_reference.example_main(sys.modules[__name__])
