"""Reads the Chrome traces of a run (train --trace) and checks their form.

Usage: check_trace.py LABEL TRACE.json... [--steps N] [--micro M]
                      [--schedule S --pp P [--virtual V]]

Each file must be a Chrome trace (a JSON object with traceEvents) of one
rank, its process labelled with its mesh coordinates ("pp 1, dp 0, tp 0"):
complete events ("ph": "X") with a start and a non-negative duration on
three tracks, 0 the kernels (named by their ONNX node where they have one,
with the op in args), 1 the collectives and point-to-point transfers (dist
ops), each named by what it carries, not by its op: a transfer of an
activation or of its gradient by its message and the ONNX node that made
the activation ("stage0.out1@2 /h.3/Add_1"), 2 the pipeline's forwards and
backwards; events of one track do not overlap. With --micro, every rank's
track 2 holds N x 2 M V events (a forward and a backward per micro-batch
and model chunk per step); with --schedule too, each step's events on a
rank are the schedule's order for the rank's stage
(check_pipeline_schedule.py's expected_order, written from the papers).
Prints per rank the counts and the busiest ops, then OK or FAIL (exit 1).
"""
import argparse
import json
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_pipeline_schedule import expected_order  # noqa: E402


def fmt(order):
    return " ".join(u if isinstance(u, str) else
                    f"{u[0]}{u[2]}" + (f".{u[1]}" if u[1] else "")
                    for u in order)


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--micro", type=int)
    parser.add_argument("--schedule")
    parser.add_argument("--pp", type=int, help="the pipeline's stages")
    parser.add_argument("--virtual", type=int, default=1)
    args = parser.parse_args(argv[1:])
    problems = []
    stages = {}
    for path in args.traces:
        with open(path) as f:
            trace = json.load(f)
        labels = [e["args"]["labels"] for e in trace["traceEvents"]
                  if e.get("ph") == "M" and e["name"] == "process_labels"]
        coords = dict(re.findall(r"([a-z]+) ([0-9]+)", labels[0])) \
            if labels else {}
        if "pp" not in coords:
            problems.append(f"{path}: no mesh coordinates in the process "
                            f"labels")
        stages[path] = int(coords.get("pp", 0))
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
        unnamed = Counter(e["name"] for e in tracks[1]
                          if e["name"] == e["args"]["op"])
        if unnamed:
            problems.append(f"{path}: communication named only by its op: "
                            f"{dict(unnamed)}")
        for e in tracks[1]:
            if e["args"]["op"] in ("dist.send", "dist.recv") and \
                    "@" in e["name"] and \
                    not re.fullmatch(r"d?stage[0-9]+\.out[0-9]+@[0-9]+ /.+",
                                     e["name"]):
                problems.append(f"{path}: transfer '{e['name']}' does not "
                                f"name its message and ONNX node")
                break
        named = sum(1 for e in tracks[0] if e["name"].startswith("/"))
        if named == 0:
            problems.append(f"{path}: no kernel named by an ONNX node")
        if args.micro is not None:
            want = args.steps * 2 * args.micro * args.virtual
            if len(tracks[2]) != want:
                problems.append(f"{path}: {len(tracks[2])} forwards and "
                                f"backwards, {want} expected")
            elif args.schedule:
                order = expected_order(args.schedule, args.pp, stages[path],
                                       args.micro, args.virtual)
                ran = []
                for e in tracks[2]:
                    m = re.fullmatch(r"([FB])([0-9]+)(?:\.([0-9]+))?",
                                     e["name"])
                    ran.append((m.group(1), int(m.group(3) or 0),
                                int(m.group(2))) if m else e["name"])
                for step in range(args.steps):
                    got = ran[step * want // args.steps:
                              (step + 1) * want // args.steps]
                    if got != order:
                        problems.append(
                            f"{path}: stage {stages[path]} step {step} ran "
                            f"{fmt(got)}, the {args.schedule} order is "
                            f"{fmt(order)}")
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
