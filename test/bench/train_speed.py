#!/usr/bin/python3
"""Training speed of dtc's compiled step against the peers a user would pick
instead on a CPU, as ratios.

The peers (each optional; --peers chooses):

  ort       ONNX Runtime Training (onnxruntime-training-cpu): the gradient and
            AdamW graphs built by `onnxruntime.training.artifacts` from the
            same model.onnx dtc compiles, run by `onnxruntime.training.api`;
  eager     PyTorch 2 in eager mode;
  compile   PyTorch 2's `torch.compile` (Inductor's C++/OpenMP backend) of the
            module, the optimizer step eager;
  eager113  Debian's PyTorch 1.13 (python3-torch, OpenBLAS) in eager mode.

The first three run under the Python of the benchmark's own virtual
environment (--venv; made by test/bench/setup_peers.sh from pinned PyPI
wheels), eager113 under /usr/bin/python3. A peer whose Python lacks it is
reported as missing, not measured.

For each case (the MLP, GPT and CNN examples, a larger GPT, torchvision's
ResNet-18 and MobileNetV2, Hugging Face's LlamaForCausalLM), precision (fp32,
bf16) and thread count (--threads, default 1 and 2) it

1. exports the model with the example's make_example.py (opset 17, training
   mode, dynamic batch axis) and its training data, under /usr/bin/python3
   (torchvision's through torchvision_case.py; Hugging Face's through
   hf_case.py under the venv's Python, transformers not being a Debian
   package: eager113 is n/a for it);
2. compiles it with `dtc compile` (mesh 1x1x1, AdamW, the export's batch as
   the global batch; `--precision bf16` for bf16);
3. times, alternating for --rounds rounds, `OUT/train --data ... --steps N
   --log-jsonl` (the median `step_time_s` after the warm-up; the runtime
   times the step alone) and each peer in a fresh process of its own (the
   median time of forward + backward + optimizer step + clearing the
   gradients after the warm-up, which for torch.compile includes its
   compilation). Every side gets OMP_NUM_THREADS=N and its library's own
   thread setting (torch.set_num_threads, ORT's intra_op_num_threads);
   OPENBLAS_NUM_THREADS=1 for dtc, whose kernels do their own threading.

Every side trains the same weights (the export's initializers) on the same
batches in the same order with AdamW (lr per case, betas 0.9/0.999, eps 1e-8,
weight decay 0.01 on every parameter); bf16 is PyTorch's autocast, which ONNX
Runtime Training has no counterpart of (n/a). The first step's losses must
agree (fp32 1e-4 relative, bf16 3e-2), else the case is an error.

Also printed per case: dtc's achieved FLOP/s (plan.json's flops_per_step over
the median step time) as a fraction of the GEMM peak `dtc calibrate`
measures at that thread count, and the CPU's vector flags.

Run with --help for the options. The exit status is 1 if an fp32 case could
not be measured by dtc or a first loss disagrees.
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
#: The Python that exports the examples and runs the eager113 peer.
SYSTEM_PYTHON = "/usr/bin/python3"
DEFAULT_VENV = os.environ.get("DTC_BENCH_VENV") or os.path.join(
    os.path.expanduser("~"), ".cache", "dtc", "venv-bench")


class Case:
    """One model of the benchmark.

    example: the examples/ folder; sizes: make_example.py's size options
    (the GPT's --vocab ... --layers); batch: the export's batch, which is the
    global batch of every side; samples: training samples written (the stream
    wraps); lr: AdamW's learning rate; steps, warmup: timed and untimed steps
    of each round, by default; torchvision: `example` names a torchvision
    model that torchvision_case.py exports (64 x 64 images, 10 classes)
    instead of an examples/ folder; hf: a Hugging Face model that
    hf_case.py exports (under the venv's Python).
    """

    def __init__(self, name, example, batch, samples, lr, steps, warmup,
                 sizes=None, torchvision=False, hf=False):
        self.name = name
        self.example = example
        self.torchvision = torchvision
        self.hf = hf
        self.batch = batch
        self.samples = samples
        self.lr = lr
        self.steps = steps
        self.warmup = warmup
        self.sizes = dict(sizes or {})


#: The cases, in the order they run. gpt-small is examples/gpt as
#: make_example.py makes it; gpt-large: hidden 256, 4 heads of 64, 4 layers,
#: sequence 128, vocabulary 512, batch 8 (3.3M parameters); resnet18 and
#: mobilenetv2: torchvision's, 64 x 64 images, batch 8; llama: Hugging
#: Face's LlamaForCausalLM at the CPU speed issue's shape (vocabulary 96,
#: hidden 64, MLP 176, 2 layers, 4 heads / 2 KV heads, sequence 32), batch 8.
CASES = [
    Case("mlp", "mlp", batch=8, samples=256, lr=1e-2, steps=300, warmup=30),
    Case("gpt-small", "gpt", batch=8, samples=256, lr=3e-3, steps=100,
         warmup=10),
    Case("gpt-large", "gpt", batch=8, samples=64, lr=1e-3, steps=12,
         warmup=2, sizes=dict(vocab=512, seq=128, hidden=256, heads=4,
                              layers=4)),
    Case("llama", "llama", batch=8, samples=256, lr=1e-3, steps=100,
         warmup=10, hf=True),
    Case("cnn", "cnn", batch=8, samples=256, lr=1e-3, steps=60, warmup=6),
    Case("resnet18", "resnet18", batch=8, samples=64, lr=1e-3, steps=6,
         warmup=2, torchvision=True),
    Case("mobilenetv2", "mobilenet_v2", batch=8, samples=64, lr=1e-3,
         steps=6, warmup=2, torchvision=True),
]
#: torchvision cases' image size.
IMAGE_SIZE = 64
PRECISIONS = ("fp32", "bf16")
PEERS = ("ort", "eager", "compile", "eager113")
#: What the peers' steps per second are compared with: dtc at least this
#: many times the peer's (CPU speed issue); bf16 only against eager.
TARGETS = {("fp32", "ort"): 1.2, ("fp32", "eager"): 1.5,
           ("fp32", "compile"): 1.2, ("bf16", "eager"): 1.0}
#: Relative difference allowed between the first step's losses.
LOSS_TOLERANCE = {"fp32": 1e-4, "bf16": 3e-2}
#: 1-minute load average above which the summary warns that others were
#: using the cores.
BUSY = 0.8
#: AdamW's other hyperparameters (dtc's defaults, passed to every side).
BETAS = (0.9, 0.999)
EPS = 1e-8
WEIGHT_DECAY = 0.01


class BenchError(Exception):
    """A step of the benchmark failed; the message says which and why."""


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


def _thread_env(threads, **extra):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), **extra)
    return env


# ----------------------------------------------------------------------------
# The peers' side: `train_speed.py --worker PEER ...` in a process of its own
# ----------------------------------------------------------------------------


def _worker_batches(case, model_dir, steps):
    """The example's module with the export's weights, the ONNX model, and
    the batches of `steps` steps as lists of NumPy arrays (step k takes
    samples [(k-1)B, kB) modulo N, as dtc's train does)."""
    import numpy as np
    if case.torchvision or case.hf:
        import onnx
        sys.path.insert(0, HERE)
        if case.hf:
            import hf_case as source  # ImportError without transformers
        else:
            import torchvision_case as source
        model = source.build(case.example)
        onnx_model = onnx.load(os.path.join(model_dir, "model.onnx"))
        params = source.load_weights(model, onnx_model)
        names = json.load(open(os.path.join(model_dir, "inputs.json")))
        arrays = [np.load(os.path.join(model_dir, "train", name + ".npy"))
                  for name in names]
        return (model, onnx_model, params,
                _batches(arrays, case.batch, steps))
    sys.path.insert(0, os.path.join(EXAMPLES, "common"))
    import train_reference
    spec = train_reference.load_example(case.example)
    if case.sizes:
        spec.configure(**case.sizes)
    elif hasattr(spec, "configure"):
        spec.configure()
    data_dir = os.path.join(model_dir, train_reference.TRAIN_DATA_DIR)
    model, _, onnx_model = train_reference.load_model(spec, model_dir)
    arrays = train_reference.load_data(spec, data_dir, onnx_model)
    aliases = train_reference._parameter_aliases(model)
    initializers = {i.name for i in onnx_model.graph.initializer}
    params = sorted({n for p in model.parameters() for n in aliases[id(p)]
                     if n in initializers})
    return model, onnx_model, params, _batches(arrays, case.batch, steps)


def _batches(arrays, batch, steps):
    """Step k's batch (k from 0): samples [kB, (k+1)B) modulo N, as dtc's
    train takes them."""
    import numpy as np
    n = arrays[0].shape[0]
    batches = []
    for k in range(steps):
        index = (k * batch + np.arange(batch)) % n
        batches.append([np.ascontiguousarray(a[index]) for a in arrays])
    return batches


def _torch_times(case, precision, threads, model_dir, steps, compiled,
                 losses=None):
    """Trains `steps` steps; returns the step times, the first loss and
    PyTorch's version (and appends every loss to `losses`, if given)."""
    import torch
    torch.set_num_threads(threads)
    model, _, _, batches = _worker_batches(case, model_dir, steps)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=case.lr,
                                  betas=BETAS, eps=EPS,
                                  weight_decay=WEIGHT_DECAY)
    run = torch.compile(model) if compiled else model
    bf16 = precision == "bf16"
    times, first = [], None
    for arrays in batches:
        inputs = [torch.from_numpy(a) for a in arrays]
        start = time.perf_counter()
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16,
                            enabled=bf16):
            _, loss = run(*inputs)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - start)
        if first is None:
            first = float(loss)
        if losses is not None:
            losses.append(float(loss))
    return times, first, "PyTorch " + torch.__version__


