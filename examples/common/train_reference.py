#!/usr/bin/python3
"""PyTorch's reference training of an example: what dtc's training must match.

Trains one example model (examples/{mlp,gpt,cnn}) in eager PyTorch, from the
weights in an exported model.onnx, on .npy training data, with dtc's training
semantics (see /work/shared/DESIGN.md and REFERENCE.md):

- the data are one NAME.npy per ONNX input, samples on axis 0; step k (1-based)
  takes the global batch of samples [(k-1)*B, k*B) modulo N (the stream wraps
  around, also inside a batch);
- the step's loss is PyTorch's `reduction='mean'` loss over the whole global
  batch: for the GPT's token loss with ignored targets (-1), the sum over the
  global batch divided by the number of counted tokens. With M micro-batches
  each micro-batch's mean loss is scaled by its counted tokens / the global
  batch's, backward runs once per micro-batch, then the optimizer steps once
  (BatchNorm takes its batch statistics per micro-batch and updates its
  running statistics at each micro-batch's forward, as PyTorch does);
- torch.optim.SGD or torch.optim.AdamW, the learning rate of optimizer step k
  set before the step from warmup + constant/linear/cosine (REFERENCE.md);
  optional global-norm clipping with torch.nn.utils.clip_grad_norm_;
- model.train() throughout (the examples' dropout has p = 0), except for
  the eval loss.

With --eval-data-dir, the eval loss (what OUTDIR/train --eval-data logs as
eval_loss) after every --eval-every steps (default: after the last): under
model.eval() (BatchNorm normalizes with its running statistics) and
torch.no_grad(), over floor(N / B) global batches of the held-out samples in
order (a remainder that does not fill a batch is left out, as dtc does), the
sum of each batch's mean loss times its counted targets over the total count:
reduction='mean' over those samples.

Written into --out:
  losses.npy      float64 [steps], the loss of each step
  lrs.npy         float64 [steps], the learning rate each step applied
  grad_norms.npy  float64 [steps], the global L2 norm of the gradients before
                  clipping
  grads_step1/NAME.npy  each trainable parameter's gradient at step 1 as the
                  optimizer applied it (averaged over the global batch, and
                  clipped with --clip-norm), NAME being its ONNX initializer
                  (a tied weight appears once, under the one name the ONNX
                  file has)
  params_final/NAME.npy every initializer that training changes (trainable
                  parameters and BatchNorm running statistics) after the
                  last step
  log.jsonl       one {"step", "loss", "lr", "grad_norm"} object per step,
                  with "eval_loss" at the steps evaluated
  eval_losses.npy float64 [E, 2], (step, eval loss) per evaluation (with
                  --eval-data-dir)
  reference.json  the settings of the run and the trainable parameters

The initial weights are read from model.onnx's initializers (so they are the
export's bit for bit); the module structure comes from the example's
model.py. Run with --help for the options; `run(...)` is the same from Python.
"""

import argparse
import fnmatch
import importlib.util
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnx.numpy_helper  # noqa: E402
import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES_DIR = os.path.dirname(HERE)

#: The examples this script trains.
EXAMPLES = ("mlp", "gpt", "cnn")
#: Learning-rate schedules, as dtc's --lr-schedule.
SCHEDULES = ("constant", "linear", "cosine")
#: Where make_example.py writes training data and references under --out.
TRAIN_DATA_DIR = "train"
#: Where make_example.py --eval-data writes the held-out data under --out.
EVAL_DATA_DIR = "eval"


class ReferenceError(Exception):
    """A mistake in the settings or the files; the message names the thing."""


# ----------------------------------------------------------------------------
# Examples
# ----------------------------------------------------------------------------

_loaded = {}


def load_example(name):
    """Imports examples/NAME/make_example.py as a module (each example has its
    own model.py, so the shared module name `model` is swapped around it)."""
    if name not in EXAMPLES:
        raise ReferenceError("unknown example '%s' (one of %s)" %
                             (name, ", ".join(EXAMPLES)))
    if name in _loaded:
        return _loaded[name]
    path = os.path.join(EXAMPLES_DIR, name, "make_example.py")
    spec = importlib.util.spec_from_file_location(
        "dtc_example_%s" % name, path)
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.pop("model", None)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop("model", None)
        if saved is not None:
            sys.modules["model"] = saved
    _loaded[name] = module
    return module


