#!/usr/bin/python3
"""Training speed of dtc's CUDA target against PyTorch on the same GPU.

Two halves, because the GPU machine has no MLIR (dtc cannot run there):

  cuda_speed.py prepare --out DIR [--arch 90]
      on the build machine: exports the GPT example at each case's size
      (make_example.py, opset 17, training data), compiles it with
      `dtc compile --target cuda` (mesh 1x1x1, AdamW, fp32, the export's batch
      as the global batch) into DIR/CASE/cuda, and copies the shared
      libraries `train` needs that a bare CUDA machine lacks (OpenMPI's and
      protobuf's, from `ldd`) into DIR/lib.

  cuda_speed.py run --dir DIR
      on the GPU machine: runs each DIR/CASE/cuda/train for --steps steps and
      takes the median `step_time_s` after the warm-up; then trains
      examples/gpt/model.py's GPT of the same size on the GPU with
      torch.optim.AdamW (same hyperparameters and batch, fp32, TF32 off as
      PyTorch's default) in eager mode and under torch.compile, timing
      zero_grad + forward + backward + step with CUDA synchronization, and
      prints per case: tokens/s of each, dtc / eager and dtc / compile
      (above 1 when dtc is faster), and dtc's model FLOP utilization (6 x
      parameters x tokens/s over the GPU's fp32 peak, --peak-tflops).

The PyTorch peer starts from its own random weights (timing only: the
examples' 20-step trajectories check dtc's CUDA training against its CPU
target, see test/cuda/).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
EXAMPLES = os.path.join(ROOT, "examples")

#: name: (make_example.py sizes, batch, samples).
CASES = {
    "gpt-large": (dict(vocab=512, seq=128, hidden=256, heads=4, layers=4), 8,
                  64),
    "gpt-medium": (dict(vocab=1024, seq=256, hidden=384, heads=6, layers=2),
                   32, 64),
}
LR = 1e-3
#: Libraries a CUDA machine has: not copied.
SYSTEM = ("linux-vdso", "libc.so", "libm.so", "ld-linux", "libgcc_s",
          "libstdc++", "libpthread", "libdl.so", "librt.so", "libcudart",
          "libcublas", "libnccl", "libcudnn")


def wheel_lib_dirs():
    """The folders of PyTorch's NCCL and cuDNN (the nvidia-nccl and
    nvidia-cudnn wheels), which a GPU machine with PyTorch has: they are
    too large to carry."""
    dirs = []
    for name in ("nccl", "cudnn"):
        try:
            module = __import__("nvidia." + name, fromlist=["_"])
            dirs.append(os.path.join(list(module.__path__)[0], "lib"))
        except ImportError:
            pass
    return ":".join(dirs)


def run(argv, env=None):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)
    if proc.returncode != 0:
        sys.exit("%s failed (exit %d):\n%s" % (
            argv[0], proc.returncode, proc.stderr[-3000:]))
    return proc.stdout


def prepare(args):
    dtc = args.dtc or os.path.join(ROOT, "build", "bin", "dtc")
    os.makedirs(os.path.join(args.out, "lib"), exist_ok=True)
    for name, (sizes, batch, samples) in CASES.items():
        folder = os.path.join(args.out, name)
        argv = ["/usr/bin/python3",
                os.path.join(EXAMPLES, "gpt", "make_example.py"), "--out",
                folder, "--training", "--batch", str(batch), "--train-data",
                str(samples)]
        for key, value in sizes.items():
            argv += ["--" + key, str(value)]
        run(argv)
        run([dtc, "compile", os.path.join(folder, "model.onnx"), "--mesh",
             "1x1x1", "-o", os.path.join(folder, "cuda"), "--target", "cuda",
             "--cuda-arch", args.arch, "--global-batch", str(batch),
             "--optimizer", "adamw", "--lr", str(LR)])
        # Only what `train` reads travels.
        os.remove(os.path.join(folder, "model.onnx"))
        for leftover in ("model.onnx", "train.cu", "step.mlir", "build.log",
                         "CMakeLists.txt"):
            path = os.path.join(folder, "cuda", leftover)
            if os.path.exists(path):
                os.remove(path)
        for leftover in ("logits.npy", "loss.npy", "tokens.npy",
                         "targets.npy"):
            path = os.path.join(folder, leftover)
            if os.path.exists(path):
                os.remove(path)
        with open(os.path.join(folder, "case.json"), "w") as f:
            json.dump(dict(sizes=sizes, batch=batch), f)
        for line in run(["ldd", os.path.join(folder, "cuda", "train")
                         ]).splitlines():
            parts = line.split("=>")
            if len(parts) != 2 or any(s in parts[0] for s in SYSTEM):
                continue
            path = parts[1].split("(")[0].strip()
            if path and os.path.exists(path):
                shutil.copy2(path, os.path.join(args.out, "lib"))


def time_dtc(folder, lib, steps, profile=None, sync=False):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ":".join(
        [lib, wheel_lib_dirs(), env.get("LD_LIBRARY_PATH", "")])
    if profile:
        env["DTCG_PROFILE"] = profile
    if sync:
        # Every step waited for before the next batch is read and copied.
        env["DTCG_SYNC_STEPS"] = "1"
    log = os.path.join(folder, "cuda", "speed.jsonl")
    data = ",".join("%s=%s" % (n, os.path.join(folder, "train", n + ".npy"))
                    for n in ("tokens", "targets"))
    run([os.path.join(folder, "cuda", "train"), "--data", data, "--steps",
         str(steps), "--log-jsonl", log], env=env)
    lines = [json.loads(l) for l in open(log)]
    times = [l["step_time_s"] for l in lines[max(2, len(lines) // 5):]]
    return statistics.median(times), lines[0]["loss"]


def time_torch(sizes, batch, steps, compiled):
    import torch
    sys.path.insert(0, os.path.join(EXAMPLES, "gpt"))
    from model import GPT, GPTConfig
    config = GPTConfig(vocab_size=sizes["vocab"], block_size=sizes["seq"],
                       n_layer=sizes["layers"], n_head=sizes["heads"],
                       n_embd=sizes["hidden"], dropout=0.0)
    torch.manual_seed(0)
    model = GPT(config).cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.999),
                            eps=1e-8, weight_decay=0.01)
    tokens = torch.randint(0, sizes["vocab"], (batch, sizes["seq"]),
                           device="cuda")
    targets = torch.randint(0, sizes["vocab"], (batch, sizes["seq"]),
                            device="cuda")
    step_model = torch.compile(model) if compiled else model

    def step():
        opt.zero_grad(set_to_none=True)
        out = step_model(tokens, targets)
        loss = out[1] if isinstance(out, (tuple, list)) else out
        loss.backward()
        opt.step()

    for _ in range(5):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
    params = sum(p.numel() for p in model.parameters())
    return statistics.median(times), params, torch.cuda.get_device_name()


def run_cases(args):
    lib = os.path.join(args.dir, "lib")
    results = []
    for name in CASES:
        folder = os.path.join(args.dir, name)
        if not os.path.isdir(folder):
            continue  # not prepared (or not carried)
        case = json.load(open(os.path.join(folder, "case.json")))
        sizes, batch = case["sizes"], case["batch"]
        tokens = batch * sizes["seq"]
        profile = None
        if args.profile:
            os.makedirs(args.profile, exist_ok=True)
            profile = os.path.join(args.profile, name + ".profile.txt")
            # The profile's events cost time: timed in a run of its own.
            time_dtc(folder, lib, 10, profile)
        dtc_s, _ = time_dtc(folder, lib, args.steps)
        sync_s, _ = time_dtc(folder, lib, args.steps, sync=True)
        eager_s, params, device = time_torch(sizes, batch, args.steps, False)
        compile_s, _, _ = time_torch(sizes, batch, args.steps, True)
        mfu = 6.0 * params * tokens / dtc_s / (args.peak_tflops * 1e12)
        line = ("%s  params %d  tokens/s: dtc %.0f (synchronous steps %.0f)"
                "  eager %.0f  compile %.0f"
                "  dtc/eager %.2f  dtc/compile %.2f  dtc MFU %.2f%% (%s, fp32 "
                "peak %.0f TFLOP/s)" % (
                    name, params, tokens / dtc_s, tokens / sync_s,
                    tokens / eager_s,
                    tokens / compile_s, eager_s / dtc_s, compile_s / dtc_s,
                    100 * mfu, device, args.peak_tflops))
        print(line, flush=True)
        results.append(line)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--out", required=True)
    p.add_argument("--arch", default="90")
    p.add_argument("--dtc")
    r = sub.add_parser("run")
    r.add_argument("--dir", required=True)
    r.add_argument("--steps", type=int, default=30)
    r.add_argument("--profile", metavar="DIR",
                   help="also write DIR/CASE.profile.txt: dtc's device time "
                   "per op (DTCG_PROFILE, a run of its own)")
    r.add_argument("--peak-tflops", type=float, default=67.0,
                   help="the GPU's fp32 (non-tensor-core) peak; H100 SXM: 67")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args)
    else:
        run_cases(args)


if __name__ == "__main__":
    main()
