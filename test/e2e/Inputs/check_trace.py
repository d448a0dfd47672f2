"""Reads the Chrome traces of a run (train --trace) and checks their form.

Usage: check_trace.py LABEL TRACE.json... [--steps N] [--micro M]

Each file must be a Chrome trace (a JSON object with traceEvents) of one
rank: complete events ("ph": "X") with a start and a non-negative duration
on three tracks, 0 the kernels (named by their ONNX node where they have one,
with the op in args), 1 the collectives and point-to-point transfers (dist
ops), 2 the pipeline's forwards and backwards; events of one track do not
overlap. With --micro, every rank's track 2 holds N x 2 M events (a forward
and a backward per micro-batch per step). Prints per rank the counts and
the busiest ops, then OK or FAIL (exit 1).
"""
import argparse
import json
import sys
from collections import Counter


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--micro", type=int)
    args = parser.parse_args(argv[1:])
    problems = []
    for path in args.traces:
        with open(path) as f:
            trace = json.load(f)
        events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
        tracks = {0: [], 1: [], 2: []}
        for e in events:
            if e["dur"] < 0:
                problems.append(f"{path}: {e['name']} lasts {e['dur']} us")
            tracks.setdefault(e["tid"], []).append(e)
        for tid, list_ in tracks.items():
            list_.sort(key=lambda e: e["ts"])
            for a, b in zip(list_, list_[1:]):
                if a["ts"] + a["dur"] > b["ts"] + 1e-3:
                    problems.append(f"{path}: track {tid}: {a['name']} "
                                    f"overlaps {b['name']}")
                    break
        if not tracks[0]:
            problems.append(f"{path}: no kernels")
        if any(not e["args"]["op"].startswith(("dtg.", "func.")) for e in
               tracks[0]):
            problems.append(f"{path}: a non-dtg op on the kernel track")
        if any(not e["args"]["op"].startswith("dist.") for e in tracks[1]):
            problems.append(f"{path}: a non-dist op on the communication "
                            f"track")
        named = sum(1 for e in tracks[0] if e["name"].startswith("/"))
        if named == 0:
            problems.append(f"{path}: no kernel named by an ONNX node")
        if args.micro is not None:
            want = args.steps * 2 * args.micro
            if len(tracks[2]) != want:
                problems.append(f"{path}: {len(tracks[2])} forwards and "
                                f"backwards, {want} expected")
        comm = Counter(e["args"]["op"] for e in tracks[1])
        print(f"{args.label}: {path.rsplit('/', 1)[-1]}: {len(tracks[0])} "
              f"kernels ({named} named by ONNX nodes), "
              f"{len(tracks[1])} transfers and collectives "
              f"({', '.join(f'{k} {v}' for k, v in sorted(comm.items()))}), "
              f"{len(tracks[2])} forwards and backwards")
    for p in problems:
        print(f"  {p}")
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
