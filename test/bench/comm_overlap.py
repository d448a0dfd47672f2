#!/usr/bin/python3
"""dtc at dp=2 with communication scheduling on against off, same run.

For each case (the GPT example at two sizes; AdamW, fp32) it

1. exports the model with examples/gpt/make_example.py (training mode,
   dynamic batch axis, training data);
2. compiles it with `dtc compile --mesh 2x1x1` twice: `--comm-overlap on`
   (gradient buckets of --bucket-mb MiB started inside the backward, waited
   for before the optimizer) and `--comm-overlap off` (each all-reduce
   where the step needs its result, after the backward);
3. runs both `mpirun -np 2 OUT/train --rank-report DIR` with one thread per
   rank (OMP_NUM_THREADS=1), alternating `--rounds` times so that a change
   in the machine's load hits both;
4. prints, per variant, the median step time (the runtime's step_time_s,
   collectives included) and the seconds a step spent blocked in the dp
   group's collectives (comm_wait_s_per_step of the rank reports, the mean
   of the two ranks: a synchronous collective blocks for its whole time, an
   asynchronous one for its wait), and the ratios on / off. Both variants'
   losses must agree within 1e-5 relative (the same model, data and
   reductions); a mismatch is an error.

Not part of the suite. Run with --help for the options.
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

#: name: (make_example.py size options, global batch, timed steps)
CASES = {
    "gpt-small": (dict(hidden=128, seq=64, layers=4, vocab=256), 8, 30),
    "gpt-large": (dict(vocab=512, seq=128, hidden=256, heads=4, layers=4), 8,
                  10),
}


def run(cmd, env=None):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    if result.returncode != 0:
        sys.exit(f"comm_overlap.py: {' '.join(cmd)} failed:\n{result.stderr}")
    return result.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dtc", default=os.path.join(ROOT, "build", "bin",
                                                      "dtc"))
    parser.add_argument("--exporter", default="/usr/bin/python3")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bucket-mb", type=float, default=1.0)
    parser.add_argument("--keep", help="work folder to keep (default: a "
                        "temporary one)")
    args = parser.parse_args()
    work = args.keep or tempfile.mkdtemp(prefix="dtc-overlap-")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    for name in args.cases.split(","):
        sizes, batch, steps = CASES[name]
        model = os.path.join(work, name)
        export = [args.exporter, os.path.join(ROOT, "examples", "gpt",
                                              "make_example.py"),
                  "--out", model, "--training", "--train-data", str(batch * 8)]
        for key, value in sizes.items():
            export += [f"--{key}", str(value)]
        run(export)
        data = (f"tokens={model}/train/tokens.npy,"
                f"targets={model}/train/targets.npy")
        for variant in ("on", "off"):
            run([args.dtc, "compile", f"{model}/model.onnx", "--mesh", "2x1x1",
                 "-o", f"{model}/{variant}", "--global-batch", str(batch),
                 "--optimizer", "adamw", "--lr", "1e-3", "--comm-overlap",
                 variant, "--bucket-mb", str(args.bucket_mb)])
        times = {"on": [], "off": []}
        waits = {"on": [], "off": []}
        losses = {}
        for round_ in range(args.rounds):
            for variant in ("on", "off"):
                out = f"{model}/{variant}"
                log = f"{out}/log-{round_}.jsonl"
                ranks = f"{out}/ranks-{round_}"
                run(["mpirun", "--oversubscribe", "-np", "2", "-x",
                     "OMP_NUM_THREADS=1", f"{out}/train", "--data", data,
                     "--steps", str(steps), "--log-jsonl", log,
                     "--rank-report", ranks], env)
                with open(log) as f:
                    lines = [json.loads(line) for line in f if line.strip()]
                times[variant] += [line["step_time_s"] for line in lines[2:]]
                losses[variant] = [line["loss"] for line in lines]
                blocked = []
                for r in range(2):
                    with open(f"{ranks}/rank-{r}.json") as f:
                        blocked.append(json.load(f)["comm_wait_s_per_step"]
                                       .get("dp", 0.0))
                waits[variant].append(statistics.mean(blocked))
        for a, b in zip(losses["on"], losses["off"]):
            if abs(a - b) > 1e-5 * abs(b):
                sys.exit(f"comm_overlap.py: {name}: losses differ: {a} / {b}")
        step = {v: statistics.median(times[v]) for v in times}
        wait = {v: statistics.median(waits[v]) for v in waits}
        print(f"{name}: step on {step['on'] * 1e3:.2f} ms, off "
              f"{step['off'] * 1e3:.2f} ms (on/off {step['on'] / step['off']:.3f}); "
              f"blocked in dp collectives on {wait['on'] * 1e3:.3f} ms, off "
              f"{wait['off'] * 1e3:.3f} ms (on/off "
              f"{wait['on'] / wait['off']:.3f}) per step")


if __name__ == "__main__":
    main()
