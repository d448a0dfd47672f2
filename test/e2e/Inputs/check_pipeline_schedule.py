"""Holds a pipelined run's executed schedule against the schedule's
definition, and its measured bubble against the formula.

Usage: check_pipeline_schedule.py LABEL --ranks DIR --schedule S --micro M
           [--virtual V] [--bubble-tolerance T [--wall-clock held|printed]]

Every rank-N.json (train --rank-report DIR) holds the last step's timeline:
each forward (F) and backward (B) of a micro-batch and model chunk, in the
order the stage ran them, with their start and end on the node's monotonic
clock, and the sums of a backward's gradients into the accumulated ones (A)
after it, which the order check skips. The expected orders are written here from the papers, not taken
from dtc:
- gpipe (Huang et al. 2019): F0 .. F(m-1), then B0 .. B(m-1);
- 1f1b (Narayanan et al. 2021, PipeDream-Flush): stage s runs
  min(p - s - 1, m) forwards, then one forward and one backward in turn,
  then the backwards left;
- interleaved (Narayanan et al. 2021, section 2.2; Megatron-LM's order):
  micro-batches in groups of p; forward unit i is chunk (i // p) % V of
  micro-batch (i // (p V)) p + i % p, backward units take the chunks in
  reverse; stage s warms up with 2 (p - s - 1) + (V - 1) p forwards (all of
  them when m = p).

With --bubble-tolerance, the bubble is measured on each pipeline (the
stages of one data- and tensor-parallel coordinate) twice, and both figures
must be within T of (p - 1) / m, or (p - 1) / (V m) interleaved
(REFERENCE.md, as a fraction of the ideal time), averaged over the
pipelines:
- by the wall clock: the slowest stage's (the one busy longest) idle time
  between the pipeline's first forward or backward and its last, over its
  busy time. Busy is its forwards, backwards and the gradient sums after a
  backward ("A" records, not units of the schedule); idle holds waiting for
  the other stages, message latency and, on shared cores, other processes'
  time slices;
  With --wall-clock printed (where other processes share the cores: lit
  running other tests beside this one), this figure is printed, not held;
- by replay(): the executed orders replayed with each stage's measured
  durations, which leaves out latency and time slices.
The formula assumes equal stages: a faster stage also waits for the slowest
one, idle time that is the stages' imbalance rather than the schedule's
fill and drain (the slowest stage's own bubble is at most the formula's,
and equals it when the stages are equal). The replay's mean over all
stages, which holds that imbalance, is printed beside them. Prints the
figures, then OK or FAIL (exit 1).
"""
import argparse
import glob
import json
import os
import sys


