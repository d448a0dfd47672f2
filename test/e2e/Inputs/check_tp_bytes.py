"""Derives the GPT example's tensor-parallel (and, on a dp x tp mesh,
data-parallel) bytes per rank and step from ../shared/REFERENCE.md, term by
term, and holds every rank's counted bytes to them.

Usage: check_tp_bytes.py LABEL --tp T [--dp D] --micro-batch B
                         [--micro-batches M] --ranks DIR

The sizes come from PyTorch's module (its config: l layers, hidden h,
sequence s; its parameters), not from dtc; b is a rank's micro-batch, m
the micro-batches of a step. fp32: 4 bytes a value. Ring volumes per rank
(REFERENCE.md): an all-reduce of S values sends 2(n-1)/n S.

tp, per step:
- Megatron: per layer and micro-batch, two all-reduces of b*s*h values in
  the forward and two in the backward: l * m * 4 * 2(t-1)/t * b*s*h.
  (Attention is split by heads: no other activation crosses the ranks.)
- Vocabulary parallelism (the tied token embedding split by rows), per
  micro-batch: the embedding's output, a partial sum, all-reduced (b*s*h);
  the tied output projection's input gradient likewise (b*s*h); the cross
  entropy over the split vocabulary: the maximum and the sum of
  exponentials in the forward and the sum of the log-probabilities'
  gradient in the backward, b*s values each; and the loss sum, a scalar.
- Terms the formula leaves out, which this model has:
  - the norms' weight and bias gradients: a norm's input gradient is a
    partial sum (a column-parallel backward, or the output projection's),
    reduced once for the residual path; each of the 2l+1 norms' two
    parameter gradients (h values) comes from it partial and is reduced
    on its own, once a micro-batch: m * 2 * (2l+1) * 2(t-1)/t * h;
  - the global gradient norm: a split parameter's sum of squares is a
    partial sum; the step adds them up (in fp64) in the parameters'
    order, reducing a run of split ones once: between 1 and one scalar
    all-reduce per split parameter (6 a layer: c_attn's weight and bias
    and c_fc's by output features, both c_proj weights by input features;
    and the embedding), 4 or 8 bytes each.
dp (a dp x tp mesh, ZeRO 0): each rank all-reduces the gradients it holds,
a 1/t block of each split parameter and every whole one:
2(d-1)/d * (psi_whole + psi_split / t).
A ring cuts a tensor n does not divide into chunks one element apart, so
an all-reduce may differ from 2(n-1)/n of it by up to 2 elements a rank;
the check allows that per all-reduce, and nothing else.
Prints each term, then OK or FAIL (exit 1).
"""
import argparse
import glob
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples", "common"))
import train_reference  # noqa: E402

# Megatron's splits of a GPT-2 block (names as nanoGPT's module has them),
# and the vocabulary-parallel token embedding.
SPLIT = ("attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
         "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight")
EMBEDDING = "transformer.wte.weight"


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("--tp", type=int, required=True)
    parser.add_argument("--dp", type=int, default=1)
    parser.add_argument("--micro-batch", type=int, required=True)
    parser.add_argument("--micro-batches", type=int, default=1)
    parser.add_argument("--ranks", required=True)
    args = parser.parse_args(argv[1:])
    t, d, b, m = args.tp, args.dp, args.micro_batch, args.micro_batches

    model = train_reference.load_example("gpt").EXAMPLE.build_model()
    config = model.config
    l, h, s = config.n_layer, config.n_embd, config.block_size
    params = dict(model.named_parameters())  # (tied wte once)
    split = [n for n in params if n.endswith(SPLIT) or n == EMBEDDING]
    assert len(split) == 6 * l + 1, split
    psi_split = sum(params[n].numel() for n in split)
    psi_whole = sum(p.numel() for p in params.values()) - psi_split

    ring = 2 * (t - 1) / t
    terms = {
        "megatron (4 all-reduces of b*s*h a layer and micro-batch)":
            (l * m * 4 * ring * b * s * h * 4, l * m * 4),
        "vocabulary-parallel embedding output and output projection "
        "input gradient (b*s*h each)":
            (m * 2 * ring * b * s * h * 4, m * 2),
        "vocabulary-parallel cross entropy (3 of b*s, the loss sum)":
            (m * (3 * ring * b * s + ring) * 4, m * 4),
        "norms' weight and bias gradients":
            (m * 2 * (2 * l + 1) * ring * h * 4, m * 2 * (2 * l + 1)),
    }
    tp_bytes = sum(v for v, _ in terms.values())
    tp_slack = sum(n for _, n in terms.values()) * 2 * 4
    # The gradient norm's scalars: 1 to len(split) all-reduces of 4 or 8
    # bytes (the range, not a slack).
    norm_low, norm_high = ring * 4, len(split) * ring * 8
    print(f"{args.label}: tp global gradient norm: {norm_low:.0f}.."
          f"{norm_high:.0f} B in 1..{len(split)}")
    dp_bytes = 2 * (d - 1) / d * (psi_whole + psi_split / t) * 4
    # (every gradient, the loss sum and count)
    dp_slack = (len(params) + 2) * 2 * 4 if d > 1 else 0

    for name, (value, count) in terms.items():
        print(f"{args.label}: tp {name}: {value:.0f} B in {count}")
    problems = []
    reports = sorted(glob.glob(os.path.join(args.ranks, "rank-*.json")))
    if len(reports) != t * d:
        problems.append(f"{len(reports)} rank reports for {d}x{t}")
    sent = {"tp": [], "dp": []}
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        for axis, low, high, slack in (
                ("tp", tp_bytes + norm_low, tp_bytes + norm_high, tp_slack),
                ("dp", dp_bytes, dp_bytes, dp_slack)):
            got = report["comm_bytes_per_step"].get(axis, 0)
            sent[axis].append(got)
            if got < low - slack or got > high + slack:
                problems.append(f"rank {report['rank']} sent {got} bytes over "
                                f"{axis}; REFERENCE.md gives {low:.0f}.."
                                f"{high:.0f} (+-{slack})")
    print(f"{args.label}: tp {min(sent['tp'], default=0)}.."
          f"{max(sent['tp'], default=0)} B against "
          f"{tp_bytes + norm_low:.0f}..{tp_bytes + norm_high:.0f} +- "
          f"{tp_slack}; dp {min(sent['dp'], default=0)}.."
          f"{max(sent['dp'], default=0)} B against {dp_bytes:.0f} +- "
          f"{dp_slack} (psi {psi_whole} whole, {psi_split} split)")
    for p in problems:
        print(f"  {p}")
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
