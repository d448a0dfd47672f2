#!/usr/bin/python3
"""Training speed of dtc's compiled step against PyTorch eager, as a ratio.

For each case (the MLP and GPT examples, and a larger GPT) and precision
(fp32, bf16) it

1. exports the model with the example's make_example.py (opset 17, training
   mode, dynamic batch axis) together with its training data;
2. compiles it with `dtc compile` (mesh 1x1x1, AdamW, the export's batch as
   the global batch; `--precision bf16` for bf16);
3. runs `OUT/train --data ... --steps N --log-jsonl` under OMP_NUM_THREADS=2
   OPENBLAS_NUM_THREADS=1 and takes the median `step_time_s` of the steps
   after the warm-up;
4. trains the same module from examples/NAME/model.py in eager PyTorch from
   the same initial weights (the export's initializers, loaded by
   examples/common/train_reference.py), on the same batches, with
   torch.optim.AdamW and the same hyperparameters, torch.set_num_threads(2)
   and OMP_NUM_THREADS=2 (bf16: torch.autocast(device_type='cpu',
   dtype=torch.bfloat16)), and takes the median time of zero_grad + forward
   + backward + optimizer step after the warm-up.

The dtc and PyTorch measurements alternate (--rounds times each), so a change
in the machine's load hits both. Both sides time only the step (dtc's
step_time_s excludes reading the data; PyTorch's batches are made before the
clock starts). The first step's loss of both must agree (the same model,
weights and data), else the case is reported as a mismatch.

Prints one line per case, `case precision dtc_steps_per_s torch_steps_per_s
ratio` (ratio = dtc / torch, above 1 when dtc is faster), then a summary.
The exit status is 1 if an fp32 case could not be measured or a first loss
disagrees; a bf16 case that `dtc compile` rejects is reported as
"n/a (dtc: MESSAGE)" and is not an error. Run with --help for the options.
"""

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, "examples")

#: Threads both sides get.
THREADS = 2
# PyTorch reads OMP_NUM_THREADS when it loads (torch.set_num_threads(2) is
# called as well); its matrix products go to OpenBLAS from one thread, so
# OpenBLAS keeps its default thread count (one per core) on this side.
os.environ["OMP_NUM_THREADS"] = str(THREADS)

sys.path.insert(0, os.path.join(EXAMPLES, "common"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

import train_reference  # noqa: E402


class Case:
    """One model of the benchmark.

    example: the examples/ folder; sizes: make_example.py's size options
    (the GPT's --vocab ... --layers); batch: the export's batch, which is the
    global batch of both sides; samples: training samples written (the
    stream wraps); lr: AdamW's learning rate; steps, warmup: timed and
    untimed steps of each round, by default; tolerance: how far the first
    step's losses of dtc and PyTorch may differ (relative), per precision.
    """

    def __init__(self, name, example, batch, samples, lr, steps, warmup,
                 sizes=None):
        self.name = name
        self.example = example
        self.batch = batch
        self.samples = samples
        self.lr = lr
        self.steps = steps
        self.warmup = warmup
        self.sizes = dict(sizes or {})


#: The cases, in the order they run. gpt-large: hidden 256, 4 heads of 64,
#: 4 layers, sequence 128, vocabulary 512, batch 8 (3.3M parameters).
CASES = [
    Case("mlp", "mlp", batch=8, samples=256, lr=1e-2, steps=300, warmup=30),
    Case("gpt-small", "gpt", batch=4, samples=256, lr=3e-3, steps=60,
         warmup=6),
    Case("gpt-large", "gpt", batch=8, samples=64, lr=1e-3, steps=12,
         warmup=2, sizes=dict(vocab=512, seq=128, hidden=256, heads=4,
                              layers=4)),
]
PRECISIONS = ("fp32", "bf16")
#: The goal: dtc at least this many times PyTorch's steps per second on
#: these cases in fp32.
TARGET_RATIO = 1.3
TARGET_CASES = ("gpt-small", "gpt-large")
#: Relative difference allowed between the first step's losses.
LOSS_TOLERANCE = {"fp32": 1e-4, "bf16": 3e-2}
#: 1-minute load averages at which the summary warns that others were using
#: the cores: before the run, and after it (the benchmark's own 2 threads
#: bring the average up to about 2 by then).
BUSY_BEFORE, BUSY_AFTER = 0.8, 2.8
#: AdamW's other hyperparameters (dtc's defaults, passed to both sides).
BETAS = (0.9, 0.999)
EPS = 1e-8
WEIGHT_DECAY = 0.01


class BenchError(Exception):
    """A step of the benchmark failed; the message says which and why."""


# ----------------------------------------------------------------------------
# Export and dtc
# ----------------------------------------------------------------------------


def _run(argv, what, env=None):
    """Runs argv; returns its stdout, or raises BenchError with the last
    lines of its stderr."""
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-5:])
        raise BenchError("%s failed (exit %d): %s" % (what, proc.returncode,
                                                      tail))
    return proc.stdout