def expected_order(schedule, p, s, m, v):
    if schedule == "gpipe":
        return [("F", 0, k) for k in range(m)] + [("B", 0, k) for k in range(m)]
    if schedule == "1f1b":
        warm = min(p - s - 1, m)
        order = [("F", 0, k) for k in range(warm)]
        for i in range(m - warm):
            order += [("F", 0, warm + i), ("B", 0, i)]
        return order + [("B", 0, k) for k in range(m - warm, m)]
    total = m * v

    def unit(i, forward):
        chunk = (i % (p * v)) // p
        micro = (i // (p * v)) * p + i % p
        return ("F" if forward else "B",
                chunk if forward else v - 1 - chunk, micro)

    warm = total if m == p else min(total, (p - s - 1) * 2 + (v - 1) * p)
    order = [unit(i, True) for i in range(warm)]
    for i in range(total - warm):
        order += [unit(warm + i, True), unit(i, False)]
    return order + [unit(i, False) for i in range(total - warm, total)]


def replay(stages, p, v):
    """The bubble of the executed orders, each op taking its stage's
    shortest measured duration of its kind (the run least slowed by other
    processes on shared cores: under a neighbouring test most runs of one
    rank can be, which a median keeps), and waiting only for what it needs:
    a forward for the previous model chunk's forward of its micro-batch (on
    the stage before), a backward for the next chunk's backward (on the
    stage after; the last chunk's for its own forward). What is left is the
    order's own idle time. One (bubble, busy) pair per stage, the bubble
    (span - busy) / busy."""
    duration = {}
    for s, r in stages.items():
        for kind in "FB":
            duration[s, kind] = min([e["end_s"] - e["begin_s"]
                                        for e in r["timeline"]
                                        if e["op"][0] == kind])
    def length(s, e):
        # (A gradient accumulation takes the time it took.)
        kind = e["op"][0]
        return e["end_s"] - e["begin_s"] if kind == "A" else duration[s, kind]
    done = {}
    clock = {s: 0.0 for s in stages}
    position = {s: 0 for s in stages}
    chunks = p * v
    remaining = sum(len(r["timeline"]) for r in stages.values())
    while remaining:
        moved = False
        for s, r in stages.items():
            while position[s] < len(r["timeline"]):
                e = r["timeline"][position[s]]
                kind, c, k = e["op"][0], e["chunk"], int(e["op"][1:])
                g = c * p + s  # the chunk's place in the model
                if kind == "A":
                    need = None
                elif kind == "F":
                    need = ("F", g - 1, k) if g > 0 else None
                else:
                    need = ("B", g + 1, k) if g < chunks - 1 else ("F", g, k)
                if need is not None and need not in done:
                    break
                start = max(clock[s], done[need] if need else 0.0)
                clock[s] = start + length(s, e)
                done[(kind, g, k)] = clock[s]
                position[s] += 1
                remaining -= 1
                moved = True
        if not moved:
            raise SystemExit("the executed orders wait on each other")
    span = max(clock.values())
    out = []
    for s, r in stages.items():
        busy = sum(length(s, e) for e in r["timeline"])
        out.append(((span - busy) / busy, busy))
    return out


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("--ranks", required=True)
    parser.add_argument("--schedule", required=True)
    parser.add_argument("--micro", type=int, required=True)
    parser.add_argument("--virtual", type=int, default=1)
    parser.add_argument("--bubble-tolerance", type=float)
    parser.add_argument("--wall-clock", choices=("held", "printed"),
                        default="held")
    args = parser.parse_args(argv[1:])

    reports = []
    for path in sorted(glob.glob(os.path.join(args.ranks, "rank-*.json"))):
        with open(path) as f:
            reports.append(json.load(f))
    problems = []
    if not reports:
        problems.append(f"no rank reports in {args.ranks}")
    p = max((r["coords"]["pp"] for r in reports), default=0) + 1
    m, v = args.micro, args.virtual
    for r in reports:
        s = r["coords"]["pp"]
        ran = []
        for e in r["timeline"]:
            if e["op"][0] != "A":
                ran.append((e["op"][0], e["chunk"], int(e["op"][1:])))
        want = expected_order(args.schedule, p, s, m, v)
        if ran != want:
            show = lambda order: " ".join(f"{k}{mb}" + (f".{c}" if v > 1 else "")
                                          for k, c, mb in order)
            problems.append(f"rank {r['rank']} (stage {s}) ran {show(ran)}; "
                            f"{args.schedule} is {show(want)}")

    bubble_text = ""
    if args.bubble_tolerance is not None and not problems:
        pipelines = {}
        for r in reports:
            key = (r["coords"]["dp"], r["coords"]["tp"])
            pipelines.setdefault(key, {})[r["coords"]["pp"]] = r
        wall, slowest, mean = [], [], []
        for stages in pipelines.values():
            # Wall clock: from the pipeline's first start to its last end,
            # less each stage's busy time, over that busy time.
            spans = [(r["timeline_origin_s"] + e["begin_s"],
                      r["timeline_origin_s"] + e["end_s"])
                     for r in stages.values() for e in r["timeline"]
                     if e["op"][0] != "A"]
            first, last = min(b for b, _ in spans), max(e for _, e in spans)
            walls = []
            for r in stages.values():
                # (Gradient sums in the span are busy time too.)
                busy = sum(min(last, r["timeline_origin_s"] + e["end_s"]) -
                           max(first, r["timeline_origin_s"] + e["begin_s"])
                           for e in r["timeline"]
                           if r["timeline_origin_s"] + e["end_s"] > first and
                           r["timeline_origin_s"] + e["begin_s"] < last)
                walls.append(((last - first - busy) / busy, busy))
            wall.append(max(walls, key=lambda x: x[1])[0])
            stage_bubbles = replay(stages, p, v)
            slowest.append(max(stage_bubbles, key=lambda x: x[1])[0])
            mean += [bubble for bubble, _ in stage_bubbles]
        replayed = sum(slowest) / len(slowest)
        imbalanced = sum(mean) / len(mean)
        clock = sum(wall) / len(wall)
        formula = (p - 1) / (v * m)
        name = f"(p - 1) / {'(V m)' if v > 1 else 'm'}"
        for figure, what in ((clock, "wall clock"), (replayed, "replayed")):
            if what == "wall clock" and args.wall_clock == "printed":
                continue
            if abs(figure - formula) > args.bubble_tolerance:
                problems.append(f"bubble {figure:.3f} ({what}), {name} = "
                                f"{formula:.3f}, beyond "
                                f"{args.bubble_tolerance}")
        bubble_text = (f"; bubble {clock:.3f} (wall clock, slowest stage, "
                       f"{args.wall_clock}), "
                       f"{replayed:.3f} (executed order replayed with "
                       f"measured durations; mean over the stages "
                       f"{imbalanced:.3f}), {formula:.3f} by the formula")
    print(f"{args.label}: {len(reports)} ranks ran the {args.schedule} order "
          f"(p={p}, m={m}{f', V={v}' if v > 1 else ''}){bubble_text}")
    for problem in problems:
        print(f"  {problem}")
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
