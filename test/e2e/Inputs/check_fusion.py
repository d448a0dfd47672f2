"""Holds a fused compile against its unfused baseline.

Usage: check_fusion.py LABEL FUSED_DIR UNFUSED_DIR [--max-ratio R]
                       [--rtol T]

Reads plan.json's "kernels" of both compiles: both must report the same
unfused count ("before_fusion"), the unfused compile must run that many
("after_fusion" == "before_fusion"), and the fused one at most R (default
1) times as many. Then holds the loss trajectories (log.jsonl in each
folder) within T (default 1e-5) relative of each other. Prints one line
with the figures, then OK or FAIL (exit 1).
"""
import argparse
import json
import os
import sys

import numpy as np

import tolerance


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("fused")
    parser.add_argument("unfused")
    parser.add_argument("--max-ratio", type=float, default=1.0)
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args(argv[1:])

    def load(folder):
        with open(os.path.join(folder, "plan.json")) as f:
            kernels = json.load(f)["kernels"]
        with open(os.path.join(folder, "log.jsonl")) as f:
            losses = [json.loads(line)["loss"] for line in f if line.strip()]
        return kernels, np.asarray(losses, dtype=np.float64)

    fused, fused_loss = load(args.fused)
    unfused, unfused_loss = load(args.unfused)
    problems = []
    before, after = fused["before_fusion"], fused["after_fusion"]
    if unfused["before_fusion"] != before:
        problems.append(f"unfused baseline differs: {unfused['before_fusion']}"
                        f" vs {before}")
    if unfused["after_fusion"] != unfused["before_fusion"]:
        problems.append("--no-fuse still fused: "
                        f"{unfused['after_fusion']} of "
                        f"{unfused['before_fusion']} kernels")
    ratio = after / before if before else float("inf")
    if ratio > args.max_ratio:
        problems.append(f"{after} kernels of {before} is more than "
                        f"{args.max_ratio} of the baseline")
    if len(fused_loss) == 0 or len(fused_loss) != len(unfused_loss):
        problems.append(f"{len(fused_loss)} fused steps, "
                        f"{len(unfused_loss)} unfused")
        worst = float("inf")
    else:
        rel = np.abs(fused_loss - unfused_loss) / np.maximum(
            np.abs(unfused_loss), 1e-12)
        worst = float(rel.max())
        if not worst <= args.rtol:
            problems.append(f"losses differ by {worst:.2e} relative")
    line = (f"{args.label}: kernels {after} fused of {before} unfused "
            f"(ratio {'%.2f' % ratio}, at most {args.max_ratio}), "
            f"{len(fused_loss)} steps, worst relative loss difference "
            f"{worst:.2e}")
    print(line)
    tolerance.record(line)
    for p in problems:
        print(f"FAIL: {p}")
    if problems:
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