def export(case, directory):
    """Exports the case's model and training data into `directory`."""
    argv = [sys.executable,
            os.path.join(EXAMPLES, case.example, "make_example.py"),
            "--out", directory, "--opset", "17", "--training",
            "--batch", str(case.batch), "--train-data", str(case.samples)]
    for name, value in sorted(case.sizes.items()):
        argv += ["--" + name, str(value)]
    _run(argv, "%s: make_example.py" % case.name)


def _dtc_message(stderr):
    """The first line of dtc's diagnostic, without the program name and the
    --help hint."""
    for line in stderr.splitlines():
        line = line.strip()
        if line:
            if line.startswith("dtc: "):
                line = line[len("dtc: "):]
            return line.split("  Try: ")[0]
    return "no message"


def compile_step(dtc, case, precision, model_dir, out):
    """`dtc compile`s the case; returns None, or dtc's message if it
    refused."""
    argv = [dtc, "compile", os.path.join(model_dir, "model.onnx"), "--mesh",
            "1x1x1", "-o", out, "--global-batch", str(case.batch),
            "--optimizer", "adamw", "--lr", repr(case.lr), "--betas",
            "%r,%r" % BETAS, "--eps", repr(EPS), "--weight-decay",
            repr(WEIGHT_DECAY)]
    if precision != "fp32":
        argv += ["--precision", precision]
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        return _dtc_message(proc.stderr)
    return None


def _data_flag(case, data_dir):
    spec = train_reference.load_example(case.example)
    return ",".join("%s=%s" % (name, os.path.join(data_dir, name + ".npy"))
                    for name in spec.EXAMPLE.input_names)


def dtc_round(case, out, data_dir, steps, warmup):
    """Runs OUT/train for warmup + steps steps; returns (the timed steps'
    step_time_s, the first step's loss)."""
    log = os.path.join(out, "bench.jsonl")
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS),
               OPENBLAS_NUM_THREADS="1")
    _run([os.path.join(out, "train"), "--data", _data_flag(case, data_dir),
          "--steps", str(warmup + steps), "--log-jsonl", log],
         "%s: %s/train" % (case.name, out), env=env)
    with open(log) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if len(lines) != warmup + steps:
        raise BenchError("%s: %s holds %d steps, expected %d" % (
            case.name, log, len(lines), warmup + steps))
    times = [float(line["step_time_s"]) for line in lines[warmup:]]
    return times, float(lines[0]["loss"])


# ----------------------------------------------------------------------------
# PyTorch eager
# ----------------------------------------------------------------------------


def _spec(case):
    spec = train_reference.load_example(case.example)
    if case.sizes:
        spec.configure(**case.sizes)
    elif hasattr(spec, "configure"):
        spec.configure()
    return spec