def _check_spec(spec, where):
    for attr in ("EXAMPLE", "LABELS", "IGNORE_INDEX", "make_train_data",
                 "REFERENCE_TRAINING"):
        if not hasattr(spec, attr):
            raise ReferenceError("%s defines no %s" % (where, attr))


# ----------------------------------------------------------------------------
# Hyperparameters
# ----------------------------------------------------------------------------


def scheduled_lr(lr, k, warmup, total, min_lr, schedule):
    """The learning rate of optimizer step k (1 for the first update), as
    REFERENCE.md and dtg.lr_schedule define it."""
    if warmup > 0 and k <= warmup:
        return lr * k / warmup
    if schedule == "constant":
        return lr
    if k > total or total <= warmup:
        return min_lr
    span = total - warmup
    if schedule == "linear":
        return min_lr + (lr - min_lr) * (total - k) / span
    return min_lr + (lr - min_lr) * (1 + math.cos(math.pi * (k - warmup) /
                                                  span)) / 2


class Settings:
    """Everything a reference run depends on besides the model and the data.

    The defaults are dtc's: AdamW, lr 1e-3, weight decay 0 for SGD and 0.01
    for AdamW (weight_decay=None), constant schedule, no clipping.
    """

    def __init__(self, steps=20, global_batch=None, micro_batches=1,
                 optimizer="adamw", lr=1e-3, momentum=0.0, dampening=0.0,
                 nesterov=False, betas=(0.9, 0.999), eps=1e-8,
                 weight_decay=None, clip_norm=0.0, lr_schedule="constant",
                 warmup=0, total_steps=0, min_lr=0.0, freeze=(),
                 no_decay=(), dtype="float32", eval_every=0, perturb=0):
        self.steps = steps
        self.global_batch = global_batch
        self.micro_batches = micro_batches
        self.optimizer = optimizer
        self.lr = lr
        self.momentum = momentum
        self.dampening = dampening
        self.nesterov = nesterov
        self.betas = tuple(betas)
        self.eps = eps
        if weight_decay is None:
            weight_decay = 0.0 if optimizer == "sgd" else 0.01
        self.weight_decay = weight_decay
        self.clip_norm = clip_norm
        self.lr_schedule = lr_schedule
        self.warmup = warmup
        self.total_steps = total_steps
        self.min_lr = min_lr
        self.freeze = list(freeze)
        self.no_decay = list(no_decay)
        self.dtype = dtype
        self.eval_every = eval_every
        self.perturb = perturb

    def validate(self):
        if self.steps < 1:
            raise ReferenceError("--steps must be at least 1, got %d" %
                                 self.steps)
        if self.global_batch is None or self.global_batch < 1:
            raise ReferenceError("--global-batch must be a positive integer")
        if self.micro_batches < 1:
            raise ReferenceError("--micro-batches must be at least 1")
        if self.global_batch % self.micro_batches:
            raise ReferenceError(
                "--micro-batches %d does not divide --global-batch %d" %
                (self.micro_batches, self.global_batch))
        if self.optimizer not in ("sgd", "adamw"):
            raise ReferenceError("--optimizer must be sgd or adamw, got '%s'"
                                 % self.optimizer)
        if self.lr_schedule not in SCHEDULES:
            raise ReferenceError("--lr-schedule must be constant, linear or "
                                 "cosine, got '%s'" % self.lr_schedule)
        if self.warmup < 0 or self.total_steps < 0:
            raise ReferenceError("--warmup and --total-steps must not be "
                                 "negative")
        if self.lr_schedule != "constant" and \
                self.total_steps <= self.warmup:
            raise ReferenceError("--lr-schedule %s needs --total-steps greater "
                                 "than --warmup" % self.lr_schedule)
        if len(self.betas) != 2:
            raise ReferenceError("--betas takes two numbers, BETA1,BETA2")
        if self.clip_norm < 0:
            raise ReferenceError("--clip-norm must not be negative")
        if self.optimizer == "sgd" and self.nesterov and (
                self.momentum <= 0 or self.dampening != 0):
            raise ReferenceError("--nesterov needs --momentum > 0 and "
                                 "--dampening 0 (as torch.optim.SGD)")
        if self.dtype not in ("float32", "float64"):
            raise ReferenceError("--dtype must be float32 or float64")
        if self.eval_every < 0:
            raise ReferenceError("--eval-every must not be negative")
        if self.perturb < 0:
            raise ReferenceError("--perturb must not be negative")

    def as_dict(self):
        return dict(vars(self))


