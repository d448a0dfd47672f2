"""Writes a copy of .npy data whose samples, taken in order by one rank in
micro-batches of DP x MICRO, make the micro-batches that DP data-parallel
ranks make together.

Usage: regroup_batches.py OUT_DIR --global-batch G --dp DP --micro MICRO
                          IN.npy...

Data-parallel rank r takes samples [r L, (r + 1) L) of each global batch of
G (L = G / DP) and its micro-batch k is [r L + k MICRO, r L + (k + 1) MICRO).
Batch statistics (synchronized batch norms) are taken over micro-batch k of
every rank together; one rank takes them over its own micro-batch. So that a
one-rank run of the same model computes the same statistics, its micro-batch
k (DP x MICRO samples) must hold those samples: this writes each input with
every global batch regrouped that way (OUT_DIR/NAME.npy).
"""
import argparse
import os
import sys

import numpy as np


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--global-batch", type=int, required=True)
    parser.add_argument("--dp", type=int, required=True)
    parser.add_argument("--micro", type=int, required=True)
    args = parser.parse_args(argv[1:])
    g, dp, micro = args.global_batch, args.dp, args.micro
    local = g // dp
    order = []
    for k in range(local // micro):
        for r in range(dp):
            start = r * local + k * micro
            order += range(start, start + micro)
    os.makedirs(args.out, exist_ok=True)
    for path in args.inputs:
        data = np.load(path)
        if data.shape[0] % g:
            sys.exit(f"{path}: {data.shape[0]} samples are not whole global "
                     f"batches of {g}")
        index = np.concatenate([b * g + np.array(order, dtype=np.int64)
                                for b in range(data.shape[0] // g)])
        np.save(os.path.join(args.out, os.path.basename(path)), data[index])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
