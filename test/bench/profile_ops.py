#!/usr/bin/python3
"""Where a compiled training step spends its time, kernel by kernel.

Takes an OUTDIR written by `dtc compile` (its train.cpp, weights.bin and
model.onnx), instruments a copy of the generated source in a scratch folder
(a clock read before every kernel, attributed to the kernel it ends), builds
it as dtc does (the compiler, flags and runtime library of
build/compiler/Target/CPU/RuntimeConfig.h, plus --cxxflags), runs it, and
prints the time per step by op kind (dtg.matmul, dtg.transpose, ...), the
most expensive kernels with their shapes, and how much of the step is outside
the kernels. With --threads 1,2 it runs once per thread count and shows the
columns side by side (the second thread's speedup per op kind, and where
OpenMP's fork/join costs more than it gains). OUTDIR itself is not changed.

  test/bench/profile_ops.py OUTDIR --data NAME=FILE.npy,... [--steps 6]
      [--clock wall|cpu]
      [--skip 2] [--threads 1,2] [--top 25] [--cxxflags="-march=x86-64-v3"]
"""

import argparse
import collections
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONFIG = os.path.join(ROOT, "build", "compiler", "Target", "CPU",
                      "RuntimeConfig.h")

#: Op kinds grouped for the summary.
CATEGORIES = [
    ("GEMM (matmul/gemm, fused gemm kernels)",
     ("matmul", "gemm", "conv", "fusion:gemm")),
    ("fused loops (elementwise)", ("fusion:loop",)),
    ("fused reductions", ("fusion:reduction",)),
    ("transpose", ("transpose",)),
    ("softmax", ("softmax", "log_softmax", "softmax_grad")),
    ("layer norm", ("layer_norm", "layer_norm_grad")),
    ("reductions", ("reduce_sum", "reduce_mean", "reduce_max")),
    ("optimizer", ("adamw_update", "sgd_update", "lr_schedule")),
    ("loss", ("nll_loss", "nll_loss_grad", "cross_entropy")),
    ("gather/embedding", ("gather", "gather_grad")),
    ("shape (slice/pad/concat)", ("slice", "pad", "concat", "reshape")),
]

_PRELUDE = r"""
// ---- dtc profile_ops.py instrumentation ----
#include <cstdio>
#include <ctime>
#include <cstdlib>
static double dtcprof_ns[%(n)d];
static long dtcprof_count[%(n)d];
static double dtcprof_step_ns = 0;
static long dtcprof_steps = 0, dtcprof_step_index = 0;
static int dtcprof_current = -1;
static double dtcprof_start, dtcprof_step_start;
/// Nanoseconds on the profile's clock: wall time, or the calling thread's
/// CPU time (with one thread, what the kernels cost regardless of load).
static inline double dtcprof_now() {
  timespec t;
  clock_gettime(%(clock)s, &t);
  return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}
static inline void dtcprof_mark(int id) {
  double now = dtcprof_now();
  if (dtcprof_current >= 0 && dtcprof_step_index > %(skip)d) {
    dtcprof_ns[dtcprof_current] += now - dtcprof_start;
    ++dtcprof_count[dtcprof_current];
  }
  dtcprof_current = id;
  dtcprof_start = dtcprof_now();
}
static void dtcprof_dump() {
  const char *path = std::getenv("DTCPROF_OUT");
  if (!path)
    return;
  FILE *f = std::fopen(path, "w");
  if (!f)
    return;
  std::fprintf(f, "steps %%ld %%.0f\n", dtcprof_steps, dtcprof_step_ns);
  for (int i = 0; i < %(n)d; ++i)
    std::fprintf(f, "%%d %%.0f %%ld\n", i, dtcprof_ns[i], dtcprof_count[i]);
  std::fclose(f);
}
static const int dtcprof_registered = (std::atexit(dtcprof_dump), 0);
// ---- end of instrumentation ----
"""


class Kernel:
    """One kernel call site of the generated source."""

    def __init__(self, index, op, name, call):
        self.index = index
        self.op = op
        self.name = name
        self.call = call


def _shapes(source):
    table = {}
    for m in re.finditer(r"static constexpr dtck::Shape (s\d+)\{(\d+), "
                         r"\{([^}]*)\}\};", source):
        dims = [d.strip() for d in m.group(3).split(",") if d.strip()]
        table[m.group(1)] = "[" + "x".join(dims) + "]"
    return table


