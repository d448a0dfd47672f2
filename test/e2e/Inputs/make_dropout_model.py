"""Writes a small model with dropout between tensor-parallel layers, for
tests of dropout under tensor and sequence parallelism.

Usage: make_dropout_model.py OUTDIR

OUTDIR/model.onnx (exported in training mode, opset 17): x [B, 8, 16]
(tokens of 16 features) -> LayerNorm -> Linear(16, 32) -> GELU ->
Dropout(0.3) -> Linear(32, 16) -> Dropout(0.2) -> + x -> mean over the
tokens -> Linear(16, 4) -> cross entropy with y [B] (the output 'loss').
Under tp the first dropout runs on a tensor split along its last dimension
(the column-parallel output), the second, with --sequence-parallel, on one
split by tokens. OUTDIR/x.npy (float32 [64, 8, 16]) and OUTDIR/y.npy
(int64 [64]) are training data.
"""
import os
import sys

import numpy as np
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 16)
        self.head = nn.Linear(16, 4)
        self.drop1 = nn.Dropout(0.3)
        self.drop2 = nn.Dropout(0.2)

    def forward(self, x, y):
        h = self.drop1(torch.nn.functional.gelu(self.up(self.norm(x))))
        x = x + self.drop2(self.down(h))
        logits = self.head(x.mean(dim=1))
        return torch.nn.functional.cross_entropy(logits, y)


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    model = Model().train()
    x = torch.randn(64, 8, 16)
    y = torch.randint(0, 4, (64,))
    torch.onnx.export(model, (x[:8], y[:8]), os.path.join(out, "model.onnx"),
                      input_names=["x", "y"], output_names=["loss"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                      opset_version=17,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False)
    np.save(os.path.join(out, "x.npy"), x.numpy())
    np.save(os.path.join(out, "y.npy"), y.numpy())


if __name__ == "__main__":
    main(sys.argv[1])
