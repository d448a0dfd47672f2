#!/usr/bin/python3
"""Exports the GPT example (tokens [B, 16] int64, targets [B, 16] int64 ->
logits [B, 16, 64], loss []) with PyTorch's reference outputs. Run with
--help for the options."""

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


def make_inputs(batch, generator):
    # Next-token prediction on a random stream; the last positions of some
    # samples are padding (target -1) that the loss skips.
    seq = torch.randint(0, CONFIG.vocab_size, (batch, CONFIG.block_size + 1),
                        generator=generator)
    tokens = seq[:, :-1].contiguous()
    targets = seq[:, 1:].contiguous()
    for i in range(batch):
        pad = i % 3
        if pad:
            targets[i, -pad:] = -1
    return [tokens, targets]


if __name__ == "__main__":
    export.main(export.Example(
        "gpt", lambda: GPT(CONFIG), make_inputs, ["tokens", "targets"],
        ["logits", "loss"], default_batch=4))