def _fused(source, shapes):
    """fused_N -> (its kind: gemm, loop or reduction; a short description:
    the product's result shape and K, or the extents of its loops, outer
    first: for a reduction the kept, then the reduced ones)."""
    table = {}
    for m in re.finditer(r"^// (\w+) kernel(?: of .*)?\n(?:.*\n)*?(?:static )?"
                         r"void (fused_\d+)\(.*\{\n((?:.*\n)*?)\}\n", source,
                         re.M):
        kind, name, body = m.group(1), m.group(2), m.group(3)
        gemm = re.search(r"productShape\{\d+, \{([\d, ]+)\}\};\n.*"
                         r"matmulView\(productShape, (\d+),", body)
        if gemm:
            what = "[%s] k=%s" % (gemm.group(1).replace(", ", "x"),
                                  gemm.group(2))
        else:
            extents = re.findall(r"for \(int64_t (\w+) = 0; \1 < (\d+);",
                                 body)
            extents = [e for _, e in extents]
            what = "[%s]" % "x".join(extents[:4])
        table[name] = (kind, "%s %s" % (name, what))
    return table


def instrument(source, skip, clock="wall", kernels_text=""):
    """Returns (the instrumented source, the kernels in call-site order);
    `kernels_text` holds the fused kernels defined outside `source`."""
    shapes = _shapes(source)
    fused = _fused(source + kernels_text, shapes)
    lines = source.split("\n")
    kernels, out = [], []
    header = re.compile(r"^\s*// (dtg\.[a-z_0-9]+)(?: from '(.*)')?\s*$")
    pending = None
    for line in lines:
        m = header.match(line)
        if m:
            pending = Kernel(len(kernels), m.group(1), m.group(2) or "", "")
            kernels.append(pending)
            out.append("  dtcprof_mark(%d);" % pending.index)
        elif pending is not None and not pending.call:
            call = re.match(r"^\s*dtck::([A-Za-z_0-9]+)(<[^>(]*>)?\((.*)",
                            line)
            if call:
                args = re.findall(r"\bs\d+\b", call.group(3))
                pending.call = "%s(%s)" % (call.group(1), ", ".join(
                    shapes.get(a, a) for a in args))
            fused_call = re.match(r"^\s*(fused_\d+)\(", line)
            if fused_call and fused_call.group(1) in fused:
                kind, pending.call = fused[fused_call.group(1)]
                pending.op = "dtg.fusion:" + kind
        if re.match(r"^\s*fn_\w+\(args, results, ctx, 0\);\s*$", line):
            line = ("  ++dtcprof_step_index; dtcprof_current = -1;\n"
                    "  dtcprof_step_start = dtcprof_now();\n" + line +
                    "\n  dtcprof_mark(-1);\n"
                    "  if (dtcprof_step_index > %d) { ++dtcprof_steps; "
                    "dtcprof_step_ns += dtcprof_now() - dtcprof_step_start; "
                    "}" % skip)
        out.append(line)
    if not kernels:
        raise SystemExit("error: no '// dtg.OP' kernel comments in the "
                         "source (not a dtc CPU program?)")
    text = "\n".join(out)
    # The prelude goes after the includes, before the first declaration.
    at = text.index("\n\n", text.index("#include")) + 1
    prelude = _PRELUDE % {
        "n": len(kernels), "skip": skip,
        "clock": "CLOCK_MONOTONIC" if clock == "wall" else
                 "CLOCK_THREAD_CPUTIME_ID"}
    return text[:at] + prelude + text[at:], kernels


def _config():
    if not os.path.isfile(CONFIG):
        raise SystemExit("error: no %s (build dtc first)" % CONFIG)
    values = {}
    with open(CONFIG) as f:
        for m in re.finditer(r'#define (\w+) "(.*)"', f.read()):
            values[m.group(1)] = m.group(2)
    return values


#: The flags dtc builds generated kernels with (compiler/Target/CPU/
#: CPUTarget.cpp) for this machine; --cxxflags come after them. (At -O2,
#: GCC 12 does not vectorize loops: fused kernels then take 2-5x as long as
#: in dtc's own build.)
BASE_FLAGS = ("-O3 -ffp-contract=off -fno-trapping-math -fno-math-errno "
              "-march=native -fopenmp -w")


def build(source_paths, binary, cxxflags):
    config = _config()
    argv = [config["DTC_HOST_CXX"], "-std=c++17"] + BASE_FLAGS.split()
    argv += cxxflags.split()
    argv += ["-I" + config["DTC_RUNTIME_INCLUDE_DIR"]] + source_paths
    argv += ["-o", binary, config["DTC_RUNTIME_LIBRARY"]]
    argv += config["DTC_RUNTIME_LINK_LIBRARIES"].split()
    proc = subprocess.run(argv, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True)
    if proc.returncode != 0:
        raise SystemExit("error: building the instrumented program failed:\n"
                         + proc.stdout[-3000:])


