"""Holds the eval losses of a compiled training run against PyTorch's.

Usage: check_eval.py LABEL LOG.jsonl REFDIR [--rtol R]

REFDIR is a reference run of references.py with --eval-data-dir (its
eval_losses.npy: (step, eval loss) rows, in float64). Checks that the log has
an eval_loss exactly at the reference's steps, each within R (default 1e-4;
more where the trajectory amplifies rounding: tolerance.py) relative of
PyTorch's. Prints one line with the figures, then
OK or FAIL (exit 1).
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
    parser.add_argument("log")
    parser.add_argument("ref")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args(argv[1:])

    with open(args.log) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    got = {s["step"]: s["eval_loss"] for s in steps if "eval_loss" in s}
    want = {int(k): float(v) for k, v in
            np.load(os.path.join(args.ref, "eval_losses.npy"))}
    if sorted(got) != sorted(want):
        print(f"{args.label}: FAIL: eval_loss at steps {sorted(got)}, "
              f"PyTorch's at {sorted(want)}")
        return 1
    rel = {k: abs(got[k] - want[k]) / max(abs(want[k]), 1e-12) for k in want}
    worst = max(rel, key=rel.get)
    spread = (tolerance.load(args.ref) or {}).get("eval_loss")
    line = (f"{args.label}: {len(want)} evaluations (steps "
            f"{', '.join(str(k) for k in sorted(want))}), worst relative "
            f"eval-loss difference {rel[worst]:.2e} (step {worst}; "
            f"{tolerance.describe(args.rtol, spread)})")
    print(line)
    tolerance.record(line)
    if rel[worst] > tolerance.bound(args.rtol, spread):
        print(f"{args.label}: step {worst}: eval_loss {got[worst]!r}, "
              f"PyTorch {want[worst]!r}")
        print("FAIL")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
