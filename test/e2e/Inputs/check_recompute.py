"""Holds compiled runs with --recompute against the run without it.

Usage: check_recompute.py LABEL DIR MODE... [--rtol R] [--min-full-cut F]

DIR/MODE/ holds each compile's plan.json and log.jsonl (DIR/none/ is the
baseline). Checks that every mode's losses are within R (default 1e-5)
relative of none's at every step, that the runtime measured exactly the
planned arena and whole peak, that full recompute cuts the planned
activation memory (the micro-step's arena) by at least F (default 0; the
measured arena equals the planned one, so the measured cut is the same), and,
for auto, that the measured peak is within DIR/auto/limit_bytes and that it
recomputes fewer FLOPs than full. Prints one line per mode, then OK or FAIL.
"""
import argparse
import json
import os
import sys

import tolerance


def load(path):
    with open(path) as f:
        return json.load(f)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("dir")
    parser.add_argument("modes", nargs="+")
    parser.add_argument("--rtol", type=float, default=1e-5)
    parser.add_argument("--min-full-cut", type=float, default=0.0)
    args = parser.parse_args(argv[1:])

    runs = {}
    for mode in ["none"] + args.modes:
        d = os.path.join(args.dir, mode)
        with open(os.path.join(d, "log.jsonl")) as f:
            log = [json.loads(line) for line in f if line.strip()]
        runs[mode] = (load(os.path.join(d, "plan.json")), log)
    problems = []
    base_plan, base_log = runs["none"]
    base_act = base_plan["ranks"][0]["memory_bytes"]["activations"]
    for mode in ["none"] + args.modes:
        plan, log = runs[mode]
        memory = plan["ranks"][0]["memory_bytes"]
        recompute = plan["recompute"]
        if recompute["mode"] != mode:
            problems.append(f"{mode}: plan.json says mode {recompute['mode']}")
        if len(log) != len(base_log):
            problems.append(f"{mode}: {len(log)} steps, none has "
                            f"{len(base_log)}")
        worst = max(abs(a["loss"] - b["loss"]) / max(abs(b["loss"]), 1e-12)
                    for a, b in zip(log, base_log))
        arenas = {s["arena_high_water_bytes"] for s in log}
        peaks = {s["memory_peak_bytes"] for s in log}
        cut = 1 - memory["activations"] / base_act
        tolerance.record(f"{args.label} {mode}: worst relative loss "
                         f"difference {worst:.2e} (bound {args.rtol:g})")
        print(f"{args.label} {mode}: {len(log)} steps, worst relative loss "
              f"difference {worst:.2e}; activations {memory['activations']} "
              f"bytes ({cut:.0%} below none); arena planned "
              f"{memory['arena']}, measured "
              f"{','.join(map(str, sorted(arenas)))}; peak planned "
              f"{memory['peak']}, measured "
              f"{','.join(map(str, sorted(peaks)))}; recomputed "
              f"{recompute['recomputed_ops']:.0f} ops, "
              f"{recompute['recomputed_flops']:.4g} FLOPs")
        if worst > args.rtol:
            problems.append(f"{mode}: losses differ from none by {worst:.2e}")
        if arenas != {memory["arena"]} or peaks != {memory["peak"]}:
            problems.append(f"{mode}: the runtime measured other figures "
                            f"than the plan")
        if mode == "full" and cut < args.min_full_cut:
            problems.append(f"full: activations only {cut:.0%} below none")
        if mode == "auto":
            with open(os.path.join(args.dir, "auto", "limit_bytes")) as f:
                limit = int(f.read())
            print(f"{args.label} auto: limit {limit} bytes")
            if max(peaks) > limit:
                problems.append(f"auto: measured peak {max(peaks)} over the "
                                f"limit {limit}")
            full = runs["full"][0]["recompute"]["recomputed_flops"]
            if not recompute["recomputed_flops"] < full:
                problems.append("auto: recomputes no fewer FLOPs than full")
    for p in problems:
        print(f"{args.label}: {p}")
    print("OK" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
