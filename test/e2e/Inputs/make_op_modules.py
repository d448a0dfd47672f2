"""Writes small TorchScript modules that use the aten ops the importer maps
beyond the examples', each scripted and traced from one module (same
weights), with what PyTorch computes for them, and PyTorch's own SGD
training of each, for the importer's tests:

  OUT/NAME_scripted.pt, OUT/NAME_traced.pt   torch.jit.save of the module
  OUT/NAME/INPUT.npy        the inputs of one forward (the batch of step 1)
  OUT/NAME/outputK.npy      forward's outputs for them (train mode)
  OUT/NAME/train/INPUT.npy  STEPS batches of training data
  OUT/NAME/losses.npy       float64 [STEPS]: PyTorch's loss at each step of
                            SGD (lr 0.05, momentum 0.9) in float64 from the
                            same float32 weights

Modules (NAME):
  activations  linear, then relu6, hardtanh, silu, hardswish, hardsigmoid,
               leaky_relu, elu, softplus, clamp, pow, abs, rsqrt, erf, both
               gelus, sin/cos, joined by cat; mse_loss (outputs: features,
               loss)
  pooling      a grouped conv2d, adaptive_avg_pool2d to sizes that do and
               do not divide the input's and to 1, adaptive_max_pool2d, a
               divisible adaptive_avg_pool1d, addmm, log_softmax and
               nll_loss (output: loss)
  indexing     embedding, a causal mask from ones/tril and full/triu,
               masked_fill, where with a number, select, index and
               index_select with index tensors, unsqueeze/squeeze/expand,
               stack, .to()/type_as, max along a dim, amax, argmax,
               maximum, cross_entropy over [N, C, T] (outputs: loss,
               argmax)
  promotion    PyTorch's type promotion and the forms around it (not
               trained): pow of int tensors and float numbers, of two
               numbers, where with numbers, true division of ints, bitwise
               ops on ints, logical ops on floats, float functions of ints,
               softplus with a threshold, argmax with keepdim and no dim,
               unbatched adaptive max pooling, squeeze of a 0-d tensor, a
               chain of in-place ops on a fresh tensor (outputs: output0..)
  dropout      dropout in training mode with p = 0.5 (not trained here)

Usage: make_op_modules.py OUT
"""
import copy
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

STEPS = 5
BATCH = 4


class Activations(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 8)

    def forward(self, x, y):
        h = self.fc(x)
        parts = [
            F.relu6(h * 4), F.hardtanh(h, -0.5, 0.5), F.silu(h),
            F.hardswish(h * 3), F.hardsigmoid(h * 3), F.leaky_relu(h, 0.2),
            F.elu(h), F.softplus(h), torch.clamp(h, min=-0.3, max=0.4),
            torch.clamp(h, min=-0.1), h.pow(2), torch.abs(h),
            torch.rsqrt(h.abs() + 1), torch.erf(h), F.gelu(h),
            F.gelu(h, approximate="tanh"), torch.sin(h) * torch.cos(h),
        ]
        features = torch.cat(parts, dim=1)
        loss = F.mse_loss(features.mean(1), y)
        return features, loss


class Pooling(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 6, 3, padding=1, groups=2)
        self.weight = nn.Parameter(torch.randn(65, 5) * 0.1)
        self.bias = nn.Parameter(torch.randn(5) * 0.1)

    def forward(self, images, labels):
        h = torch.tanh(self.conv(images))  # [N, 6, 10, 10]
        a = F.adaptive_avg_pool2d(h, (3, 4)).flatten(1)  # bins overlap
        b = F.adaptive_avg_pool2d(h, 5).mean(dim=(2, 3))
        c = F.adaptive_max_pool2d(h, (2, 5)).amax(dim=(2, 3))
        d = F.adaptive_avg_pool2d(h, 1).flatten(1)
        e = F.adaptive_avg_pool1d(h.flatten(2), 20).mean(2)  # 100 / 20
        features = torch.cat([a[:, :42], b, c, d, e[:, :5]], dim=1)  # [N, 65]
        logits = torch.addmm(self.bias, features, self.weight,
                             beta=0.5, alpha=2.0)
        return F.nll_loss(F.log_softmax(logits, dim=1), labels)