def run(binary, data, steps, threads, dump):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS="1", DTCPROF_OUT=dump)
    argv = [binary, "--steps", str(steps)]
    argv += ["--data", data] if data else ["--synthetic"]
    proc = subprocess.run(argv, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=env)
    if proc.returncode != 0:
        raise SystemExit("error: %s failed: %s" % (binary,
                                                   proc.stderr[-2000:]))
    with open(dump) as f:
        first = f.readline().split()
        steps_counted, step_ns = int(first[1]), float(first[2])
        per_kernel = {}
        for line in f:
            i, ns, count = line.split()
            if int(count):
                per_kernel[int(i)] = (float(ns), int(count))
    if steps_counted == 0:
        raise SystemExit("error: no step was counted (--steps must exceed "
                         "--skip)")
    return steps_counted, step_ns, per_kernel


def category(op):
    kind = op[len("dtg."):]
    for label, ops in CATEGORIES:
        if kind in ops:
            return label
    return "elementwise (%s)" % "add/mul/sub/div/cast/gelu/..."


def product_flops(op, call):
    """Floating-point operations of one call of a product (2 M N K), from
    the call's label: a fused gemm kernel's "[AxBxC] k=K", a matmul's or
    gemm's operand shapes; None for anything else (convolutions are not
    counted)."""
    dims = lambda text: [int(d) for d in text.split("x") if d]
    kind = op[len("dtg."):]
    if kind == "fusion:gemm":
        m = re.search(r"\[([\dx]+)\] k=(\d+)", call)
        return 2 * math.prod(dims(m.group(1))) * int(m.group(2)) if m else None
    shapes = [dims(x) for x in re.findall(r"\[([\dx]+)\]", call)]
    if kind == "matmul" and len(shapes) >= 3 and shapes[0]:
        return 2 * math.prod(shapes[-1]) * shapes[0][-1]
    if kind == "gemm" and len(shapes) >= 3 and len(shapes[-1]) == 2:
        rows, cols = shapes[-1]
        return 2 * cols * math.prod(shapes[0]) if rows else None
    return None


def calibrated_peak(threads):
    """`dtc calibrate --threads N`'s GEMM peak (FLOP/s), or None."""
    dtc = os.path.join(ROOT, "build", "bin", "dtc")
    try:
        out = subprocess.run([dtc, "calibrate", "--threads", str(threads)],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, timeout=120).stdout
        return float(json.loads(out)["peak_gemm_flops"])
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        return None