#: The optional outputs ONNX Runtime's gradient of each op reads, after the
#: first.
ORT_GRADIENT_OUTPUTS = {"LayerNormalization": ("mean", "inv_std"),
                        "SoftmaxCrossEntropyLoss": ("log_prob",),
                        "Dropout": ("mask",)}


def _ort_times(case, precision, threads, model_dir, steps, work):
    """ONNX Runtime Training as its documentation shows it: artifacts from
    the ONNX model (the loss is the model's own `loss` output), then
    Module + Optimizer."""
    if precision != "fp32":
        raise BenchError("ONNX Runtime Training has no autocast")
    import onnxruntime
    from onnxruntime.training import artifacts, onnxblock
    from onnxruntime.training.api import CheckpointState, Module, Optimizer
    _, onnx_model, params, batches = _worker_batches(case, model_dir, steps)
    # ORT's gradients of these ops read optional outputs of the forward
    # node, which PyTorch's export leaves out: name them (the same
    # computation, more outputs).
    for node in onnx_model.graph.node:
        wanted = ORT_GRADIENT_OUTPUTS.get(node.op_type, ())
        if len(node.output) <= len(wanted):
            node.output.extend(node.output[0] + "_" + suffix
                               for suffix in wanted[len(node.output) - 1:])
    os.makedirs(work, exist_ok=True)
    artifacts.generate_artifacts(
        onnx_model, requires_grad=params, frozen_params=[], loss=None,
        loss_input_names=["loss"],
        optimizer=onnxblock.optim.AdamW(betas=BETAS, eps=EPS,
                                        weight_decay=WEIGHT_DECAY),
        artifact_directory=work)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    state = CheckpointState.load_checkpoint(os.path.join(work, "checkpoint"))
    # No eval model: the one ORT derives from a training-mode export keeps
    # BatchNormalization's training outputs, which ORT then refuses to load.
    module = Module(os.path.join(work, "training_model.onnx"), state,
                    None, device="cpu", session_options=options)
    optimizer = Optimizer(os.path.join(work, "optimizer_model.onnx"), module)
    optimizer.set_learning_rate(case.lr)
    module.train()
    times, first = [], None
    for arrays in batches:
        start = time.perf_counter()
        loss = module(*arrays)
        optimizer.step()
        module.lazy_reset_grad()
        times.append(time.perf_counter() - start)
        if first is None:
            first = float(loss)
    return times, first, "ONNX Runtime " + onnxruntime.__version__


