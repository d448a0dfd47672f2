"""Holds one compiled training run against PyTorch's reference.

Usage: check_run.py LABEL LOG.jsonl REFDIR [--steps N] [--rtol R]
                    [--plan PLAN.json]

Checks that the log holds steps 1..N in order (N defaults to the
reference's step count), that each step's loss is within R (default 1e-4;
more where the trajectory amplifies rounding: tolerance.py) relative of the
reference's (references.py's float64 run) and its learning rate within 1e-6
relative (so
a schedule or --lr that did not take effect is named as such), and, with
--plan, that every step's measured arena high-water mark equals plan.json's
planned arena. Prints one line with the figures, then OK or FAIL (exit 1).
"""
import argparse
import json
import os
import sys

import numpy as np

import tolerance


def relative(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    return np.abs(got - want) / np.maximum(np.abs(want), 1e-12)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("log")
    parser.add_argument("ref")
    parser.add_argument("--steps", type=int)
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--plan")
    args = parser.parse_args(argv[1:])

    with open(args.log) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    want_loss = np.load(os.path.join(args.ref, "losses.npy"))
    want_lr = np.load(os.path.join(args.ref, "lrs.npy"))
    n = args.steps if args.steps is not None else len(want_loss)
    problems = []
    numbers = [s.get("step") for s in steps]
    if numbers != list(range(1, n + 1)):
        print(f"{args.label}: FAIL: the log holds steps {numbers}, "
              f"not 1..{n}")
        return 1
    if n > len(want_loss):
        print(f"{args.label}: FAIL: the reference has only {len(want_loss)} "
              f"steps")
        return 1
    loss_rel = relative([s["loss"] for s in steps], want_loss[:n])
    lr_rel = relative([s["lr"] for s in steps], want_lr[:n])
    worst = int(np.argmax(loss_rel))
    spread = (tolerance.load(args.ref) or {}).get("loss")
    line = (f"{args.label}: {n} steps, worst relative loss difference "
            f"{loss_rel.max():.2e} (step {worst + 1}; "
            f"{tolerance.describe(args.rtol, spread)}), lr "
            f"{'OK' if lr_rel.max() <= 1e-6 else 'DIFFERS'}")
    if loss_rel.max() > tolerance.bound(args.rtol, spread):
        problems.append(f"step {worst + 1}: loss {steps[worst]['loss']!r}, "
                        f"PyTorch {want_loss[worst]!r}")
    if lr_rel.max() > 1e-6:
        k = int(np.argmax(lr_rel))
        problems.append(f"step {k + 1}: lr {steps[k]['lr']!r}, PyTorch "
                        f"{want_lr[k]!r}")
    if args.plan:
        with open(args.plan) as f:
            memory = json.load(f)["ranks"][0]["memory_bytes"]
        planned = memory["arena"]
        measured = {s["arena_high_water_bytes"] for s in steps}
        line += f", arena planned {planned} bytes, measured " + \
            ", ".join(str(m) for m in sorted(measured))
        if measured != {planned}:
            problems.append("the measured arena high-water mark is not the "
                            "planned arena")
        # The whole footprint: the arena plus every tensor buffer.
        peaks = {s["memory_peak_bytes"] for s in steps}
        line += f", peak planned {memory['peak']} bytes, measured " + \
            ", ".join(str(m) for m in sorted(peaks))
        if peaks != {memory["peak"]}:
            problems.append("the measured peak is not plan.json's peak")
    print(line)
    tolerance.record(line)
    for p in problems:
        print(f"{args.label}: {p}")
    print("OK" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
