"""Checks that a run's gradient reductions ran during its backward pass.

Usage: check_overlap.py STEPS ON_DIR OFF_DIR TRACE.rank0.json [TRACE.rankN.json ...]

ON_DIR and OFF_DIR are the --rank-report folders of the same program
compiled with communication scheduling on and off; the traces are the
scheduled run's (train --trace, STEPS steps). Prints, from the rank reports, the seconds
a step spent blocked in the dp group's collectives with scheduling on and
off (the mean over ranks; a synchronous collective blocks for its whole
time, an asynchronous one for its wait), both figures and their ratio: these
are timings of a shared machine, printed, never asserted. Then, from each
trace, the asynchronous all-reduces (track 3, "collectives in flight") that
carry gradients (their label names a gradient or a bucket), how many
kernels (track 0) ran while one was in flight, and how many of those ran
before their step's last gradient reduction started (each step starts the
same reductions in the same order): kernels that were still
computing gradients, i.e. the backward pass. Fails unless every rank had
gradient reductions in flight, with backward kernels running under them.
Prints OK or FAIL (exit 1).
"""
import glob
import json
import os
import statistics
import sys


def blocked(folder):
    values = []
    for path in sorted(glob.glob(os.path.join(folder, "rank-*.json"))):
        with open(path) as f:
            values.append(json.load(f)["comm_wait_s_per_step"].get("dp", 0.0))
    return statistics.mean(values) if values else float("nan")


def main(argv):
    steps = int(argv[1])
    argv = argv[1:]
    on, off = blocked(argv[1]), blocked(argv[2])
    ratio = on / off if off > 0 else float("nan")
    print(f"blocked in dp collectives per step: scheduling on {on * 1e3:.3f} "
          f"ms, off {off * 1e3:.3f} ms (on/off {ratio:.2f})")
    ok = True
    for path in argv[3:]:
        with open(path) as f:
            events = [e for e in json.load(f)["traceEvents"]
                      if e.get("ph") == "X"]
        kernels = [e for e in events if e["tid"] == 0]
        reductions = [e for e in events if e["tid"] == 3 and
                      ("gradient" in e["name"] or "bucket" in e["name"])]
        # The reductions of each step: the same number per step, in order.
        reductions.sort(key=lambda e: e["ts"])
        per_step = len(reductions) // steps if steps else 0
        under, backward = 0, 0
        for i, r in enumerate(reductions):
            step = reductions[i // per_step * per_step:
                              (i // per_step + 1) * per_step] if per_step else []
            last = max((e["ts"] for e in step), default=r["ts"])
            begin, end = r["ts"], r["ts"] + r["dur"]
            for k in kernels:
                if k["ts"] >= begin and k["ts"] + k["dur"] <= end:
                    under += 1
                    if k["ts"] < last:
                        backward += 1
        name = os.path.basename(path)
        print(f"{name}: {len(reductions)} gradient reductions in flight, "
              f"{under} kernels ran under one, {backward} of them before "
              f"the step's last reduction started")
        if not reductions or backward == 0:
            ok = False
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
