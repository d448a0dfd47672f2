#!/usr/bin/python3
"""dtc's predicted step time against the measured one, plan by plan.

The planner's acceptance on a CPU: for CPU plans at -np 1 and 2, the step
time plan.json predicts (compile runs the same passes and cost model as
`dtc plan`) within 25% of the measured median, and at -np 4 and 8 the
predicted ranking of plans matching the measured one. This script

1. measures this machine with `dtc calibrate --threads 1` (one thread per
   rank, as the runs below use; MPI over the plans' rank counts), unless
   --profile names a profile;
2. exports the examples (examples/*/make_example.py, training data);
3. for each plan, compiles it with --device-profile (the prediction:
   at a rank count beyond the profile's devices_per_node, a copy of the
   profile that says this host runs all N ranks: devices_per_node N, so
   that they share cores_per_node (the cost model slows every kernel by
   N x threads / cores), and the link fitted to the profile's measured
   all-reduces over N ranks (mpi_all_reduce), when it has them;
   plan.json's predicted.step_time_s, and its split into compute and
   exposed communication), runs `mpirun -np N OUT/train` with
   OMP_NUM_THREADS=1 for --steps steps, --rounds times with the plans
   alternating, and takes the median step_time_s of every round's steps
   after its first two;
4. prints one line per plan (predicted, measured, predicted / measured)
   and how many are within 25%, then, per rank count with several plans,
   whether the predicted order of the plans is the measured one, and the
   same for the plans the model tells apart (--separation: taken from the
   predictions alone, fastest first, each next one predicted at least 15%
   slower than the last taken).

Not part of the suite (timings of a shared machine). Run with --help for
the options.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

#: The GPT sizes the plans use (make_example.py's options).
GPT = ["--vocab", "512", "--seq", "64", "--hidden", "256", "--layers", "4"]

#: name: (example, export options, data inputs, ranks, compile flags)
PLANS = {
    "mlp": ("mlp", [], ["x", "y"], 1, ["--global-batch", "256"]),
    "cnn": ("cnn", [], ["images", "labels"], 1, ["--global-batch", "16"]),
    "gpt": ("gpt", GPT, ["tokens", "targets"], 1, ["--global-batch", "8"]),
    "gpt-recompute": ("gpt", GPT, ["tokens", "targets"], 1,
                      ["--global-batch", "8", "--recompute", "full"]),
    "gpt-accumulate": ("gpt", GPT, ["tokens", "targets"], 1,
                       ["--global-batch", "8", "--micro-batch", "2"]),
    "gpt-dp2": ("gpt", GPT, ["tokens", "targets"], 2,
                ["--global-batch", "8", "--mesh", "2x1x1"]),
    "gpt-dp2-zero3": ("gpt", GPT, ["tokens", "targets"], 2,
                      ["--global-batch", "8", "--mesh", "2x1x1", "--zero",
                       "3"]),
    "gpt-tp2": ("gpt", GPT, ["tokens", "targets"], 2,
                ["--global-batch", "8", "--mesh", "1x2x1"]),
    "gpt-pp2": ("gpt", GPT, ["tokens", "targets"], 2,
                ["--global-batch", "8", "--micro-batch", "1", "--mesh",
                 "1x1x2"]),
    "gpt-dp4": ("gpt", GPT, ["tokens", "targets"], 4,
                ["--global-batch", "8", "--mesh", "4x1x1"]),
    "gpt-tp2-dp2": ("gpt", GPT, ["tokens", "targets"], 4,
                    ["--global-batch", "8", "--mesh", "2x2x1"]),
    "gpt-pp2-dp2": ("gpt", GPT, ["tokens", "targets"], 4,
                    ["--global-batch", "8", "--micro-batch", "1", "--mesh",
                     "2x1x2"]),
    "gpt-pp4": ("gpt", GPT, ["tokens", "targets"], 4,
                ["--global-batch", "8", "--micro-batch", "1", "--mesh",
                 "1x1x4"]),
    # Pipelines with fewer, larger micro-batches: 4, and 1 (every stage
    # waits for the one before: the bubble is (p - 1) / m = 3 steps of a
    # stage), and that one with full recompute.
    "gpt-pp4-m4": ("gpt", GPT, ["tokens", "targets"], 4,
                   ["--global-batch", "8", "--micro-batch", "2", "--mesh",
                    "1x1x4"]),
    "gpt-pp4-m1": ("gpt", GPT, ["tokens", "targets"], 4,
                   ["--global-batch", "8", "--micro-batch", "8", "--mesh",
                    "1x1x4"]),
    "gpt-pp4-m1-recompute": ("gpt", GPT, ["tokens", "targets"], 4,
                             ["--global-batch", "8", "--micro-batch", "8",
                              "--mesh", "1x1x4", "--recompute", "full"]),
}

#: The -np 8 plans: the GPT at 8 layers and 8 heads (so that pp and tp
#: reach 8), a global batch of 16.
GPT8 = ["--vocab", "512", "--seq", "64", "--hidden", "256", "--layers", "8",
        "--heads", "8"]
for name, mesh, extra in [
        ("gpt8-dp8", "8x1x1", []),
        ("gpt8-dp8-zero3", "8x1x1", ["--zero", "3"]),
        ("gpt8-tp2-dp4", "4x2x1", []),
        ("gpt8-pp2-dp4", "4x1x2", ["--micro-batch", "1"]),
        ("gpt8-2x2x2", "2x2x2", ["--micro-batch", "1"]),
        ("gpt8-tp8", "1x8x1", []),
        ("gpt8-pp8", "1x1x8", ["--micro-batch", "1"]),
        ("gpt8-pp8-m4", "1x1x8", ["--micro-batch", "4"]),
        ("gpt8-pp8-m1", "1x1x8", ["--micro-batch", "16"]),
        ("gpt8-pp8-m1-recompute", "1x1x8", ["--micro-batch", "16",
                                            "--recompute", "full"])]:
    PLANS[name] = ("gpt", GPT8, ["tokens", "targets"], 8,
                   ["--global-batch", "16", "--mesh", mesh] + extra)


def run(cmd, env=None):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"plan_accuracy.py: {' '.join(cmd)} failed:\n"
                 f"{result.stderr[-2000:]}")
    return result.stdout


def ring_fit(samples, n):
    """The alpha-beta link of all-reduces over n ranks (as dtc calibrate
    fits it: t = 2(n-1) alpha + 2(n-1)/n bytes / beta, least squares in
    relative error), or None without samples."""
    points = [(b, t) for r, b, t in samples if r == n]
    if len(points) < 2:
        return None
    sw = sx = sy = sxx = sxy = 0.0
    for b, t in points:
        w = 1 / (t * t)
        sw, sx, sy = sw + w, sx + w * b, sy + w * t
        sxx, sxy = sxx + w * b * b, sxy + w * b * t
    slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx)
    intercept = (sy - slope * sx) / sw
    return {"latency_s": max(intercept, 0) / (2 * (n - 1)),
            "bandwidth_bytes_per_s": 2 * (n - 1) / n / max(slope, 1e-18)}


def host_profile(profile, ranks, tmp):
    """`profile`, or for more ranks than its devices_per_node a copy that
    puts them all on this host (see step 3 above)."""
    with open(profile) as f:
        p = json.load(f)
    if ranks <= p.get("devices_per_node", 1):
        return profile
    p["devices_per_node"] = ranks
    link = ring_fit(p.get("mpi_all_reduce", []), ranks)
    if link:
        p["intra_node"] = link
    path = os.path.join(tmp, f"profile-{ranks}-ranks.json")
    with open(path, "w") as f:
        json.dump(p, f)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtc", default=os.path.join(ROOT, "build", "bin",
                                                      "dtc"))
    parser.add_argument("--exporter", default="/usr/bin/python3")
    parser.add_argument("--profile", help="a device profile (default: "
                        "measure this machine with dtc calibrate --threads 1)")
    parser.add_argument("--plans", default=",".join(PLANS))
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2,
                        help="runs of each plan, the plans alternating; "
                        "the measured figure is the median over every "
                        "round's steps after the first two")
    parser.add_argument("--max-ranks", type=int, default=8)
    parser.add_argument("--separation", type=float, default=0.15,
                        help="the ranking check's spacing: from the plans "
                        "of a rank count, the fastest predicted, then each "
                        "next one predicted at least this much slower than "
                        "the last taken (the same plan measures up to 15%% "
                        "apart from round to round on a shared 2-core VM)")
    args = parser.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    with tempfile.TemporaryDirectory(prefix="dtc-plan-accuracy-") as tmp:
        profile = args.profile
        if not profile:
            profile = os.path.join(tmp, "profile.json")
            ranks = sorted({PLANS[n][3] for n in args.plans.split(",")
                            if 1 < PLANS[n][3] <= args.max_ranks})
            run([args.dtc, "calibrate", "--threads", "1", "-o", profile,
                 "--mpi-ranks", ",".join(map(str, ranks)) or "none"],
                env=env)
        exported = {}
        compiled = []
        for name in args.plans.split(","):
            example, sizes, inputs, ranks, flags = PLANS[name]
            if ranks > args.max_ranks:
                continue
            key = (example, tuple(sizes))
            if key not in exported:
                out = os.path.join(tmp, f"{example}-{len(exported)}")
                run([args.exporter,
                     os.path.join(ROOT, "examples", example, "make_example.py"),
                     "--out", out, "--training", "--train-data", "256"] +
                    sizes)
                exported[key] = out
            model = exported[key]
            out = os.path.join(tmp, name)
            plan_profile = host_profile(profile, ranks, tmp)
            run([args.dtc, "compile", os.path.join(model, "model.onnx"), "-o",
                 out, "--optimizer", "adamw", "--device-profile",
                 plan_profile] +
                flags, env=env)
            with open(os.path.join(out, "plan.json")) as f:
                predicted = json.load(f)["predicted"]
            data = ",".join(f"{i}={model}/train/{i}.npy" for i in inputs)
            compiled.append((name, ranks, out, data, predicted))
        # Rounds: every plan once per round, so that a slow spell of the
        # machine falls on all of them alike.
        times = {name: [] for name, *_ in compiled}
        for round in range(args.rounds):
            for name, ranks, out, data, predicted in compiled:
                log = os.path.join(out, f"log-{round}.jsonl")
                cmd = [f"{out}/train", "--data", data, "--steps",
                       str(args.steps), "--log-jsonl", log]
                if ranks > 1:
                    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root",
                           "-np", str(ranks), "-x", "OMP_NUM_THREADS=1", "-x",
                           "OPENBLAS_NUM_THREADS=1"] + cmd
                run(cmd, env=env)
                with open(log) as f:
                    times[name] += [json.loads(line)["step_time_s"]
                                    for line in f][2:]
        rows = []
        for name, ranks, out, data, predicted in compiled:
            measured = statistics.median(times[name])
            ratio = predicted["step_time_s"] / measured
            rows.append((name, ranks, predicted, measured, ratio))
            print(f"{name:16} -np {ranks}  predicted "
                  f"{predicted['step_time_s'] * 1e3:9.2f} ms (compute "
                  f"{predicted.get('compute_s', 0) * 1e3:8.2f}, exposed "
                  f"communication "
                  f"{predicted.get('exposed_communication_s', 0) * 1e3:7.2f}"
                  f" of {predicted.get('communication_s', 0) * 1e3:7.2f},"
                  f" bubble {predicted.get('bubble_s', 0) * 1e3:7.2f})  "
                  f"measured {measured * 1e3:9.2f} ms  ratio {ratio:5.2f}",
                  flush=True)
    within = [r for r in rows if r[1] <= 2 and abs(r[4] - 1) <= 0.25]
    small = [r for r in rows if r[1] <= 2]
    print(f"within 25% at -np 1 and 2: {len(within)} of {len(small)} plans")
    for ranks in sorted({r[1] for r in rows}):
        group = [r for r in rows if r[1] == ranks]
        if len(group) < 2:
            continue
        by_prediction = [r[0] for r in sorted(group,
                                              key=lambda r: r[2]["step_time_s"])]
        by_measurement = [r[0] for r in sorted(group, key=lambda r: r[3])]
        print(f"-np {ranks}: predicted order {' < '.join(by_prediction)}; "
              f"measured {' < '.join(by_measurement)}: "
              f"{'the same' if by_prediction == by_measurement else 'differs'}")
        # The plans the model tells apart by more than the machine's noise,
        # chosen from the predictions alone, before looking at the
        # measurements.
        chain = []
        for r in sorted(group, key=lambda r: r[2]["step_time_s"]):
            if not chain or (r[2]["step_time_s"] >= (1 + args.separation) *
                             chain[-1][2]["step_time_s"]):
                chain.append(r)
        if len(chain) < 2:
            continue
        measured_chain = sorted(chain, key=lambda r: r[3])
        same = [r[0] for r in measured_chain] == [r[0] for r in chain]
        print(f"-np {ranks}, {len(chain)} plans predicted at least "
              f"{args.separation:.0%} apart: predicted "
              + " < ".join(f"{r[0]} {r[2]['step_time_s'] * 1e3:.1f}"
                           for r in chain)
              + "; measured "
              + " < ".join(f"{r[0]} {r[3] * 1e3:.1f}" for r in measured_chain)
              + f": {'the same' if same else 'differs'}")


if __name__ == "__main__":
    main()
