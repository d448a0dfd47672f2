#!/usr/bin/python3
"""dtc at real model sizes: GPT-2 small and medium shapes against PyTorch.

For each case (the GPT example at GPT-2's shapes: small 768 hidden, 12
heads, 12 layers; medium 1024, 16, 24; vocabulary 50257, 128 tokens; batch
2; AdamW, fp32) it

1. exports the model with examples/gpt/make_example.py and rewrites it with
   every weight as ONNX external data (as models of this size are shipped);
2. runs `dtc compile --timing` (cold: ccache is bypassed) and records the
   wall time, dtc's own part (everything but the host compiler), dtc's peak
   RSS and the host compiler's peak RSS (polled from /proc);
3. runs OUT/train for warmup + steps steps at 1 and at 2 threads: median
   step time, peak RSS (VmHWM), plan.json's peak and the runtime's measured
   one, every step's loss;
4. trains the same module in eager PyTorch (the torch of the Python running
   this script, e.g. a venv's PyTorch 2 from PyPI, in a child
   process per thread count, from the export's weights on the same batches:
   test/bench/train_speed.py's _torch_times) and, where torch >= 2, with
   torch.compile: median step time, peak RSS of the whole process, every
   step's loss (dtc's held against eager's, step by step);
5. reports the generated source's bytes (and each case's against the
   cases before it: GPT-2 medium has twice small's layers);
6. reports achieved FLOP/s (plan.json's flops_per_step over dtc's step time)
   and, with --profile PROFILE.json (`dtc calibrate`), against the GEMM peak.

Prints one block per case and the ratios (dtc / PyTorch steps per second;
PyTorch RSS / dtc RSS). Not part of the suite: a run takes minutes and
several GB. Run with --help for the options.
"""

import argparse
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


speed = _load("train_speed", os.path.join(HERE, "train_speed.py"))

CASES = {
    "gpt2-small": speed.Case("gpt2-small", "gpt", batch=2, samples=16,
                             lr=1e-4, steps=3, warmup=1,
                             sizes=dict(vocab=50257, seq=128, hidden=768,
                                        heads=12, layers=12)),
    "gpt2-medium": speed.Case("gpt2-medium", "gpt", batch=2, samples=16,
                              lr=1e-4, steps=3, warmup=1,
                              sizes=dict(vocab=50257, seq=128, hidden=1024,
                                         heads=16, layers=24)),
}


def hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_polled(argv, env=None, children=()):
    """Runs argv; returns (wall seconds, its peak RSS in kB, the largest
    peak RSS of a process named in `children` seen meanwhile, stdout,
    stderr)."""
    start = time.perf_counter()
    out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
    proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
    peak, child_peak = 0, 0
    while proc.poll() is None:
        peak = max(peak, hwm_kb(proc.pid))
        for name in children:
            found = subprocess.run(["pgrep", "-x", name],
                                   stdout=subprocess.PIPE, text=True).stdout
            for pid in found.split():
                child_peak = max(child_peak, hwm_kb(int(pid)))
        time.sleep(0.05)
    wall = time.perf_counter() - start
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read().decode(), err.read().decode()
    if proc.returncode != 0:
        raise speed.BenchError("%s failed:\n%s" % (" ".join(argv[:3]),
                                                   stderr[-2000:]))
    return wall, peak, child_peak, stdout, stderr


def export(case, directory, exporter):
    """Exports the case with `exporter` (a Python whose PyTorch exports
    the examples: Debian's, by default, whatever torch runs the peer) and
    rewrites it with external data."""
    argv = [exporter, os.path.join(ROOT, "examples", case.example,
                                   "make_example.py"),
            "--out", os.path.join(directory, "inline"), "--opset", "17",
            "--training", "--batch", str(case.batch), "--train-data",
            str(case.samples)]
    for name, value in sorted(case.sizes.items()):
        argv += ["--" + name, str(value)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    inputs = speed._model_inputs(os.path.join(directory, "inline"))
    with open(os.path.join(directory, "inline", "inputs.json"), "w") as f:
        json.dump(inputs, f)
    external = os.path.join(directory, "external")
    subprocess.run([sys.executable, os.path.join(
        ROOT, "test", "e2e", "Inputs", "to_external_data.py"),
        os.path.join(directory, "inline", "model.onnx"),
        os.path.join(external, "model.onnx"), "--location", "weights.data"],
        check=True)
    shutil.copytree(os.path.join(directory, "inline", "train"),
                    os.path.join(external, "train"))
    shutil.copy(os.path.join(directory, "inline", "inputs.json"), external)
    return external


def compile_case(dtc, case, model_dir, out):
    env = dict(os.environ)
    env["CCACHE_DISABLE"] = "1"
    wall, peak, host_peak, _, stderr = run_polled(
        [dtc, "compile", os.path.join(model_dir, "model.onnx"), "-o", out,
         "--global-batch", str(case.batch), "--optimizer", "adamw", "--lr",
         str(case.lr), "--timing"], env=env, children=("cc1plus",))
    host = 0.0
    match = re.search(r"^\s*([\d.]+) \(.*\)\s+host compiler", stderr, re.M)
    if match:
        host = float(match.group(1))
    return {"wall_s": wall, "dtc_own_s": wall - host, "host_s": host,
            "dtc_rss_mb": peak / 1024, "host_rss_mb": host_peak / 1024}


def dtc_train(case, out, model_dir, threads):
    log = os.path.join(out, "bench-%d.jsonl" % threads)
    if os.path.exists(log):
        os.remove(log)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS="1")
    _, peak, _, _, _ = run_polled(
        [os.path.join(out, "train"), "--data",
         speed._data_flag(case, model_dir), "--steps",
         str(case.warmup + case.steps), "--log-jsonl", log], env=env)
    with open(log) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    times = [line["step_time_s"] for line in lines[case.warmup:]]
    return {"step_s": statistics.median(times), "rss_mb": peak / 1024,
            "measured_peak": lines[-1]["memory_peak_bytes"],
            "losses": [line["loss"] for line in lines]}


