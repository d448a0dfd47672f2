"""Checks a training log on a repeated batch: every loss and gradient norm
finite, and the loss of the last step below the first's where both took the
same batch (steps 1 and N with N - 1 a multiple of PERIOD, the number of
global batches the data holds). Prints the figures, then OK or FAIL.

Usage: check_decreasing.py LABEL LOG.jsonl --period P
"""
import argparse
import json
import math
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("log")
    parser.add_argument("--period", type=int, required=True)
    args = parser.parse_args()
    with open(args.log) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    problems = []
    for s in steps:
        if not (math.isfinite(s["loss"]) and math.isfinite(s["grad_norm"])):
            problems.append("step %d: loss %r, grad_norm %r" %
                            (s["step"], s["loss"], s["grad_norm"]))
    last = max((s for s in steps if (s["step"] - 1) % args.period == 0),
               key=lambda s: s["step"])
    first = steps[0]
    if last is first:
        problems.append("no later step took step 1's batch")
    elif not last["loss"] < first["loss"]:
        problems.append("step %d's loss %r is not below step 1's %r" %
                        (last["step"], last["loss"], first["loss"]))
    print("%s: %d steps, loss %.6g at step 1, %.6g at step %d (same batch)" %
          (args.label, len(steps), first["loss"], last["loss"], last["step"]))
    for p in problems:
        print("  " + p)
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
