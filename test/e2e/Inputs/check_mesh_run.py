"""Holds a run over a mesh against the same model's run on one rank.

Usage: check_mesh_run.py LABEL ONE_RANK.jsonl MESH.jsonl --plan PLAN.json
                         [--ranks DIR] [--rtol R] [--norm-rtol R]

Checks that the mesh run's log holds the one-rank run's steps, each loss and
gradient norm (and eval loss, where both evaluated) within R (default 1e-4;
--norm-rtol for the norms) relative of the one-rank run's (data
parallelism only regroups the sums of a step: the trajectories differ by
float32 rounding), and each fp16 loss scale and skipped step equal to its;
and, for every rank-N.json its ranks wrote
(train --rank-report DIR), that the bytes it counted through each mesh-axis
group in a step equal plan.json's comm_bytes_per_step for that rank, and
that its measured arena high-water mark and whole peak equal plan.json's
arena and peak. Prints one line with the figures, then OK or FAIL (exit 1).
"""
import argparse
import glob
import json
import os
import sys


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("label")
    parser.add_argument("base")
    parser.add_argument("mesh")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--ranks")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--norm-rtol", type=float,
                        help="bound for the gradient norms (default: --rtol)")
    args = parser.parse_args(argv[1:])
    bounds = {"loss": args.rtol,
              "grad_norm": args.norm_rtol or args.rtol}

    base, mesh = read_log(args.base), read_log(args.mesh)
    problems = []
    if [s["step"] for s in mesh] != [s["step"] for s in base]:
        problems.append(f"the mesh run logs steps {[s['step'] for s in mesh]}, "
                        f"the one-rank run {[s['step'] for s in base]}")
    worst = {"loss": 0.0, "grad_norm": 0.0}
    # (Eval losses too, where both runs evaluated.)
    if any("eval_loss" in a and "eval_loss" in b for a, b in zip(base, mesh)):
        worst["eval_loss"] = 0.0
        bounds["eval_loss"] = args.rtol
    for a, b in zip(base, mesh):
        for key in worst:
            if key not in a or key not in b:
                continue
            rel = abs(b[key] - a[key]) / max(abs(a[key]), 1e-12)
            worst[key] = max(worst[key], rel)
            if rel > bounds[key]:
                problems.append(f"step {a['step']}: {key} {b[key]!r} against "
                                f"{a[key]!r} on one rank ({rel:.2e} relative)")
        # fp16: the same loss scale and the same skipped (overflowed) steps.
        for key in ("loss_scale", "skipped"):
            if (key in a or key in b) and a.get(key) != b.get(key):
                problems.append(f"step {a['step']}: {key} {b.get(key)!r} "
                                f"against {a.get(key)!r} on one rank")

    with open(args.plan) as f:
        plan = json.load(f)
    planned = {r["rank"]: r for r in plan["ranks"]}
    mesh_size = plan["mesh"]["dp"] * plan["mesh"]["tp"] * plan["mesh"]["pp"]
    reports = []
    if args.ranks:
        reports = sorted(glob.glob(os.path.join(args.ranks, "rank-*.json")))
    if args.ranks and len(reports) != mesh_size:
        problems.append(f"{len(reports)} rank reports for a mesh of "
                        f"{mesh_size} ranks")
    bytes_seen = {}
    for path in reports:
        with open(path) as f:
            report = json.load(f)
        rank = report["rank"]
        want = planned[rank]
        for axis, count in report["comm_bytes_per_step"].items():
            bytes_seen.setdefault(axis, set()).add(count)
        for axis in set(want["comm_bytes_per_step"]) | set(
                report["comm_bytes_per_step"]):
            got = report["comm_bytes_per_step"].get(axis, 0)
            expected = want["comm_bytes_per_step"].get(axis, 0)
            if got != expected:
                problems.append(f"rank {rank} sent {got} bytes over {axis} in "
                                f"a step; plan.json says {expected}")
        memory = want["memory_bytes"]
        if report["arena_high_water_bytes"] != memory["arena"]:
            problems.append(f"rank {rank}: arena high-water "
                            f"{report['arena_high_water_bytes']} bytes, "
                            f"plan.json's arena {memory['arena']}")
        if report["memory_peak_bytes"] != memory["peak"]:
            problems.append(f"rank {rank}: measured peak "
                            f"{report['memory_peak_bytes']} bytes, "
                            f"plan.json's peak {memory['peak']}")

    figures = ", ".join(f"{k} within {v:.1e}" for k, v in worst.items())
    sent = ", ".join(f"{axis} {sorted(v)}" for axis, v in sorted(bytes_seen.items()))
    print(f"{args.label}: {len(mesh)} steps, {figures}; bytes per step "
          f"({sent or 'none'}) as planned on {len(reports)} ranks")
    for p in problems:
        print(f"  {p}")
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