def report(kernels, runs, threads, top):
    """Prints the tables; runs[i] = (steps, step_ns, per_kernel) for
    threads[i]."""
    # Microseconds for steps under a millisecond (the MLP's), else ms.
    unit, scale = ("us", 1e3) if max(
        step_ns / steps for steps, step_ns, _ in runs) < 1e6 else ("ms", 1e6)
    ms = []  # per run: kernel index -> time per step, in `unit`
    steps_ms = []
    for steps, step_ns, per_kernel in runs:
        ms.append({i: ns / steps / scale for i, (ns, _) in
                   per_kernel.items()})
        steps_ms.append(step_ns / steps / scale)
    # Calls per step of each call site (the eval step's sites never run).
    last_steps, _, last_kernels = runs[-1]
    calls = {i: count / last_steps for i, (_, count) in last_kernels.items()}
    cols = "".join("%14s" % ("%d thr %s" % (t, unit)) for t in threads)
    share = "  share(%d thr)" % threads[-1]

    def table(title, groups):
        print("\n%s" % title)
        print("  %-48s %6s%s%s" % ("", "calls", cols, share))
        last = steps_ms[-1]
        rows = sorted(groups.items(), key=lambda kv: -sum(
            ms[-1].get(i, 0) for i in kv[1]))
        return rows, last

    def line(label, ids, last):
        values = [sum(run.get(i, 0) for i in ids) for run in ms]
        print("  %-48s %6.0f%s %12.1f%%" % (
            label[:48], sum(calls.get(i, 0) for i in ids),
            "".join("%14.2f" % v for v in values),
            100 * values[-1] / last if last else 0))

    print("step time (%s, mean over the counted steps): %s" % (unit,
          ", ".join("%d thr %.1f" % (t, s) for t, s in zip(threads,
                                                           steps_ms))))
    kernel_ms = [sum(run.values()) for run in ms]
    print("inside kernels: %s; outside (call overhead, gaps): %s" % (
        ", ".join("%.1f" % k for k in kernel_ms),
        ", ".join("%.1f" % (s - k) for s, k in zip(steps_ms, kernel_ms))))

    by_category = collections.defaultdict(list)
    by_op = collections.defaultdict(list)
    by_call = collections.defaultdict(list)
    for k in kernels:
        if k.index not in calls:
            continue  # never ran (the eval step)
        by_category[category(k.op)].append(k.index)
        by_op[k.op].append(k.index)
        by_call["%s %s" % (k.op[4:], k.call)].append(k.index)
    for title, groups, limit in (("by category", by_category, None),
                                 ("by op kind", by_op, None),
                                 ("top kernels by op and shapes", by_call,
                                  top)):
        rows, last = table(title, groups)
        for label, ids in rows[:limit]:
            line(label, ids, last)

    # The products' achieved FLOP/s against the calibrated GEMM peak.
    flops, ids = 0, []
    for k in kernels:
        per_call = product_flops(k.op, k.call) if k.index in calls else None
        if per_call:
            flops += per_call * calls[k.index]
            ids.append(k.index)
    if flops:
        print("\nproducts (matmul, gemm, fused gemm kernels; convolutions "
              "not counted): %.3f GFLOP a step" % (flops / 1e9))
        for t, run in zip(threads, ms):
            seconds = sum(run.get(i, 0) for i in ids) * scale / 1e9
            peak = calibrated_peak(t)
            rate = flops / seconds if seconds else 0
            print("  %d thr: %.2f %s in them, %.1f GFLOP/s%s" % (
                t, seconds * 1e9 / scale, unit, rate / 1e9,
                " = %.0f%% of `dtc calibrate --threads %d`'s %.1f" % (
                    100 * rate / peak, t, peak / 1e9) if peak else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Per-kernel time of a dtc-compiled training step.",
        allow_abbrev=False)
    parser.add_argument("outdir", help="a `dtc compile -o` folder")
    parser.add_argument("--data", help="NAME=FILE.npy,... as for train "
                        "(default --synthetic)")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--skip", type=int, default=2,
                        help="first steps not counted (default 2)")
    parser.add_argument("--threads", default="2",
                        help="OMP_NUM_THREADS values, comma-separated "
                        "(default 2)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time (default), or the main thread's "
                        "CPU time: with --threads 1 the kernels' cost even "
                        "on a loaded machine")
    parser.add_argument("--cxxflags", default="",
                        help="extra flags for the build, after dtc's own "
                        "(e.g. -march=x86-64-v3)")
    parser.add_argument("--keep", help="build in this folder and keep it")
    args = parser.parse_args(argv)
    threads = [int(t) for t in args.threads.split(",") if t]
    if args.steps <= args.skip:
        parser.error("--steps must exceed --skip")
    source = os.path.join(args.outdir, "train.cpp")
    if not os.path.isfile(source):
        parser.error("no train.cpp in '%s'" % args.outdir)
    work = args.keep or tempfile.mkdtemp(prefix="dtc-profile-")
    os.makedirs(work, exist_ok=True)
    try:
        # The fused kernels dtc put in files of their own are built as
        # they are.
        kernel_files = [os.path.join(args.outdir, name)
                        for name in sorted(os.listdir(args.outdir))
                        if name.startswith("train-kernels-") and
                        name.endswith(".cpp")]
        kernels_text = ""
        for path in kernel_files:
            with open(path) as f:
                kernels_text += f.read()
        with open(source) as f:
            text, kernels = instrument(f.read(), args.skip, args.clock,
                                       kernels_text)
        copy = os.path.join(work, "train.cpp")
        with open(copy, "w") as f:
            f.write(text)
        sources = [copy]
        for path in kernel_files:
            shutil.copy(path, work)
            sources.append(os.path.join(work, os.path.basename(path)))
        # train finds weights.bin and model.onnx next to itself.
        for name in ("weights.bin", "model.onnx"):
            if os.path.exists(os.path.join(args.outdir, name)):
                shutil.copy(os.path.join(args.outdir, name), work)
        binary = os.path.join(work, "train")
        build(sources, binary, args.cxxflags)
        runs = [run(binary, args.data, args.steps, t,
                    os.path.join(work, "profile-%d.txt" % t))
                for t in threads]
        print("%s: %d kernels per step, %d steps counted (after %d), "
              "%s clock, flags %s %s; load average %.2f" % (
                  args.outdir, sum(c for _, c in runs[-1][2].values()) //
                  runs[-1][0], runs[0][0], args.skip,
                  args.clock, BASE_FLAGS, args.cxxflags,
                  os.getloadavg()[0]))
        report(kernels, runs, threads, args.top)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