def torch_round(case, precision, model_dir, data_dir, steps, warmup):
    """Trains the case in eager PyTorch for warmup + steps steps from the
    export's weights; returns (the timed steps' times, the first loss)."""
    spec = _spec(case)
    try:
        model, _, onnx_model = train_reference.load_model(spec, model_dir)
        arrays = train_reference.load_data(spec, data_dir, onnx_model)
    except train_reference.ReferenceError as e:
        raise BenchError("%s: %s" % (case.name, e))
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=case.lr,
                                  betas=BETAS, eps=EPS,
                                  weight_decay=WEIGHT_DECAY)
    # Step k takes samples [(k-1)B, kB) modulo N, as dtc's train does.
    n, b = arrays[0].shape[0], case.batch
    batches = []
    for k in range(warmup + steps):
        index = (k * b + np.arange(b)) % n
        batches.append([torch.from_numpy(np.ascontiguousarray(a[index]))
                        for a in arrays])
    bf16 = precision == "bf16"
    times, first_loss = [], None
    for inputs in batches:
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16,
                            enabled=bf16):
            _, loss = model(*inputs)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
        if first_loss is None:
            first_loss = float(loss)
    return times[warmup:], first_loss


# ----------------------------------------------------------------------------
# The benchmark
# ----------------------------------------------------------------------------


class Result:
    """What one case and precision measured."""

    def __init__(self, case, precision):
        self.case = case
        self.precision = precision
        self.dtc = None  # steps per second
        self.torch = None
        self.na = None  # why dtc has no number
        self.error = None  # a failure of the benchmark itself
        self.losses = None  # (dtc, torch) first-step losses

    @property
    def ratio(self):
        if self.dtc is None or self.torch is None:
            return None
        return self.dtc / self.torch

    def line(self):
        name = "%-10s %-5s" % (self.case.name, self.precision)
        if self.error:
            return "%s error: %s" % (name, self.error)
        torch_rate = "%.4g" % self.torch if self.torch else "-"
        if self.na:
            return "%s n/a (dtc: %s)  torch %s steps/s" % (name, self.na,
                                                          torch_rate)
        return "%s %15.4g %17.4g %6.3f" % (name, self.dtc, self.torch,
                                           self.ratio)


