#!/usr/bin/python3
"""Exports the GPT example (tokens [B, 16] int64, targets [B, 16] int64 ->
logits [B, 16, 64], loss []) with PyTorch's reference outputs, and with
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
from model import GPT, GPTConfig  # noqa: E402

CONFIG = GPTConfig(vocab_size=64, block_size=16, n_layer=8, n_head=8,
                   n_embd=32, dropout=0.0)


def _pad_targets(targets, pads=None):
    """Marks the last pads[i] targets of sample i as not counted (-1); by
    default pads[i] = i mod 3, as in the export's reference data."""
    for i in range(targets.shape[0]):
        pad = int(pads[i]) if pads is not None else i % 3
        if pad:
            targets[i, -pad:] = -1
    return targets


def make_inputs(batch, generator):
    # Next-token prediction on a random stream; the last positions of some
    # samples are padding (target -1) that the loss skips.
    seq = torch.randint(0, CONFIG.vocab_size, (batch, CONFIG.block_size + 1),
                        generator=generator)
    tokens = seq[:, :-1].contiguous()
    targets = _pad_targets(seq[:, 1:].contiguous())
    return [tokens, targets]


def make_train_data(samples, generator):
    """A learnable stream: a Markov chain in which each token is followed by
    its first successor (probability 0.75), its second (0.2) or any token
    (0.05), the successors being a random table. The last 0 to 3 targets of
    each sample (at random) are -1, so micro-batches count different numbers
    of tokens."""
    v, t = CONFIG.vocab_size, CONFIG.block_size
    successors = torch.randint(0, v, (v, 2), generator=generator)
    seq = torch.empty(samples, t + 1, dtype=torch.long)
    seq[:, 0] = torch.randint(0, v, (samples,), generator=generator)
    for i in range(1, t + 1):
        u = torch.rand(samples, generator=generator)
        anywhere = torch.randint(0, v, (samples,), generator=generator)
        prev = seq[:, i - 1]
        seq[:, i] = torch.where(
            u < 0.75, successors[prev, 0],
            torch.where(u < 0.95, successors[prev, 1], anywhere))
    tokens = seq[:, :-1].contiguous()
    pads = torch.randint(0, 4, (samples,), generator=generator)
    targets = _pad_targets(seq[:, 1:].contiguous(), pads)
    return [tokens, targets]


EXAMPLE = export.Example(
    "gpt", lambda: GPT(CONFIG), make_inputs, ["tokens", "targets"],
    ["logits", "loss"], default_batch=4)
#: The input the loss's targets come from, and the target it does not count.
LABELS = "targets"
IGNORE_INDEX = -1
#: Hyperparameters of --reference-training, per optimizer.
REFERENCE_TRAINING = {
    "sgd": dict(lr=0.1, momentum=0.9),
    "adamw": dict(lr=3e-3),
}

if __name__ == "__main__":
    import train_reference  # noqa: E402

    train_reference.example_main(sys.modules[__name__])
