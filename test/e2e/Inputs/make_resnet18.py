"""Writes torchvision's ResNet-18 (10 classes, seeded weights) in training
mode, traced with torch.jit.trace and scripted, with what PyTorch computes
for it and PyTorch's own SGD-momentum training, for
torchscript-resnet18.test:

  OUT/resnet18_traced.pt, OUT/resnet18_scripted.pt   torch.jit.save of the
                            traced and the scripted module
  OUT/images.npy, OUT/labels.npy   one batch (that of step 1)
  OUT/logits.npy            forward's output for it (batch statistics), in
                            float64
  OUT/train/images.npy, OUT/train/labels.npy   STEPS batches
  OUT/losses.npy            float64 [STEPS]: the mean cross-entropy of each
                            step of torch.optim.SGD (lr 1e-4, momentum 0.9)
                            in float64 from the same float32 weights
  OUT/grads_step1/NAME.npy  each parameter's gradient at step 1 (float64)
  OUT/sensitivity.json      how far PyTorch's float32 run lands from that
                            (tolerance.py's spread)

Usage: make_resnet18.py OUT [--size S] (images S x S, default 32)
"""
import copy
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
import torchvision

STEPS = 5
BATCH = 4
LR = 1e-4


def main(out, size):
    os.makedirs(os.path.join(out, "train"), exist_ok=True)
    torch.manual_seed(0)
    model = torchvision.models.resnet18(num_classes=10)
    model.train()
    g = torch.Generator().manual_seed(1)
    images = torch.randn(BATCH * STEPS, 3, size, size, generator=g)
    labels = torch.randint(0, 10, (BATCH * STEPS,), generator=g)
    initial = copy.deepcopy(model.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(copy.deepcopy(model), (images[:BATCH],),
                                 check_trace=False)
    # Tracing ran the forward, which moved BatchNorm's running statistics.
    with torch.no_grad():
        for name, value in traced.state_dict().items():
            value.copy_(initial[name])
    traced.save(os.path.join(out, "resnet18_traced.pt"))
    torch.jit.script(copy.deepcopy(model)).save(
        os.path.join(out, "resnet18_scripted.pt"))
    np.save(os.path.join(out, "images.npy"), images[:BATCH].numpy())
    np.save(os.path.join(out, "labels.npy"), labels[:BATCH].numpy())
    np.save(os.path.join(out, "train", "images.npy"), images.numpy())
    np.save(os.path.join(out, "train", "labels.npy"), labels.numpy())
    # In float64: PyTorch's float32 logits are themselves 1e-5 off them
    # after 20 layers.
    with torch.no_grad():
        logits = copy.deepcopy(model).double()(images[:BATCH].double())
    np.save(os.path.join(out, "logits.npy"), logits.numpy())

    runs = {dtype: train(model, images, labels, dtype)
            for dtype in (torch.float64, torch.float32)}
    losses, grads = runs[torch.float64]
    np.save(os.path.join(out, "losses.npy"), np.array(losses))
    os.makedirs(os.path.join(out, "grads_step1"), exist_ok=True)
    for name, g in grads.items():
        np.save(os.path.join(out, "grads_step1", name + ".npy"), g)
    # How far PyTorch's own float32 run lands from the float64 one: the
    # trajectory amplifies rounding (random weights, BatchNorm over 4
    # values per channel after layer4), so compare_training.py bounds dtc's
    # losses by 10x this spread where it exceeds the stated tolerance.
    losses32, grads32 = runs[torch.float32]
    spread = {
        "loss": float(np.max(np.abs(np.array(losses32) - losses) /
                             np.abs(losses))),
        "grads_step1_tensors": {
            name: float(np.linalg.norm(grads32[name] - g) /
                        max(np.linalg.norm(g), 1e-30))
            for name, g in grads.items()},
    }
    with open(os.path.join(out, "sensitivity.json"), "w") as f:
        json.dump(spread, f, indent=1)


def train(model, images, labels, dtype):
    """STEPS steps of SGD-momentum in `dtype`: the losses and the step-1
    gradients (float64 arrays, by parameter name)."""
    reference = copy.deepcopy(model).to(dtype)
    optimizer = torch.optim.SGD(reference.parameters(), lr=LR, momentum=0.9)
    losses, grads = [], {}
    for step in range(STEPS):
        x = images[step * BATCH:(step + 1) * BATCH].to(dtype)
        y = labels[step * BATCH:(step + 1) * BATCH]
        optimizer.zero_grad()
        loss = F.cross_entropy(reference(x), y)
        loss.backward()
        if step == 0:
            grads = {name: p.grad.double().numpy().copy()
                     for name, p in reference.named_parameters()}
        optimizer.step()
        losses.append(loss.item())
    return losses, grads


if __name__ == "__main__":
    args = sys.argv[1:]
    size = 32
    if "--size" in args:
        i = args.index("--size")
        size = int(args[i + 1])
        del args[i:i + 2]
    main(args[0], size)