# ----------------------------------------------------------------------------
# Model and data
# ----------------------------------------------------------------------------


def _parameter_aliases(model):
    """id(parameter) -> every qualified name it has (a tied weight has two)."""
    aliases = {}
    for module_name, module in model.named_modules():
        for name, param in module._parameters.items():
            if param is None:
                continue
            full = module_name + "." + name if module_name else name
            aliases.setdefault(id(param), []).append(full)
    return aliases


def _safe_file_name(name):
    if not name or name.startswith(".") or "/" in name or "\\" in name or \
            "\0" in name:
        raise ReferenceError("initializer name '%s' cannot be a file name" %
                             name)
    return name


def load_model(spec, model_dir):
    """Builds the example's module and loads model.onnx's initializers into it.

    Returns (model, names, onnx_model): `names` maps each parameter that has
    an initializer to that initializer's name. Every parameter needs one (an
    eval-mode export that folded BatchNorm into the convolutions has none for
    the BatchNorm's parameters, and cannot be trained); buffers without one
    (the GPT's causal masks shared through Identity nodes, BatchNorm's step
    counter) keep their values from the model's constructor.
    """
    path = os.path.join(model_dir, "model.onnx")
    if not os.path.isfile(path):
        raise ReferenceError("no model.onnx in '%s' (make_example.py --out "
                             "writes one)" % model_dir)
    try:
        onnx_model = onnx.load(path)
    except Exception as e:  # a truncated or foreign file
        raise ReferenceError("cannot read '%s': %s" % (path, e))
    initializers = {init.name: init for init in onnx_model.graph.initializer}

    torch.manual_seed(0)  # the values are replaced below
    model = spec.EXAMPLE.build_model()
    aliases = _parameter_aliases(model)
    if not any(n in initializers for ns in aliases.values() for n in ns):
        raise ReferenceError("'%s' is not an export of the %s example (no "
                             "initializer is one of its parameters)" %
                             (path, spec.EXAMPLE.name))
    names = {}
    with torch.no_grad():
        for param in model.parameters():
            candidates = [n for n in aliases[id(param)] if n in initializers]
            if not candidates:
                hint = ""
                if any(n.startswith("onnx::") for n in initializers):
                    hint = (" (an eval-mode export folds BatchNorm into the "
                            "convolutions: export with --training)")
                raise ReferenceError(
                    "'%s' has no initializer for parameter %s%s" % (
                        path, " = ".join(aliases[id(param)]), hint))
            if len(candidates) > 1:
                raise ReferenceError(
                    "'%s' holds the tied parameter %s as %d separate "
                    "initializers" % (path, " = ".join(candidates),
                                      len(candidates)))
            name = candidates[0]
            _copy_initializer(param, initializers[name], name, path)
            names[param] = _safe_file_name(name)
        for name, buf in model.named_buffers():
            if name in initializers:
                _copy_initializer(buf, initializers[name], name, path)
    return model, names, onnx_model


def _copy_initializer(tensor, init, name, path):
    value = onnx.numpy_helper.to_array(init)
    if tuple(value.shape) != tuple(tensor.shape):
        raise ReferenceError("initializer %s of '%s' has shape %s, the "
                             "example's %s has %s" % (
                                 name, path, list(value.shape), name,
                                 list(tensor.shape)))
    if value.dtype != tensor.numpy().dtype:
        raise ReferenceError("initializer %s of '%s' is %s, the example's "
                             "is %s" % (name, path, value.dtype,
                                        tensor.numpy().dtype))
    tensor.copy_(torch.from_numpy(np.array(value)))


_ONNX_TO_NUMPY = {
    onnx.TensorProto.FLOAT: np.float32,
    onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.INT32: np.int32,
}


