#!/usr/bin/python3
"""Exports the GPT example (tokens [B, 16] int64, targets [B, 16] int64 ->
logits [B, 16, 64], loss []) with PyTorch's reference outputs, and with
--train-data and --reference-training its training data and PyTorch's
reference training (../common/train_reference.py). --vocab, --seq, --hidden,
--heads and --layers change the model's size (the defaults are the tiny
example above; test/bench/ exports a larger one). Run with --help for the
options."""

import argparse
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "common"))

import torch  # noqa: E402

import export  # noqa: E402
from model import GPT, GPTConfig  # noqa: E402

#: The example's sizes; --vocab, --seq, --hidden, --heads and --layers (or
#: `configure`) replace them.
DEFAULT_SIZES = dict(vocab=64, seq=16, hidden=32, heads=8, layers=8)


def configure(gelu="none", **sizes):
    """Sets the model's sizes (CONFIG, which the model, the export's data and
    the training data all read) from DEFAULT_SIZES updated with `sizes`, and
    its GELU ("none": exact, or "tanh"); raises ValueError on sizes the GPT
    cannot take."""
    global CONFIG
    if gelu not in ("none", "tanh"):
        raise ValueError("--gelu must be none or tanh, got %r" % gelu)
    unknown = set(sizes) - set(DEFAULT_SIZES)
    if unknown:
        raise ValueError("unknown size %s (one of %s)" % (
            ", ".join(sorted(unknown)), ", ".join(DEFAULT_SIZES)))
    sizes = dict(DEFAULT_SIZES, **sizes)
    for name, value in sizes.items():
        if not isinstance(value, int) or value < 1:
            raise ValueError("--%s must be a positive integer, got %r" %
                             (name, value))
    if sizes["hidden"] % sizes["heads"]:
        raise ValueError("--heads %d does not divide --hidden %d" %
                         (sizes["heads"], sizes["hidden"]))
    CONFIG = GPTConfig(vocab_size=sizes["vocab"], block_size=sizes["seq"],
                       n_layer=sizes["layers"], n_head=sizes["heads"],
                       n_embd=sizes["hidden"], dropout=0.0, gelu=gelu)


CONFIG = None
configure()


def _size_parser():
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    group = parser.add_argument_group(
        "model size (the defaults are the example's)")
    helps = dict(vocab="vocabulary size", seq="context length (tokens per "
                 "sample)", hidden="hidden size", heads="attention heads "
                 "(dividing --hidden)", layers="transformer blocks")
    for name, default in DEFAULT_SIZES.items():
        group.add_argument("--" + name, type=int, default=default,
                           metavar="N", help="%s (default %d)" %
                           (helps[name], default))
    group.add_argument("--gelu", choices=["none", "tanh"], default="none",
                       help="the MLP's GELU: exact (none, the default) or "
                       "tanh-approximated (GPT-2's)")
    return parser


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


def main(argv=None):
    """Reads the size options, then hands the rest to the shared export and
    training-data options (train_reference.example_main)."""
    import train_reference

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _size_parser()
    sizes, rest = parser.parse_known_args(argv)
    try:
        configure(**vars(sizes))
    except ValueError as e:
        sys.exit("%s: error: %s" % (os.path.basename(sys.argv[0]), e))
    train_reference.example_main(sys.modules[__name__], rest)
    if "-h" in rest or "--help" in rest:
        print()
        print(parser.format_help().split("\n", 2)[2].strip("\n"))


if __name__ == "__main__":
    main()