def torch_train(case, model_dir, threads, compiled):
    """Runs this script's --torch-worker in a child (its own threads and
    RSS)."""
    # Both sides get `threads` cores: PyTorch's matrix products go to
    # OpenBLAS, whose own threads would otherwise add to OpenMP's.
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               OPENBLAS_NUM_THREADS=str(threads))
    argv = [sys.executable, os.path.abspath(__file__), "--torch-worker",
            case.name, model_dir, str(threads)]
    if compiled:
        argv.append("--compiled")
    _, peak, _, stdout, _ = run_polled(argv, env=env)
    result = json.loads(stdout.strip().splitlines()[-1])
    result["rss_mb"] = peak / 1024
    return result


def torch_worker(argv):
    name, model_dir, threads = argv[:3]
    case = CASES[name]
    losses = []
    times, first, _ = speed._torch_times(
        case, "fp32", int(threads), model_dir, case.warmup + case.steps,
        "--compiled" in argv, losses)
    print(json.dumps({"step_s": statistics.median(times[case.warmup:]),
                      "first_loss": first, "losses": losses}))
    return 0


def gemm_peak(profile):
    """The fp32 GEMM peak of a `dtc calibrate` profile, in FLOP/s."""
    with open(profile) as f:
        return json.load(f).get("peak_gemm_flops")


def main(argv):
    if argv[1:2] == ["--torch-worker"]:
        return torch_worker(argv[2:])
    parser = argparse.ArgumentParser()
    parser.add_argument("cases", nargs="*", default=list(CASES))
    parser.add_argument("--dtc", default=os.path.join(ROOT, "build", "bin",
                                                      "dtc"))
    parser.add_argument("--work", help="folder for the models (kept)")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--profile", help="dtc calibrate's profile, for the "
                        "GEMM peak")
    parser.add_argument("--exporter", default="/usr/bin/python3",
                        help="the Python that exports the models (default "
                        "Debian's, with PyTorch 1.13); the peer runs under "
                        "the Python running this script")
    args = parser.parse_args(argv[1:])
    work = args.work or tempfile.mkdtemp(prefix="dtc-real-size-")
    threads = [int(t) for t in args.threads.split(",")]
    import torch
    has_compile = hasattr(torch, "compile")
    print("torch %s (torch.compile %s); %s" % (
        torch.__version__, "available" if has_compile else
        "not in this version", speed._cpu_name()))
    sources = {}
    for name in args.cases:
        case = CASES[name]
        directory = os.path.join(work, name)
        model_dir = export(case, directory, args.exporter)
        inline = os.path.join(directory, "inline")
        out = os.path.join(directory, "out")
        c = compile_case(args.dtc, case, model_dir, out)
        with open(os.path.join(out, "plan.json")) as f:
            plan = json.load(f)
        print("%s: %d parameters" % (name, plan["parameters_total"]))
        print("  dtc compile: %.1f s wall (dtc %.2f s, host compiler %.1f s);"
              " peak RSS dtc %.0f MB, host compiler %.0f MB" % (
                  c["wall_s"], c["dtc_own_s"], c["host_s"], c["dtc_rss_mb"],
                  c["host_rss_mb"]))
        sources[name] = os.path.getsize(os.path.join(out, "train.cpp"))
        print("  train.cpp: %d bytes%s" % (sources[name], "".join(
            " (%.2fx %s's)" % (sources[name] / b, n)
            for n, b in sources.items() if n != name)))
        for t in threads:
            d = dtc_train(case, out, model_dir, t)
            e = torch_train(case, inline, t, False)
            line = ("  %d thread%s: dtc %.3f steps/s, RSS %.0f MB (plan %.0f "
                    "MB, measured %.0f MB); torch eager %.3f steps/s, RSS "
                    "%.0f MB; ratio %.2f, RSS ratio torch/dtc %.2f" % (
                        t, "s" if t > 1 else "", 1 / d["step_s"],
                        d["rss_mb"], plan["ranks"][0]["memory_bytes"]["peak"]
                        / 2**20, d["measured_peak"] / 2**20,
                        1 / e["step_s"], e["rss_mb"],
                        e["step_s"] / d["step_s"], e["rss_mb"] / d["rss_mb"]))
            if has_compile:
                k = torch_train(case, inline, t, True)
                line += "; torch.compile %.3f steps/s (ratio %.2f)" % (
                    1 / k["step_s"], k["step_s"] / d["step_s"])
            print(line)
            diff = abs(d["losses"][0] - e["first_loss"]) / abs(
                e["first_loss"])
            worst = max(abs(a - b) / abs(b)
                        for a, b in zip(d["losses"], e["losses"]))
            print("    first loss: dtc %.9g, torch %.9g (relative %.1e); "
                  "%d steps' losses within %.1e relative" % (
                      d["losses"][0], e["first_loss"], diff,
                      min(len(d["losses"]), len(e["losses"])), worst))
            flops = plan["flops_per_step"] / d["step_s"]
            text = "    achieved %.1f GFLOP/s" % (flops / 1e9)
            if args.profile:
                peak = gemm_peak(args.profile)
                if peak:
                    text += " (%.0f%% of the calibrated GEMM peak)" % (
                        100 * flops / peak)
            print(text)
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
