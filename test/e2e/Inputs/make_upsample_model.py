"""Writes a small CNN with upsampling (nn.Upsample bilinear, align_corners
False and True, and nearest: ONNX Resize at opset 17), its training data,
and PyTorch's reference training (SGD-momentum, float64): OUT/model.onnx,
OUT/train/{x,y}.npy, OUT/ref/losses.npy. dtc's data order: step k takes
samples [(k-1)*B, k*B) of the stream.

Usage: make_upsample_model.py OUT [--steps N] [--batch B]
"""
import argparse
import copy
import os

import numpy as np
import torch
from torch import nn


class UpNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, 3, padding=1)
        self.up1 = nn.Upsample(scale_factor=2, mode="bilinear",
                               align_corners=False)
        self.conv2 = nn.Conv2d(4, 4, 3, stride=2, padding=1)
        self.up2 = nn.Upsample(scale_factor=2, mode="nearest")
        self.up3 = nn.Upsample(size=(11, 13), mode="bilinear",
                               align_corners=True)
        self.head = nn.Linear(4, 4)

    def forward(self, x, y):
        h = torch.relu(self.up1(self.conv1(x)))
        h = self.up3(self.up2(torch.tanh(self.conv2(h))))
        logits = self.head(h.mean(dim=(2, 3)))
        return logits, nn.functional.cross_entropy(logits, y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = UpNet()
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 3, 8, 8, generator=g)
    y = torch.randint(0, 4, (16,), generator=g)
    os.makedirs(os.path.join(args.out, "train"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "ref"), exist_ok=True)
    np.save(os.path.join(args.out, "train", "x.npy"), x.numpy())
    np.save(os.path.join(args.out, "train", "y.npy"), y.numpy())
    torch.onnx.export(copy.deepcopy(model), (x[:args.batch], y[:args.batch]),
                      os.path.join(args.out, "model.onnx"),
                      input_names=["x", "y"], output_names=["logits", "loss"],
                      opset_version=17, do_constant_folding=False,
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"},
                                    "logits": {0: "batch"}})
    ref = copy.deepcopy(model).double()
    opt = torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
    losses = []
    n = x.shape[0]
    for step in range(args.steps):
        rows = [(step * args.batch + i) % n for i in range(args.batch)]
        opt.zero_grad()
        _, loss = ref(x[rows].double(), y[rows])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.save(os.path.join(args.out, "ref", "losses.npy"), np.array(losses))
    print("losses", " ".join("%.6f" % v for v in losses))


if __name__ == "__main__":
    main()
