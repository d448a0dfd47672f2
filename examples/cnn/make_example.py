#!/usr/bin/python3
"""Exports the CNN example (images [B, 3, 16, 16] float, labels [B] int64 ->
logits [B, 10], loss []) with PyTorch's reference outputs. Run with --help for
the options."""

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


if __name__ == "__main__":
    export.main(export.Example(
        "cnn", lambda: CNN(NUM_CLASSES), make_inputs, ["images", "labels"],
        ["logits", "loss"], default_batch=4))