def _steps(case, args):
    steps = args.steps or case.steps
    warmup = case.warmup
    if args.quick:
        steps = max(3, steps // 4)
        warmup = max(1, warmup // 2)
    return steps, warmup


def measure(case, precision, args, work, exported):
    """Compiles and times one case at one precision."""
    result = Result(case, precision)
    model_dir = os.path.join(work, case.name)
    data_dir = os.path.join(model_dir, train_reference.TRAIN_DATA_DIR)
    try:
        if case.name not in exported:
            export(case, model_dir)
            exported.add(case.name)
        out = os.path.join(model_dir, "out-" + precision)
        result.na = compile_step(args.dtc, case, precision, model_dir, out)
        if result.na and precision == "fp32":
            raise BenchError("dtc compile: " + result.na)
        steps, warmup = _steps(case, args)
        dtc_times, torch_times = [], []
        for _ in range(args.rounds):
            if not result.na:
                times, loss = dtc_round(case, out, data_dir, steps, warmup)
                dtc_times += times
                dtc_loss = loss
            times, loss = torch_round(case, precision, model_dir, data_dir,
                                      steps, warmup)
            torch_times += times
            torch_loss = loss
        result.torch = 1.0 / statistics.median(torch_times)
        if not result.na:
            result.dtc = 1.0 / statistics.median(dtc_times)
            result.losses = (dtc_loss, torch_loss)
            difference = abs(dtc_loss - torch_loss) / max(abs(torch_loss),
                                                          1e-12)
            if difference > LOSS_TOLERANCE[precision]:
                raise BenchError(
                    "first losses differ: dtc %.9g, PyTorch %.9g (relative "
                    "%.2g > %g): not the same model, weights or data" % (
                        dtc_loss, torch_loss, difference,
                        LOSS_TOLERANCE[precision]))
    except BenchError as e:
        result.error = str(e)
    return result


def _summary(results, load_before, load_after, seconds):
    lines = ["", "summary (ratio = dtc steps/s over PyTorch eager's, %d "
             "threads each):" % THREADS]
    for precision in PRECISIONS:
        parts = []
        for r in results:
            if r.precision != precision:
                continue
            if r.error:
                parts.append("%s error" % r.case.name)
            elif r.na:
                parts.append("%s n/a" % r.case.name)
            else:
                parts.append("%s %.2fx" % (r.case.name, r.ratio))
        if parts:
            lines.append("  %s: %s" % (precision, ", ".join(parts)))
    gpts = {r.case.name: r for r in results if r.precision == "fp32" and
            r.case.name in TARGET_CASES}
    if len(gpts) == len(TARGET_CASES):
        met = all(r.ratio is not None and r.ratio >= TARGET_RATIO
                  for r in gpts.values())
        verdict = "met" if met else "not met"
    else:
        verdict = "not evaluated (run %s in fp32)" % " and ".join(
            TARGET_CASES)
    lines.append("  target (>= %gx on %s in fp32): %s" % (
        TARGET_RATIO, " and ".join(TARGET_CASES), verdict))
    lines.append("  load average (1 min) before %.2f, after %.2f; %d cores; "
                 "%.0f s" % (load_before, load_after, os.cpu_count(),
                             seconds))
    if load_before >= BUSY_BEFORE or load_after >= BUSY_AFTER:
        lines.append(
            "  WARNING: others were using the cores (load average %.2f "
            "before, %.2f after): with %d OpenMP threads per side, barriers "
            "wait for descheduled threads and both sides slow down "
            "erratically (10x and more); rerun when idle" %
            (load_before, load_after, THREADS))
    return "\n".join(lines)


def _parse_args(argv):
    names = [c.name for c in CASES]
    parser = argparse.ArgumentParser(
        description="Steps per second of dtc's compiled training step "
        "against PyTorch eager on the same model, weights and data, as a "
        "ratio.", allow_abbrev=False)
    parser.add_argument("--cases", default=",".join(names),
                        help="comma-separated cases (default: all of %s)" %
                        ", ".join(names))
    parser.add_argument("--precisions", default=",".join(PRECISIONS),
                        help="comma-separated precisions (default: "
                        "fp32,bf16)")
    parser.add_argument("--steps", type=int,
                        help="timed steps per round and side (default per "
                        "case: %s)" % ", ".join("%s %d" % (c.name, c.steps)
                                                for c in CASES))
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternating dtc / PyTorch rounds (default 2)")
    parser.add_argument("--quick", action="store_true",
                        help="a quarter of the steps, half the warm-up")
    parser.add_argument("--dtc", default=os.path.join(ROOT, "build", "bin",
                                                      "dtc"),
                        help="the dtc binary (default build/bin/dtc)")
    parser.add_argument("--work", help="keep exports and builds in this "
                        "folder (default: a temporary folder, removed)")
    args = parser.parse_args(argv)
    chosen = [c for c in args.cases.split(",") if c]
    for name in chosen:
        if name not in names:
            parser.error("unknown case '%s' (one of %s)" % (
                name, ", ".join(names)))
    args.cases = [c for c in CASES if c.name in chosen]
    args.precisions = [p for p in args.precisions.split(",") if p]
    for p in args.precisions:
        if p not in PRECISIONS:
            parser.error("unknown precision '%s' (fp32 or bf16)" % p)
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be positive")
    if args.rounds < 1:
        parser.error("--rounds must be positive")
    if not os.access(args.dtc, os.X_OK):
        parser.error("no dtc at '%s' (build it, or pass --dtc)" % args.dtc)
    return args


def main(argv=None):
    args = _parse_args(argv)
    torch.set_num_threads(THREADS)
    start = time.time()
    load_before = os.getloadavg()[0]
    print("# %s, %d cores, PyTorch %s; load average %.2f" % (
        platform.processor() or platform.machine(), os.cpu_count(),
        torch.__version__, load_before))
    print("%-10s %-5s %15s %17s %6s" % ("case", "prec", "dtc_steps_per_s",
                                       "torch_steps_per_s", "ratio"))
    sys.stdout.flush()
    work = args.work or tempfile.mkdtemp(prefix="dtc-bench-")
    os.makedirs(work, exist_ok=True)
    results, exported = [], set()
    try:
        for case in args.cases:
            for precision in args.precisions:
                result = measure(case, precision, args, work, exported)
                results.append(result)
                print(result.line())
                sys.stdout.flush()
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(_summary(results, load_before, os.getloadavg()[0],
                   time.time() - start))
    failed = [r for r in results if r.error]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