def load_data(spec, data_dir, onnx_model):
    """The training data: one array per ONNX input, checked against the
    model's input types and per-sample shapes."""
    graph_inputs = {i.name: i for i in onnx_model.graph.input}
    arrays = []
    samples = None
    for name in spec.EXAMPLE.input_names:
        path = os.path.join(data_dir, name + ".npy")
        if not os.path.isfile(path):
            raise ReferenceError("no training data for input '%s': '%s' is "
                                 "missing" % (name, path))
        try:
            array = np.load(path, allow_pickle=False)
        except Exception as e:
            raise ReferenceError("cannot read '%s': %s" % (path, e))
        if array.ndim == 0 or array.shape[0] == 0:
            raise ReferenceError("'%s' holds no samples (axis 0)" % path)
        if name in graph_inputs:
            ttype = graph_inputs[name].type.tensor_type
            want = _ONNX_TO_NUMPY.get(ttype.elem_type)
            if want is not None and array.dtype != want:
                raise ReferenceError("'%s' is %s, input '%s' takes %s" % (
                    path, array.dtype, name, np.dtype(want)))
            dims = [d.dim_value if d.HasField("dim_value") else None
                    for d in ttype.shape.dim]
            if len(dims) != array.ndim or any(
                    d is not None and d != s
                    for d, s in zip(dims[1:], array.shape[1:])):
                raise ReferenceError(
                    "'%s' has shape %s; input '%s' takes [N, %s]" % (
                        path, list(array.shape), name,
                        ", ".join("?" if d is None else str(d)
                                  for d in dims[1:])))
        if samples is not None and array.shape[0] != samples:
            raise ReferenceError("'%s' has %d samples, the other inputs %d" %
                                 (path, array.shape[0], samples))
        samples = array.shape[0]
        arrays.append(array)
    return arrays


def _batch(arrays, start, count):
    """Samples [start, start + count) modulo N of every input, as tensors."""
    n = arrays[0].shape[0]
    index = (start + np.arange(count)) % n
    return [torch.from_numpy(np.ascontiguousarray(a[index])) for a in arrays]


def counted(spec, inputs):
    """How many targets of a batch the mean loss counts."""
    labels = inputs[spec.EXAMPLE.input_names.index(spec.LABELS)]
    return int((labels != spec.IGNORE_INDEX).sum())


# ----------------------------------------------------------------------------
# Training
# ----------------------------------------------------------------------------