def worker_main(args):
    """Runs one peer's round; prints {"times", "first_loss", "version"} or
    {"na": why} as one JSON line."""
    case = next(c for c in CASES if c.name == args.case)
    steps = args.warmup + args.steps
    try:
        if args.worker == "ort":
            times, first, version = _ort_times(
                case, args.precision, args.threads, args.model_dir, steps,
                args.scratch)
        else:
            times, first, version = _torch_times(
                case, args.precision, args.threads, args.model_dir, steps,
                args.worker == "compile")
    except (BenchError, ImportError) as e:
        print(json.dumps({"na": str(e)}))
        return 0
    except RuntimeError as e:  # ONNX Runtime could not train the model
        lines = [x for x in str(e).strip().splitlines() if x.strip()]
        print(json.dumps({"na": lines[-1][-300:] if lines else "failed"}))
        return 0
    print(json.dumps({"times": times[args.warmup:], "first_loss": first,
                      "version": version}))
    return 0


# ----------------------------------------------------------------------------
# dtc's side and the orchestration
# ----------------------------------------------------------------------------


def export(case, directory, venv):
    """Exports the case's model and training data into `directory`."""
    if case.hf:
        python = os.path.join(venv, "bin", "python")
        if not os.path.exists(python):
            raise BenchError("%s: needs the peers' venv (%s; "
                             "test/bench/setup_peers.sh makes it)" % (
                                 case.name, venv))
        _run([python, os.path.join(HERE, "hf_case.py"), case.example,
              directory, "--batch", str(case.batch), "--samples",
              str(case.samples)], "%s: hf_case.py" % case.name)
        return
    if case.torchvision:
        _run([SYSTEM_PYTHON, os.path.join(HERE, "torchvision_case.py"),
              case.example, directory, "--batch", str(case.batch), "--size",
              str(IMAGE_SIZE), "--samples", str(case.samples)],
             "%s: torchvision_case.py" % case.name)
        return
    argv = [SYSTEM_PYTHON,
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


def dtc_round(case, out, data_flag, threads, steps, warmup):
    """Runs OUT/train for warmup + steps steps; returns (the timed steps'
    step_time_s, the first step's loss)."""
    log = os.path.join(out, "bench.jsonl")
    if os.path.exists(log):
        os.remove(log)
    _run([os.path.join(out, "train"), "--data", data_flag,
          "--steps", str(warmup + steps), "--log-jsonl", log],
         "%s: %s/train" % (case.name, out),
         env=_thread_env(threads, OPENBLAS_NUM_THREADS="1"))
    with open(log) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    if len(lines) != warmup + steps:
        raise BenchError("%s: %s holds %d steps, expected %d" % (
            case.name, log, len(lines), warmup + steps))
    times = [float(line["step_time_s"]) for line in lines[warmup:]]
    return times, float(lines[0]["loss"])


def peer_round(args, peer, case, precision, threads, model_dir, steps,
               warmup):
    """Runs one round of `peer` in a process of its own; returns its parsed
    JSON line."""
    python = args.pythons[peer]
    argv = [python, os.path.abspath(__file__), "--worker", peer, "--case",
            case.name, "--precision", precision, "--threads", str(threads),
            "--model-dir", model_dir, "--steps", str(steps), "--warmup",
            str(warmup), "--scratch",
            os.path.join(model_dir, "ort-artifacts")]
    out = _run(argv, "%s: %s round" % (case.name, peer),
               env=_thread_env(threads))
    return json.loads(out.strip().splitlines()[-1])


class Result:
    """What one case, precision and thread count measured: steps per second
    by side, why a side has none, the first losses."""

    def __init__(self, case, precision, threads):
        self.case = case
        self.precision = precision
        self.threads = threads
        self.rate = {}  # side -> steps per second
        self.na = {}  # side -> why it has no number
        self.losses = {}
        self.error = None
        self.flops_per_step = None
        self.compile_s = None  # dtc compile's wall time, if it ran

    def ratio(self, peer):
        if "dtc" not in self.rate or peer not in self.rate:
            return None
        return self.rate["dtc"] / self.rate[peer]


def _data_flag(case, model_dir):
    data_dir = os.path.join(model_dir, "train")
    names = [f[:-len(".npy")] for f in sorted(os.listdir(data_dir))
             if f.endswith(".npy")]
    order = json.load(open(os.path.join(model_dir, "inputs.json")))
    if sorted(order) != names:
        raise BenchError("%s: %s holds %s, the model takes %s" % (
            case.name, data_dir, names, order))
    return ",".join("%s=%s" % (n, os.path.join(data_dir, n + ".npy"))
                    for n in order)


def _model_inputs(model_dir):
    """The ONNX model's graph inputs that are not initializers, in order
    (read with /usr/bin/python3's onnx, as this script may run without
    it)."""
    code = ("import json, onnx, sys; m = onnx.load(sys.argv[1]); "
            "i = {x.name for x in m.graph.initializer}; "
            "print(json.dumps([x.name for x in m.graph.input "
            "if x.name not in i]))")
    return json.loads(_run([SYSTEM_PYTHON, "-c", code,
                            os.path.join(model_dir, "model.onnx")],
                           "reading the model's inputs"))


def _steps(case, args):
    steps = args.steps or case.steps
    warmup = case.warmup
    if args.quick:
        steps = max(3, steps // 4)
        warmup = max(1, warmup // 2)
    return steps, warmup


def measure(case, precision, threads, args, work):
    """Compiles (once per precision) and times one case on every side."""
    result = Result(case, precision, threads)
    model_dir = os.path.join(work, case.name)
    try:
        if not os.path.isdir(os.path.join(model_dir, "train")):
            export(case, model_dir, args.venv)
            with open(os.path.join(model_dir, "inputs.json"), "w") as f:
                json.dump(_model_inputs(model_dir), f)
        out = os.path.join(model_dir, "out-" + precision)
        if not os.path.exists(os.path.join(out, "train")):
            start = time.time()
            why = compile_step(args.dtc, case, precision, model_dir, out)
            result.compile_s = time.time() - start
            if why:
                if precision == "fp32":
                    raise BenchError("dtc compile: " + why)
                result.na["dtc"] = why
        plan = os.path.join(out, "plan.json")
        if os.path.exists(plan):
            result.flops_per_step = json.load(open(plan)).get(
                "flops_per_step")
        data_flag = _data_flag(case, model_dir)
        steps, warmup = _steps(case, args)
        times = {}
        for _ in range(args.rounds):
            if "dtc" not in result.na:
                t, loss = dtc_round(case, out, data_flag, threads, steps,
                                    warmup)
                times.setdefault("dtc", []).extend(t)
                result.losses["dtc"] = loss
            for peer in args.peers:
                if peer in result.na:
                    continue
                if peer not in args.pythons:
                    result.na[peer] = "not installed"
                    continue
                reply = peer_round(args, peer, case, precision, threads,
                                   model_dir, steps, warmup)
                if "na" in reply:
                    result.na[peer] = reply["na"]
                    continue
                times.setdefault(peer, []).extend(reply["times"])
                result.losses[peer] = reply["first_loss"]
                args.versions[peer] = reply["version"]
        for side, t in times.items():
            result.rate[side] = 1.0 / statistics.median(t)
        if "dtc" in result.losses:
            mine = result.losses["dtc"]
            for peer, theirs in result.losses.items():
                difference = abs(mine - theirs) / max(abs(theirs), 1e-12)
                if difference > LOSS_TOLERANCE[precision]:
                    raise BenchError(
                        "first losses differ: dtc %.9g, %s %.9g (relative "
                        "%.2g > %g): not the same model, weights or data" % (
                            mine, peer, theirs, difference,
                            LOSS_TOLERANCE[precision]))
    except BenchError as e:
        result.error = str(e)
    return result


def _line(result, peers, peak):
    name = "%-10s %-5s %2d" % (result.case.name, result.precision,
                               result.threads)
    if result.error:
        return "%s error: %s" % (name, result.error)
    cells = []
    for side in ("dtc",) + tuple(peers):
        if side in result.rate:
            cell = "%9.4g" % result.rate[side]
            if side != "dtc" and "dtc" in result.rate:
                cell += " (%5.2fx)" % result.ratio(side)
            else:
                cell += " " * 9
        else:
            cell = "%9s%9s" % ("n/a", "")
        cells.append(cell)
    line = name + " " + " ".join(cells)
    if result.flops_per_step and "dtc" in result.rate and peak:
        achieved = result.flops_per_step * result.rate["dtc"]
        line += "  %.3g GFLOP/s = %.0f%% of peak" % (achieved / 1e9,
                                                     100 * achieved / peak)
    if result.compile_s is not None:
        line += "  (dtc compile %.1f s)" % result.compile_s
    notes = ["%s: %s" % (side, why) for side, why in sorted(result.na.items())
             if why != "not installed"]
    if notes:
        line += "  [n/a: %s]" % "; ".join(notes)
    return line


def _summary(results, args, load_before, load_after, seconds):
    lines = ["", "summary (dtc's steps/s over each peer's; the target in "
             "brackets):"]
    for (precision, peer), target in sorted(TARGETS.items()):
        if peer not in args.peers:
            continue
        parts = []
        for r in results:
            if r.precision != precision or r.error:
                continue
            ratio = r.ratio(peer)
            if ratio is not None:
                parts.append("%s/%d %.2fx%s" % (
                    r.case.name, r.threads, ratio,
                    "" if ratio >= target else " (below)"))
        if parts:
            lines.append("  %s vs %s [%gx]: %s" % (precision, peer, target,
                                                    ", ".join(parts)))
    slower = []
    for r in results:
        if r.threads == 1 or "dtc" not in r.rate:
            continue
        for one in results:
            if (one.case is r.case and one.precision == r.precision and
                    one.threads == 1 and "dtc" in one.rate and
                    r.rate["dtc"] < one.rate["dtc"]):
                slower.append("%s %s (%.4g vs %.4g steps/s)" % (
                    r.case.name, r.precision, r.rate["dtc"],
                    one.rate["dtc"]))
    if any(r.threads > 1 for r in results) and any(r.threads == 1
                                                   for r in results):
        lines.append("  dtc slower at more threads than at 1: %s" % (
            ", ".join(slower) if slower else "none"))
    lines.append("  peers: %s" % ", ".join(
        "%s = %s" % (p, args.versions.get(p, "not run")) for p in args.peers))
    lines.append("  load average (1 min) before %.2f, after %.2f; %d cores; "
                 "%.0f s" % (load_before, load_after, os.cpu_count(),
                             seconds))
    if load_before >= BUSY:
        lines.append("  WARNING: others were using the cores (load average "
                     "%.2f before): rerun when idle" % load_before)
    return "\n".join(lines)


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    wanted = [x for x in flags if x.startswith("avx") or
                              x in ("fma", "amx_tile", "amx_bf16")]
                    return " ".join(wanted)
    except OSError:
        pass
    return "unknown"


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def _gemm_peak(dtc, threads):
    """`dtc calibrate`'s GEMM peak at `threads` threads, in FLOP/s."""
    out = _run([dtc, "calibrate", "--mpi-ranks", "none", "--threads",
                str(threads)], "dtc calibrate",
               env=_thread_env(threads, OPENBLAS_NUM_THREADS="1"))
    return float(json.loads(out[out.index("{"):])["peak_gemm_flops"])


def _find_pythons(args):
    """The Python of each chosen peer that has it installed."""
    venv_python = os.path.join(args.venv, "bin", "python")
    candidates = {"ort": venv_python, "eager": venv_python,
                  "compile": venv_python, "eager113": SYSTEM_PYTHON}
    probes = {"ort": "import onnxruntime.training.api",
              "eager": "import torch; assert torch.__version__ >= '2'",
              "compile": "import torch; assert torch.__version__ >= '2'",
              "eager113": "import torch"}
    found = {}
    for peer in args.peers:
        python = candidates[peer]
        if not os.path.exists(python):
            continue
        proc = subprocess.run([python, "-c", probes[peer]],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        if proc.returncode == 0:
            found[peer] = python
    return found


def _list(text, allowed, what, parser):
    values = [v for v in text.split(",") if v]
    for v in values:
        if v not in allowed:
            parser.error("unknown %s '%s' (one of %s)" % (
                what, v, ", ".join(allowed)))
    return values


def _parse_args(argv):
    names = [c.name for c in CASES]
    parser = argparse.ArgumentParser(
        description="Steps per second of dtc's compiled training step "
        "against ONNX Runtime Training, PyTorch 2 (eager and torch.compile) "
        "and Debian's PyTorch 1.13 on the same model, weights and data, as "
        "ratios.", allow_abbrev=False)
    parser.add_argument("--cases", default=",".join(names),
                        help="comma-separated cases (default: all of %s)" %
                        ", ".join(names))
    parser.add_argument("--precisions", default=",".join(PRECISIONS),
                        help="comma-separated precisions (default: "
                        "fp32,bf16)")
    parser.add_argument("--threads", default="1,2",
                        help="comma-separated thread counts (default 1,2)")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help="comma-separated peers (default: all of %s "
                        "that are installed)" % ", ".join(PEERS))
    parser.add_argument("--venv", default=DEFAULT_VENV,
                        help="the peers' virtual environment (default "
                        "$DTC_BENCH_VENV or ~/.cache/dtc/venv-bench; made "
                        "by test/bench/setup_peers.sh)")
    parser.add_argument("--steps", type=int,
                        help="timed steps per round and side (default per "
                        "case: %s)" % ", ".join("%s %d" % (c.name, c.steps)
                                                for c in CASES))
    parser.add_argument("--rounds", type=int, default=2,
                        help="alternating rounds of every side (default 2)")
    parser.add_argument("--quick", action="store_true",
                        help="a quarter of the steps, half the warm-up")
    parser.add_argument("--dtc", default=os.path.join(ROOT, "build", "bin",
                                                      "dtc"),
                        help="the dtc binary (default build/bin/dtc)")
    parser.add_argument("--work", help="keep exports and builds in this "
                        "folder (default: a temporary folder, removed)")
    # A peer's round, in a process of its own (internal).
    parser.add_argument("--worker", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--precision", help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help=argparse.SUPPRESS)
    parser.add_argument("--warmup", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--scratch", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        args.threads = int(args.threads)
        return args
    args.cases = [c for c in CASES if c.name in
                  _list(args.cases, names, "case", parser)]
    args.precisions = _list(args.precisions, PRECISIONS, "precision", parser)
    args.peers = _list(args.peers, PEERS, "peer", parser)
    try:
        args.threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        parser.error("--threads takes comma-separated positive integers")
    if not args.threads or min(args.threads) < 1:
        parser.error("--threads takes comma-separated positive integers")
    if args.steps is not None and args.steps < 1:
        parser.error("--steps must be positive")
    if args.rounds < 1:
        parser.error("--rounds must be positive")
    if not os.access(args.dtc, os.X_OK):
        parser.error("no dtc at '%s' (build it, or pass --dtc)" % args.dtc)
    return args


def main(argv=None):
    args = _parse_args(argv)
    if args.worker:
        return worker_main(args)
    start = time.time()
    load_before = os.getloadavg()[0]
    args.pythons = _find_pythons(args)
    args.versions = {}
    missing = [p for p in args.peers if p not in args.pythons]
    print("# %s, %d cores; %s; load average %.2f" % (
        _cpu_name(), os.cpu_count(), _cpu_flags(), load_before))
    if missing:
        print("# not installed: %s (test/bench/setup_peers.sh makes %s)" % (
            ", ".join(missing), args.venv))
    peaks = {}
    for threads in args.threads:
        peaks[threads] = _gemm_peak(args.dtc, threads)
        print("# dtc calibrate, %d thread(s): GEMM peak %.4g GFLOP/s" % (
            threads, peaks[threads] / 1e9))
    print("%-10s %-5s %2s %9s%9s %s" % (
        "case", "prec", "th", "dtc", "", " ".join(
            "%-18s" % p for p in args.peers)))
    sys.stdout.flush()
    work = args.work or tempfile.mkdtemp(prefix="dtc-bench-")
    os.makedirs(work, exist_ok=True)
    results = []
    try:
        for case in args.cases:
            for precision in args.precisions:
                for threads in args.threads:
                    result = measure(case, precision, threads, args, work)
                    results.append(result)
                    print(_line(result, args.peers, peaks[threads]))
                    sys.stdout.flush()
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    print(_summary(results, args, load_before, os.getloadavg()[0],
                   time.time() - start))
    failed = [r for r in results if r.error and r.precision == "fp32"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
