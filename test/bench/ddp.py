#!/usr/bin/python3
"""dtc at dp=2 against PyTorch DistributedDataParallel (gloo), same run.

For each case (the GPT example at two sizes; AdamW, fp32) it

1. exports the model with examples/gpt/make_example.py (training mode,
   dynamic batch axis, training data);
2. compiles it with `dtc compile --mesh 2x1x1 --zero Z` at the case's global
   batch, and runs `mpirun -np 2 OUT/train` with one thread per rank
   (OMP_NUM_THREADS=1): the median step_time_s of the timed steps (the
   runtime times the whole step, collectives included);
3. runs the same model in PyTorch DDP: 2 processes (torch.distributed, gloo
   backend, one thread each: torch.set_num_threads(1)), each with the
   export's initial weights (examples/common/train_reference.py), its half
   of each global batch (the samples dtc's rank takes), AdamW with dtc's
   defaults; the median time of the timed steps on rank 0 (forward,
   backward with DDP's bucketed all-reduce overlapped, optimizer step);
4. prints steps per second of both, the ratio dtc / DDP, and both first
   losses (the same model and data: they agree within 1e-4).

The peer runs under the Python running this script (a venv's PyTorch 2 from
PyPI, say: `/path/to/venv/bin/python test/bench/ddp.py`); dtc's export uses
Debian's /usr/bin/python3 (--exporter). Not part of the suite. Run with
--help for the options.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "common"))

#: name: (make_example.py size options, global batch, lr, timed steps,
#: warm-up steps)
CASES = {
    "gpt-small": ({}, 8, 3e-3, 40, 5),
    "gpt-large": (dict(vocab=512, seq=128, hidden=256, heads=4, layers=4), 8,
                  1e-3, 10, 2),
}
BETAS, EPS, WEIGHT_DECAY = (0.9, 0.999), 1e-8, 0.01


def run(argv, env=None):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, env=env)
    if proc.returncode != 0:
        sys.exit("ddp.py: %s failed:\n%s" % (" ".join(argv[:3]),
                                             proc.stderr[-2000:]))
    return proc.stdout


def mpi_env(threads):
    env = dict(os.environ)
    env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return env


def dtc_side(args, name, work):
    sizes, batch, lr, steps, warmup = CASES[name]
    model_dir = os.path.join(work, name)
    run([args.exporter, os.path.join(ROOT, "examples", "gpt", "make_example.py"),
         "--out", model_dir, "--training", "--opset", "17", "--batch",
         str(batch), "--train-data", str(batch * (steps + warmup))] +
        [x for k, v in sizes.items() for x in ("--" + k, str(v))])
    out = os.path.join(work, name + "-dtc")
    run([args.dtc, "compile", os.path.join(model_dir, "model.onnx"), "--mesh",
         "2x1x1", "--zero", str(args.zero), "-o", out, "--global-batch",
         str(batch), "--optimizer", "adamw", "--lr", str(lr)])
    log = os.path.join(out, "log.jsonl")
    data = os.path.join(model_dir, "train")
    run(["mpirun", "--oversubscribe", "-np", "2", os.path.join(out, "train"),
         "--data", "tokens=%s/tokens.npy,targets=%s/targets.npy" % (data, data),
         "--steps", str(steps + warmup), "--log-jsonl", log], env=mpi_env(1))
    with open(log) as f:
        lines = [json.loads(line) for line in f]
    times = [line["step_time_s"] for line in lines[warmup:]]
    return model_dir, statistics.median(times), lines[0]["loss"]


def ddp_worker(rank, name, model_dir, port, result):
    import numpy as np
    import torch
    import torch.distributed as dist
    import train_reference

    torch.set_num_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2)
    sizes, batch, lr, steps, warmup = CASES[name]
    spec = train_reference.load_example("gpt")
    spec.configure(**sizes)
    model, _, onnx_model = train_reference.load_model(spec, model_dir)
    arrays = train_reference.load_data(spec, os.path.join(model_dir, "train"),
                                       onnx_model)
    model.train()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(ddp.parameters(), lr=lr, betas=BETAS,
                                  eps=EPS, weight_decay=WEIGHT_DECAY)
    n, local = arrays[0].shape[0], batch // 2
    times, first = [], None
    import time
    for k in range(steps + warmup):
        # The global batch's rows in order; this rank's half, as dtc's.
        index = (k * batch + rank * local + np.arange(local)) % n
        inputs = [torch.from_numpy(np.ascontiguousarray(a[index]))
                  for a in arrays]
        dist.barrier()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        _, loss = ddp(*inputs)
        loss.backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
        # The global batch's loss (each half's mean, averaged), to log.
        logged = loss.detach().clone()
        dist.all_reduce(logged)
        if first is None:
            first = float(logged) / 2
    if rank == 0:
        with open(result, "w") as f:
            json.dump({"median": statistics.median(times[warmup:]),
                       "first_loss": first}, f)
    dist.destroy_process_group()


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--zero", type=int, default=0)
    parser.add_argument("--dtc", default=os.path.join(ROOT, "build", "bin",
                                                      "dtc"))
    parser.add_argument("--exporter", default="/usr/bin/python3",
                        help="the Python (with PyTorch) that exports")
    parser.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv[1:])
    if args.worker:
        rank, name, model_dir, port_result = args.worker
        port, result = port_result.split(":", 1)
        ddp_worker(int(rank), name, model_dir, int(port), result)
        return 0
    import torch
    print("ddp.py: PyTorch %s (%s), 2 ranks x 1 thread each" % (
        torch.__version__, sys.executable))
    with tempfile.TemporaryDirectory() as work:
        for name in args.cases.split(","):
            model_dir, dtc_time, dtc_loss = dtc_side(args, name, work)
            result = os.path.join(work, name + "-ddp.json")
            port = 29500 + (os.getpid() * 7 + len(name) * 131 + sum(map(ord, name))) % 20000
            env = dict(os.environ, OMP_NUM_THREADS="1")
            workers = [subprocess.Popen(
                [sys.executable, __file__, "--worker", str(r), name, model_dir,
                 "%d:%s" % (port, result)], env=env) for r in range(2)]
            if any(w.wait() != 0 for w in workers):
                sys.exit("ddp.py: a DDP worker failed")
            with open(result) as f:
                ddp = json.load(f)
            ratio = ddp["median"] / dtc_time
            print("%-10s dtc %8.2f steps/s  DDP %8.2f steps/s  ratio %.2f  "
                  "(first loss dtc %.6f, DDP %.6f)" % (
                      name, 1 / dtc_time, 1 / ddp["median"], ratio, dtc_loss,
                      ddp["first_loss"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
