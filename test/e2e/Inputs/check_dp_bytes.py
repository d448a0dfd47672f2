"""Derives a data-parallel step's communication and model-state bytes from
../shared/REFERENCE.md, term by term, and holds the run and the plan to them.

Usage: check_dp_bytes.py LABEL --example NAME --dp N --zero Z --plan PLAN.json
                         --ranks DIR

The parameters come from PyTorch (the example's module, its parameters()),
not from dtc. fp32 AdamW. A parameter is optimized in blocks under ZeRO 1
and 2 when one of its dimensions divides by N (dtc's stated policy; the
others stay whole and are all-reduced). Per rank and step (REFERENCE.md,
ring algorithms):
- ZeRO 0: all-reduce of every gradient, 2(N-1)/N * psi * 4 bytes;
- ZeRO 1, 2: reduce-scatter of the gradients and all-gather of the updated
  parameters held in blocks, (N-1)/N * psi_split * 4 bytes each, and
  all-reduce of the rest, 2(N-1)/N * psi_rest * 4 bytes;
- ZeRO 3: per micro-batch, all-gathers of the blocks for the forward and
  again for the backward and reduce-scatters of the gradients: between 2
  and 3 times (N-1)/N * psi_split * 4 (1.5x ZeRO 0's at most: the backward
  gathers only the parameters it reads), plus the rest all-reduced;
- plus the loss sum and count (and, under ZeRO 1 and 2, the global norm's
  partial sum of squares): scalars, each 0 to 2 elements a rank.
A ring cuts a tensor that N does not divide into chunks one element apart,
so each all-reduce may differ from 2(N-1)/N of it by up to 2 elements: the
check allows that per all-reduce, and nothing else.
Model states per rank (ZeRO paper, fp32 AdamW: 4 + 4 + 8 bytes a
parameter): parameters 4 psi, ZeRO 3 4 psi_split / N + 4 psi_rest;
gradients 4 psi, ZeRO 2 and 3 4 psi_split / N + 4 psi_rest; optimizer
state 8 psi, ZeRO 1 to 3 8 psi_split / N + 8 psi_rest.
Prints the figures, then OK or FAIL (exit 1).
"""
import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "examples", "common"))
import train_reference  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("--example", required=True)
    parser.add_argument("--dp", type=int, required=True)
    parser.add_argument("--zero", type=int, required=True)
    parser.add_argument("--plan", required=True)
    parser.add_argument("--ranks", required=True)
    parser.add_argument("--micro-batches", type=int, default=1,
                        help="micro-batches per rank and step (ZeRO 3)")
    args = parser.parse_args(argv[1:])
    n, zero = args.dp, args.zero

    spec = train_reference.load_example(args.example)
    model = spec.EXAMPLE.build_model()
    shapes = [tuple(p.shape) for p in model.parameters()]
    numel = [int(__import__("math").prod(s)) for s in shapes]
    psi = sum(numel)
    split = [k for s, k in zip(shapes, numel)
             if zero >= 1 and any(d >= n and d % n == 0 for d in s)]
    # (ZeRO 1 and 2 add the global norm's partial sum.)
    psi_split = sum(split)
    psi_rest = psi - psi_split
    all_reduces = len(shapes) - len(split) + 2 + (1 if zero >= 1 else 0)

    rest = 2 * (n - 1) / n * psi_rest * 4
    if zero == 0:
        formula = 2 * (n - 1) / n * psi * 4
        low = high = formula
    elif zero < 3:
        formula = 2 * (n - 1) / n * psi_split * 4 + rest
        low = high = formula
    else:
        # Per micro-batch: the blocks all-gathered for the forward and
        # reduce-scattered as gradients (2 (n-1)/n psi_split), and gathered
        # again for the backward: all of them at most (REFERENCE.md's 1.5x
        # of ZeRO 0's 2 psi), fewer where the backward reads fewer (a bias,
        # or the first layer's weight: dtc gathers what it reads).
        once = (n - 1) / n * psi_split * 4 * args.micro_batches
        low, high = 2 * once + rest, 3 * once + rest
        formula = high
    slack = all_reduces * 2 * 8  # up to 2 elements (8 bytes at most) each

    problems = []
    reports = sorted(glob.glob(os.path.join(args.ranks, "rank-*.json")))
    sent = []
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        got = report["comm_bytes_per_step"].get("dp", 0)
        sent.append(got)
        if got < low - slack or got > high + slack:
            problems.append(f"rank {report['rank']} sent {got} bytes; "
                            f"REFERENCE.md gives {low:.0f}..{high:.0f} "
                            f"(+-{slack})")
    if len(reports) != n:
        problems.append(f"{len(reports)} rank reports for dp={n}")

    with open(args.plan) as f:
        plan = json.load(f)
    want = {
        "parameters": 4 * psi if zero < 3 else 4 * psi_split // n + 4 * psi_rest,
        "gradients": 4 * psi if zero < 2 else 4 * psi_split // n + 4 * psi_rest,
        "optimizer_state":
            8 * psi if zero < 1 else 8 * psi_split // n + 8 * psi_rest,
    }
    for rank in plan["ranks"]:
        for key, value in want.items():
            got = rank["memory_bytes"][key]
            if got != value:
                problems.append(f"plan rank {rank['rank']}: {key} {got} "
                                f"bytes, the ZeRO formula {value}")

    print(f"{args.label}: psi {psi} ({psi_split} in blocks), bytes per rank "
          f"{min(sent, default=0)}..{max(sent, default=0)} against "
          f"{low:.0f}..{high:.0f} +- {slack}; model states as the ZeRO "
          f"formulas "
          f"({want['parameters']}, {want['gradients']}, "
          f"{want['optimizer_state']})")
    for p in problems:
        print(f"  {p}")
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