class Indexing(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(11, 8)
        self.proj = nn.Linear(8, 8)
        self.head = nn.Linear(8, 11)
        self.register_buffer("picks", torch.tensor([0, 2, 2, 5]))

    def forward(self, tokens, targets):
        T = tokens.size(1)
        h = self.embed(tokens)  # [N, T, 8]
        q = self.proj(h)
        scores = torch.matmul(q, h.transpose(1, 2)) / 3.0
        causal = torch.ones(T, T).tril()
        scores = scores.masked_fill(causal == 0, float("-inf"))
        scores = scores + torch.full((T, T), -1e4).triu(1)
        h = torch.softmax(scores, dim=-1) @ h
        last = h.select(1, -1)  # [N, 8]
        picked = h[:, self.picks]  # [N, 4, 8]
        chosen = torch.index_select(h, 2, self.picks)  # [N, T, 4]
        gate = torch.where(h > 0, h, 0.1)
        gate = torch.maximum(gate, torch.zeros_like(gate) - 0.05)
        ext = last.unsqueeze(1).expand(-1, T, -1)  # [N, T, 8]
        h = gate + ext * 0.5 + picked.sum(1, keepdim=True)
        h = h + chosen.amax(2, keepdim=True) + chosen.max(2)[0].unsqueeze(2)
        both = torch.stack([h, h.squeeze(0) if h.size(0) == 1 else h], 0)
        h = both.mean(0) * (tokens > 3).to(torch.float32).unsqueeze(2)
        h = h + tokens.unsqueeze(2).type_as(h) * 0.01
        logits = self.head(h).transpose(1, 2)  # [N, C, T]
        return F.cross_entropy(logits, targets), logits.argmax(1)


class Promotion(nn.Module):
    def forward(self, x, tokens):
        scale = x.size(-1) ** -0.5
        width = tokens.size(1) & 6
        c = x > 0
        counts = tokens + 1  # int64
        h = x * 2
        h.add_(1).relu_()
        return (counts ** 0.5, 2.5 ** tokens, torch.where(c, 1, 0),
                torch.where(tokens > 3, counts, 1.5), counts / 2,
                counts / tokens.clamp(min=1), torch.logical_and(x, x - 0.5),
                torch.rsqrt(counts), F.softplus(x * 3, threshold=1.0),
                x.argmax(keepdim=True), F.adaptive_max_pool1d(x, 2),
                x.sum().squeeze(0), h, x * scale + width)


class Dropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        return F.dropout(self.fc(x), 0.5, training=True).sum()


def batches(name, n):
    g = torch.Generator().manual_seed(7)
    if name == "activations":
        return {"x": torch.randn(n, 6, generator=g),
                "y": torch.randn(n, generator=g)}
    if name == "pooling":
        return {"images": torch.randn(n, 4, 10, 10, generator=g),
                "labels": torch.randint(0, 5, (n,), generator=g)}
    if name == "promotion":
        return {"x": torch.randn(n, 6, generator=g),
                "tokens": torch.randint(0, 11, (n, 6), generator=g)}
    return {"tokens": torch.randint(0, 11, (n, 6), generator=g),
            "targets": torch.randint(0, 11, (n, 6), generator=g)}


def loss_of(outputs):
    if isinstance(outputs, tuple):
        return outputs[1] if outputs[1].dim() == 0 else outputs[0]
    return outputs


def save(module, example, out, name):
    torch.jit.script(copy.deepcopy(module)).save(
        os.path.join(out, name + "_scripted.pt"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(copy.deepcopy(module), example,
                                 check_trace=False)
    traced.save(os.path.join(out, name + "_traced.pt"))


def write(out, name, module, train=True):
    folder = os.path.join(out, name)
    os.makedirs(os.path.join(folder, "train"), exist_ok=True)
    data = batches(name, BATCH * STEPS)
    first = {k: v[:BATCH] for k, v in data.items()}
    save(module, tuple(first.values()), out, name)
    for k, v in first.items():
        np.save(os.path.join(folder, k + ".npy"), v.numpy())
    for k, v in data.items():
        np.save(os.path.join(folder, "train", k + ".npy"), v.numpy())
    with torch.no_grad():
        outputs = module(*first.values())
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    for i, o in enumerate(outputs):
        np.save(os.path.join(folder, "output%d.npy" % i), o.numpy())
    if not train:
        return
    # PyTorch's training, in float64 from the same weights.
    reference = copy.deepcopy(module).double()
    optimizer = torch.optim.SGD(reference.parameters(), lr=0.05,
                                momentum=0.9)
    losses = []
    for step in range(STEPS):
        batch = [v[step * BATCH:(step + 1) * BATCH] for v in data.values()]
        batch = [b.double() if b.is_floating_point() else b for b in batch]
        optimizer.zero_grad()
        loss = loss_of(reference(*batch))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    np.save(os.path.join(folder, "losses.npy"), np.array(losses))


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    write(out, "activations", Activations())
    write(out, "pooling", Pooling())
    write(out, "indexing", Indexing())
    write(out, "promotion", Promotion(), train=False)
    x = torch.randn(2, 6)
    save(Dropout(), (x,), out, "dropout")


if __name__ == "__main__":
    main(sys.argv[1])