def _make_optimizer(settings, params, names):
    decay, no_decay = [], []
    for p in params:
        exempt = any(fnmatch.fnmatchcase(names[p], pattern)
                     for pattern in settings.no_decay)
        (no_decay if exempt else decay).append(p)
    groups = [{"params": decay, "weight_decay": settings.weight_decay}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    if settings.optimizer == "sgd":
        return torch.optim.SGD(groups, lr=settings.lr,
                               momentum=settings.momentum,
                               dampening=settings.dampening,
                               nesterov=settings.nesterov)
    return torch.optim.AdamW(groups, lr=settings.lr, betas=settings.betas,
                             eps=settings.eps)


def eval_loss(spec, model, arrays, batch, dtype):
    """The loss over held-out `arrays` in eval mode: floor(N / batch) batches
    in order, each batch's mean loss weighted by its counted targets, over
    the total count (reduction='mean' over those samples)."""
    batches = arrays[0].shape[0] // batch
    if batches == 0:
        raise ReferenceError("the eval data (%d samples) do not fill one "
                             "global batch (%d)" % (arrays[0].shape[0],
                                                    batch))
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    try:
        with torch.no_grad():
            for b in range(batches):
                inputs = [t.to(dtype) if t.is_floating_point() else t
                          for t in _batch(arrays, b * batch, batch)]
                c = counted(spec, inputs)
                if c == 0:
                    continue
                _, loss = model(*inputs)
                total += loss.double().item() * c
                count += c
    finally:
        model.train(was_training)
    return total / count if count else float("nan")


#: --perturb's relative size: one float32 rounding (2^-24, half an ulp).
PERTURBATION = 2.0 ** -24


def perturb_weights(model, seed):
    """Multiplies every floating-point parameter and buffer element by
    (1 + u * 2^-24), u uniform in [-1, 1) from numpy's generator `seed`: a
    float32 rounding's worth of noise in the initial state. How far such
    runs end from the unperturbed one is the trajectory's sensitivity to
    rounding (references.py --ensemble), what a float32 implementation's
    distance from a float64 reference is measured against."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for _, tensor in list(model.named_parameters()) + \
                list(model.named_buffers()):
            if not tensor.is_floating_point():
                continue
            u = rng.uniform(-1.0, 1.0, tuple(tensor.shape))
            tensor.mul_(torch.from_numpy(1.0 + u * PERTURBATION).to(
                tensor.dtype))


def train(spec, model, names, arrays, settings, eval_arrays=None):
    """Runs the steps; returns a dict of the results (see the module's
    docstring): losses, lrs, grad_norms (lists of floats), grads_step1 and
    params_final (name -> numpy array), trainable (names in order), and
    eval_losses ((step, loss) pairs, with `eval_arrays`)."""
    settings.validate()
    dtype = torch.float64 if settings.dtype == "float64" else torch.float32
    model.to(dtype)
    if settings.perturb:
        perturb_weights(model, settings.perturb)
    model.train()
    params = [p for p in model.parameters()
              if not any(fnmatch.fnmatchcase(names[p], pattern)
                         for pattern in settings.freeze)]
    if not params:
        raise ReferenceError("--freeze leaves no parameter to train")
    trained = {id(p) for p in params}
    for p in model.parameters():
        p.requires_grad_(id(p) in trained)
    optimizer = _make_optimizer(settings, params, names)
    state_names = [name for name, _ in model.named_buffers()
                   if name.endswith(("running_mean", "running_var"))]

    B, M = settings.global_batch, settings.micro_batches
    b = B // M
    losses, lrs, norms = [], [], []
    eval_losses = []
    grads_step1 = {}
    for k in range(1, settings.steps + 1):
        lr = scheduled_lr(settings.lr, k, settings.warmup,
                          settings.total_steps, settings.min_lr,
                          settings.lr_schedule)
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.zero_grad(set_to_none=True)
        start = (k - 1) * B
        micro = [_batch(arrays, start + j * b, b) for j in range(M)]
        counts = [counted(spec, inputs) for inputs in micro]
        total = sum(counts)
        if total == 0:
            raise ReferenceError("step %d: the global batch has no counted "
                                 "target" % k)
        step_loss = 0.0
        for inputs, count in zip(micro, counts):
            inputs = [t.to(dtype) if t.is_floating_point() else t
                      for t in inputs]
            try:
                _, loss = model(*inputs)
            except (RuntimeError, IndexError) as e:  # labels out of range
                raise ReferenceError("step %d: PyTorch's forward failed: %s"
                                     % (k, e))
            if count == 0:
                continue  # contributes nothing (its mean loss is nan)
            if M == 1:
                loss.backward()
                step_loss = loss.item()
            else:
                # The micro-batch's share of the global batch's mean.
                (loss * (count / total)).backward()
                step_loss += loss.item() * count / total
        grads = [p.grad for p in params if p.grad is not None]
        if not grads:
            raise ReferenceError("no parameter has a gradient path to the "
                                 "loss")
        norm = math.sqrt(sum(float(g.double().pow(2).sum()) for g in grads))
        if settings.clip_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, settings.clip_norm)
        if k == 1:
            # A parameter without a gradient path to the loss is not
            # trainable (DESIGN.md); torch.optim skips it too.
            params = [p for p in params if p.grad is not None]
            for p in params:
                grads_step1[names[p]] = p.grad.detach().numpy().copy()
        optimizer.step()
        losses.append(float(step_loss))
        lrs.append(float(lr))
        norms.append(norm)
        if eval_arrays is not None and (
                (settings.eval_every > 0 and k % settings.eval_every == 0) or
                (settings.eval_every == 0 and k == settings.steps)):
            eval_losses.append((k, eval_loss(spec, model, eval_arrays, B,
                                              dtype)))

    params_final = {names[p]: p.detach().numpy().copy() for p in params}
    buffers = dict(model.named_buffers())
    for name in state_names:
        params_final[name] = buffers[name].detach().numpy().copy()
    return {"losses": losses, "lrs": lrs, "grad_norms": norms,
            "grads_step1": grads_step1, "params_final": params_final,
            "trainable": [names[p] for p in params],
            "eval_losses": eval_losses}


def write_results(out, results, meta):
    """Writes what `train` returned into directory `out`."""
    os.makedirs(out, exist_ok=True)
    for key in ("losses", "lrs", "grad_norms"):
        np.save(os.path.join(out, key + ".npy"),
                np.asarray(results[key], dtype=np.float64), allow_pickle=False)
    for key in ("grads_step1", "params_final"):
        directory = os.path.join(out, key)
        os.makedirs(directory, exist_ok=True)
        for name, value in results[key].items():
            np.save(os.path.join(directory, name + ".npy"), value,
                    allow_pickle=False)
    evals = dict(results.get("eval_losses", []))
    if evals:
        np.save(os.path.join(out, "eval_losses.npy"),
                np.asarray(sorted(evals.items()), dtype=np.float64),
                allow_pickle=False)
    with open(os.path.join(out, "log.jsonl"), "w") as f:
        for k, (loss, lr, norm) in enumerate(zip(
                results["losses"], results["lrs"], results["grad_norms"])):
            line = {"step": k + 1, "loss": loss, "lr": lr, "grad_norm": norm}
            if k + 1 in evals:
                line["eval_loss"] = evals[k + 1]
            f.write(json.dumps(line) + "\n")
    meta = dict(meta)
    meta["trainable"] = results["trainable"]
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")


def run(example, model_dir, data_dir, out, settings, eval_dir=None):
    """Trains `example` (a name in EXAMPLES) from model_dir/model.onnx on the
    .npy files of data_dir (evaluating on those of eval_dir, if given) and
    writes the results into `out`; returns them. Raises ReferenceError on a
    mistake in the settings or the files."""
    spec = load_example(example)
    _check_spec(spec, "examples/%s/make_example.py" % example)
    if settings.global_batch is None:
        settings.global_batch = spec.EXAMPLE.default_batch
    settings.validate()
    torch.set_num_threads(1)
    model, names, onnx_model = load_model(spec, model_dir)
    arrays = load_data(spec, data_dir, onnx_model)
    eval_arrays = None
    if eval_dir is not None:
        eval_arrays = load_data(spec, eval_dir, onnx_model)
    results = train(spec, model, names, arrays, settings, eval_arrays)
    meta = {"example": example, "model_dir": model_dir, "data_dir": data_dir,
            "eval_dir": eval_dir,
            "samples": int(arrays[0].shape[0]),
            "torch": torch.__version__}
    meta.update(settings.as_dict())
    write_results(out, results, meta)
    return results


# ----------------------------------------------------------------------------
# make_example.py's training options
# ----------------------------------------------------------------------------

#: Samples --reference-training writes when --train-data is not given.
DEFAULT_TRAIN_SAMPLES = 256


def write_train_data(spec, directory, samples, seed):
    """Writes `samples` samples of the example's training data into
    directory/NAME.npy (NAME the ONNX inputs); they depend only on the seed
    and the count."""
    generator = torch.Generator().manual_seed(7919 * (seed + 1) + 104729)
    tensors = spec.make_train_data(samples, generator)
    os.makedirs(directory, exist_ok=True)
    for name, tensor in zip(spec.EXAMPLE.input_names, tensors):
        np.save(os.path.join(directory, name + ".npy"),
                tensor.detach().numpy(), allow_pickle=False)


def write_eval_data(spec, directory, samples, train_samples, seed):
    """Writes `samples` held-out samples into directory/NAME.npy: the last
    ones of make_train_data(train_samples + samples) with the training data's
    seed, so the task (the classes' prototypes, the Markov chain) is the
    training data's and the samples are drawn after them."""
    generator = torch.Generator().manual_seed(7919 * (seed + 1) + 104729)
    tensors = spec.make_train_data(train_samples + samples, generator)
    os.makedirs(directory, exist_ok=True)
    for name, tensor in zip(spec.EXAMPLE.input_names, tensors):
        np.save(os.path.join(directory, name + ".npy"),
                tensor[train_samples:].detach().numpy(), allow_pickle=False)


def _training_parser():
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    group = parser.add_argument_group(
        "training data and PyTorch's reference training")
    group.add_argument(
        "--train-data", type=int, metavar="N",
        help="also write N samples of training data into OUT/%s/NAME.npy "
        "(NAME the ONNX inputs; depends only on --seed and N)" %
        TRAIN_DATA_DIR)
    group.add_argument(
        "--eval-data", type=int, metavar="N",
        help="also write N held-out samples into OUT/%s/NAME.npy (the "
        "training data's task, drawn after its samples)" % EVAL_DATA_DIR)
    group.add_argument(
        "--reference-training", action="store_true",
        help="also train the export in PyTorch on that data (%d samples "
        "unless --train-data says otherwise) with SGD-momentum and with "
        "AdamW for 20 steps at the export's batch size, writing "
        "OUT/reference-{sgd,adamw}/ (see examples/common/train_reference.py;"
        " with --all-variants from the opset 17 training export, checked "
        "against every variant's initializers)" % DEFAULT_TRAIN_SAMPLES)
    return parser


def _export_args(argv):
    """The export options this module needs, read leniently (export.py parses
    and validates them)."""
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--out")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int)
    parser.add_argument("--all-variants", action="store_true")
    args, _ = parser.parse_known_args(argv)
    return args


def _check_variants(root, reference_dir):
    """With --all-variants: every variant whose file holds the trained
    parameters must hold them bit for bit as the reference's export does."""
    want = {}
    reference = onnx.load(os.path.join(reference_dir, "model.onnx"))
    for init in reference.graph.initializer:
        want[init.name] = onnx.numpy_helper.to_array(init)
    for variant in sorted(os.listdir(root)):
        path = os.path.join(root, variant, "model.onnx")
        if not os.path.isfile(path):
            continue
        for init in onnx.load(path).graph.initializer:
            if init.name in want and not np.array_equal(
                    onnx.numpy_helper.to_array(init), want[init.name]):
                raise ReferenceError("initializer %s of '%s' differs from "
                                     "the reference's" % (init.name, path))


def example_main(spec, argv=None):
    """make_example.py's main: the export options (export.py), plus
    --train-data and --reference-training."""
    import export  # examples/common, on the path of every make_example.py

    argv = list(sys.argv[1:] if argv is None else argv)
    export.rerun_under_torch2(argv)
    own_parser = _training_parser()
    own, rest = own_parser.parse_known_args(argv)
    if "-h" in rest or "--help" in rest:
        try:
            export.main(spec.EXAMPLE, ["--help"])
        except SystemExit:
            pass
        print()
        print(own_parser.format_help().split("\n", 2)[2].strip("\n"))
        return
    prog = os.path.basename(sys.argv[0])
    if own.train_data is not None and own.train_data < 1:
        sys.exit("%s: error: --train-data must be positive, got %d" %
                 (prog, own.train_data))
    if own.eval_data is not None and own.eval_data < 1:
        sys.exit("%s: error: --eval-data must be positive, got %d" %
                 (prog, own.eval_data))
    export.main(spec.EXAMPLE, rest)
    if own.train_data is None and own.eval_data is None and \
            not own.reference_training:
        return
    args = _export_args(rest)
    samples = own.train_data or DEFAULT_TRAIN_SAMPLES
    data_dir = os.path.join(args.out, TRAIN_DATA_DIR)
    write_train_data(spec, data_dir, samples, args.seed)
    if own.eval_data is not None:
        write_eval_data(spec, os.path.join(args.out, EVAL_DATA_DIR),
                        own.eval_data, samples, args.seed)
    if not own.reference_training:
        return
    model_dir = args.out
    if args.all_variants:
        model_dir = os.path.join(args.out, "opset17-training-dynamic")
    name = spec.EXAMPLE.name
    _loaded.setdefault(name, spec)  # run() finds this module, not a copy
    try:
        if args.all_variants:
            _check_variants(args.out, model_dir)
        for optimizer, hyper in sorted(spec.REFERENCE_TRAINING.items()):
            settings = Settings(
                steps=20, optimizer=optimizer,
                global_batch=args.batch or spec.EXAMPLE.default_batch,
                **hyper)
            run(name, model_dir, data_dir,
                os.path.join(args.out, "reference-" + optimizer), settings)
    except ReferenceError as e:
        sys.exit("%s: error: %s" % (prog, e))


# ----------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------


def _parse_betas(text):
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("expects BETA1,BETA2, got '%s'" %
                                         text)
    if len(values) != 2:
        raise argparse.ArgumentTypeError("expects BETA1,BETA2, got '%s'" %
                                         text)
    return values


def _patterns(text):
    return [p for p in text.split(",") if p]


def _parse_args(argv):
    parser = argparse.ArgumentParser(
        description="PyTorch's reference training of a dtc example (losses, "
        "learning rates, gradient norms, step-1 gradients, final weights).",
        allow_abbrev=False)
    parser.add_argument("--example", required=True, choices=EXAMPLES)
    parser.add_argument("--model-dir", required=True,
                        help="folder of the export's model.onnx (the initial "
                        "weights and the parameter names)")
    parser.add_argument("--data-dir", required=True,
                        help="folder of the training data, one NAME.npy per "
                        "ONNX input")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--global-batch", type=int,
                        help="samples per step (default: the example's "
                        "export batch)")
    micro = parser.add_mutually_exclusive_group()
    micro.add_argument("--micro-batches", type=int, metavar="M",
                       help="gradient accumulation over M micro-batches "
                       "(default 1)")
    micro.add_argument("--micro-batch", type=int, metavar="N",
                       help="or the micro-batch size")
    parser.add_argument("--optimizer", choices=("sgd", "adamw"),
                        default="adamw")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--momentum", type=float, default=0.0)
    parser.add_argument("--dampening", type=float, default=0.0)
    parser.add_argument("--nesterov", action="store_true")
    parser.add_argument("--betas", type=_parse_betas, default=(0.9, 0.999),
                        metavar="B1,B2")
    parser.add_argument("--eps", type=float, default=1e-8)
    parser.add_argument("--weight-decay", type=float,
                        help="default 0 for sgd, 0.01 for adamw")
    parser.add_argument("--no-decay", type=_patterns, action="append",
                        default=[], metavar="PATTERN,...",
                        help="parameters (ONNX names, glob) exempt from "
                        "weight decay")
    parser.add_argument("--freeze", type=_patterns, action="append",
                        default=[], metavar="PATTERN,...",
                        help="parameters (ONNX names, glob) not trained")
    parser.add_argument("--clip-norm", type=float, default=0.0,
                        help="global gradient-norm clip (0: off)")
    parser.add_argument("--lr-schedule", choices=SCHEDULES,
                        default="constant")
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--total-steps", type=int, default=0)
    parser.add_argument("--min-lr", type=float, default=0.0)
    parser.add_argument("--eval-data-dir",
                        help="folder of held-out data, one NAME.npy per ONNX "
                        "input: also compute the eval loss")
    parser.add_argument("--eval-every", type=int, default=0, metavar="N",
                        help="evaluate after every N steps (default: after "
                        "the last)")
    parser.add_argument("--dtype", choices=("float32", "float64"),
                        default="float32",
                        help="arithmetic of the reference (default float32, "
                        "as the export)")
    parser.add_argument("--perturb", type=int, default=0, metavar="SEED",
                        help="multiply the initial weights by 1 + u * 2^-24 "
                        "(u uniform in [-1, 1), numpy seed SEED; 0: off), "
                        "to measure the trajectory's sensitivity to "
                        "rounding")
    args = parser.parse_args(argv)
    micro_batches = args.micro_batches or 1
    if args.micro_batch is not None:
        if args.micro_batch < 1:
            parser.error("--micro-batch must be positive")
        if args.global_batch is None:
            parser.error("--micro-batch needs --global-batch")
        if args.global_batch % args.micro_batch:
            parser.error("--micro-batch %d does not divide --global-batch %d"
                         % (args.micro_batch, args.global_batch))
        micro_batches = args.global_batch // args.micro_batch
    settings = Settings(
        steps=args.steps, global_batch=args.global_batch,
        micro_batches=micro_batches, optimizer=args.optimizer, lr=args.lr,
        momentum=args.momentum, dampening=args.dampening,
        nesterov=args.nesterov, betas=args.betas, eps=args.eps,
        weight_decay=args.weight_decay, clip_norm=args.clip_norm,
        lr_schedule=args.lr_schedule, warmup=args.warmup,
        total_steps=args.total_steps, min_lr=args.min_lr,
        freeze=[p for ps in args.freeze for p in ps],
        no_decay=[p for ps in args.no_decay for p in ps], dtype=args.dtype,
        eval_every=args.eval_every, perturb=args.perturb)
    return args, settings


def main(argv=None):
    args, settings = _parse_args(argv)
    try:
        results = run(args.example, args.model_dir, args.data_dir, args.out,
                      settings, args.eval_data_dir)
    except ReferenceError as e:
        sys.exit("%s: error: %s" % (os.path.basename(sys.argv[0]), e))
    losses = results["losses"]
    print("%s %s: %d steps, loss %.6g -> %.6g, %d trainable parameters -> %s"
          % (args.example, settings.optimizer, len(losses), losses[0],
             losses[-1], len(results["trainable"]), args.out))


if __name__ == "__main__":
    # make_example.py imports this file as `train_reference`; one module.
    sys.modules.setdefault("train_reference", sys.modules[__name__])
    main()
