"""Holds one training run's losses against another's (the CPU target's).

Usage: compare_runs.py LABEL WANT.jsonl GOT.jsonl --rtol R [--steps N]

Every step of GOT must be in WANT, GOT must hold N steps (default: as many
as WANT), and each loss must be within R relative of WANT's at the same
step. Prints one line with the worst difference, then OK or FAIL (exit 1).
"""
import argparse
import json
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("want")
    parser.add_argument("got")
    parser.add_argument("--rtol", type=float, required=True)
    parser.add_argument("--steps", type=int)
    args = parser.parse_args()
    want = {l["step"]: l["loss"] for l in map(json.loads, open(args.want))}
    got = {l["step"]: l["loss"] for l in map(json.loads, open(args.got))}
    steps = args.steps if args.steps is not None else len(want)
    problems = []
    if len(got) != steps:
        problems.append("%d steps, expected %d" % (len(got), steps))
    worst = 0.0
    for step, loss in sorted(got.items()):
        if step not in want:
            problems.append("step %d is not in %s" % (step, args.want))
            continue
        worst = max(worst, abs(loss - want[step]) / max(abs(want[step]),
                                                         1e-12))
    if worst > args.rtol:
        problems.append("a loss differs by %.3g relative (tolerance %g)" %
                        (worst, args.rtol))
    print("%s: %d steps, worst relative loss difference %.3g (tolerance %g)"
          % (args.label, len(got), worst, args.rtol))
    for p in problems:
        print("  " + p)
    print("FAIL" if problems else "OK")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
