#!/usr/bin/python3
"""Exports the MLP example (x [B, 16] float, y [B] int64 -> logits [B, 10],
loss []) with PyTorch's reference outputs. Run with --help for the options."""

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


if __name__ == "__main__":
    export.main(export.Example(
        "mlp", lambda: MLP(IN_FEATURES, 64, NUM_CLASSES), make_inputs,
        ["x", "y"], ["logits", "loss"], default_batch=8))
