"""The NumPy twin of test/unit/runtime/FakeTrain.cpp, and the files its lit
tests train on.

  fake_model.py setup OUTDIR
      OUTDIR/train (a copy of dtcrt-fake-train), weights.bin, model.onnx,
      and data: x/y/mask.npy (6 samples), eval_*.npy (5 samples), bad_*.npy.
  fake_model.py check LOG.jsonl --data DIR --steps N [hyperparameters]
      [--eval-every N] [--synthetic-free]
      recomputes the run and compares every logged step (rtol 1e-5).
  fake_model.py same A.jsonl B.jsonl --steps FIRST-LAST
      the two logs hold the same step numbers, losses, learning rates and
      gradient norms (exactly) for those steps.
  fake_model.py check-onnx MODEL.onnx CHECKPOINT_FOLDER
      onnx.checker accepts the model and its trained initializers equal the
      checkpoint's tensors.
"""
import argparse
import json
import math
import os
import shutil
import sys

import numpy as np

F32 = np.float32
INITIAL = {
    "w": np.array([0.1, -0.2, 0.3], F32),
    "b": np.array([0.05, -0.05, 0.1, 0.0], F32),
    "scale": np.array(1.5, F32),
    "running_mean": np.array([0.5, 0.5, 0.5], F32),
}
BATCH = 4


def make_data(rng, n):
    x = rng.uniform(-1, 1, size=(n, 3)).astype(F32)
    y = rng.integers(0, 4, size=n).astype(np.int64)
    mask = np.array([True, True, False, True, True, True, False, True][:n])
    return x, y, mask


def setup(out):
    os.makedirs(out, exist_ok=True)
    exe = shutil.which("dtcrt-fake-train")
    if exe is None:
        sys.exit("dtcrt-fake-train is not on PATH")
    shutil.copy(exe, os.path.join(out, "train"))
    with open(os.path.join(out, "weights.bin"), "wb") as f:
        for name in ["w", "b", "scale", "running_mean"]:
            f.write(INITIAL[name].tobytes())
    rng = np.random.default_rng(0)
    x, y, mask = make_data(rng, 6)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "y.npy"), y)
    np.save(os.path.join(out, "mask.npy"), mask)
    ex, ey, emask = make_data(rng, 5)
    np.save(os.path.join(out, "eval_x.npy"), ex)
    np.save(os.path.join(out, "eval_y.npy"), ey)
    np.save(os.path.join(out, "eval_mask.npy"), emask)
    # Files that must be refused, each for one reason.
    np.save(os.path.join(out, "bad_y_int32.npy"), y.astype(np.int32))
    np.save(os.path.join(out, "bad_x_shape.npy"), np.zeros((6, 4), F32))
    np.save(os.path.join(out, "bad_x_empty.npy"), np.zeros((0, 3), F32))
    np.save(os.path.join(out, "bad_x_count.npy"), x[:5])
    np.save(os.path.join(out, "bad_x_fortran.npy"), np.asfortranarray(
        rng.uniform(size=(6, 3)).astype(F32)))
    np.save(os.path.join(out, "bad_y_label.npy"),
            np.array([0, 1, 7, 2, 3, 0], np.int64))
    with open(os.path.join(out, "x.npy"), "rb") as f:
        data = f.read()
    with open(os.path.join(out, "bad_x_truncated.npy"), "wb") as f:
        f.write(data[:-5])
    make_onnx(os.path.join(out, "model.onnx"))


def make_onnx(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(v, k) for k, v in INITIAL.items()]
    inits.append(numpy_helper.from_array(np.array(0.5, F32), "half"))
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["xw"], name="/MatMul"),
        helper.make_node("Mul", ["xw", "scale"], ["scaled"], name="/Mul"),
        helper.make_node("Gather", ["b", "y"], ["by"], name="/Gather_bias"),
        helper.make_node("Add", ["scaled", "by"], ["pred"], name="/Add"),
        helper.make_node("Cast", ["y"], ["yf"], to=TensorProto.FLOAT,
                         name="/Cast"),
        helper.make_node("Mul", ["yf", "half"], ["target"], name="/Target"),
        helper.make_node("Sub", ["pred", "target"], ["resid"], name="/Sub"),
        helper.make_node("Mul", ["resid", "resid"], ["sq"], name="/Square"),
        helper.make_node("ReduceMean", ["sq"], ["loss"], keepdims=0,
                         name="/Loss"),
        helper.make_node("ReduceMean", ["x"], ["xmean"], axes=[0],
                         keepdims=0, name="/Mean"),
        helper.make_node("Add", ["xmean", "running_mean"], ["stat"],
                         name="/Stat"),
    ]
    graph = helper.make_graph(
        nodes, "fake",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3]),
         helper.make_tensor_value_info("y", TensorProto.INT64, ["N"])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, []),
         helper.make_tensor_value_info("stat", TensorProto.FLOAT, [3])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def scheduled_lr(lr, k, warmup, total, min_lr, kind):
    if warmup > 0 and k <= warmup:
        return lr * k / warmup
    if kind == 0:
        return lr
    if k > total:
        return min_lr
    span = total - warmup
    if span <= 0:
        return min_lr
    if kind == 1:
        return min_lr + (lr - min_lr) * (total - k) / span
    return min_lr + (lr - min_lr) * (1 + math.cos(math.pi * (k - warmup) / span)) / 2


def forward(p, x, y, mask):
    dot = x.astype(np.float64) @ p["w"].astype(np.float64)
    pred = (float(p["scale"]) * dot).astype(F32)
    pred = (pred + p["b"][y]).astype(F32)
    resid = (pred - (y.astype(F32) * F32(0.5))).astype(F32)
    count = max(1, int(mask.sum()))
    r = resid.astype(np.float64)
    loss = F32(np.sum(np.where(mask, r * r, 0.0)) / count)
    return loss, resid, count


def train_step(p, k, x, y, mask, hp):
    loss, resid, count = forward(p, x, y, mask)
    r = np.where(mask, 2.0 * resid.astype(np.float64) / count, 0.0)
    gw = (r[:, None] * float(p["scale"]) * x.astype(np.float64)).sum(0).astype(F32)
    gb = np.zeros(4)
    for j in range(len(y)):
        gb[y[j]] += r[j]
    gb = gb.astype(F32)
    g = np.concatenate([gw, gb]).astype(np.float64)
    norm = math.sqrt(float(np.sum(g * g)))
    clip = hp["clip_norm"]
    coef = min(1.0, clip / (norm + 1e-6)) if clip > 0 else 1.0
    lr = scheduled_lr(hp["lr"], k + 1, hp["warmup"], hp["total_steps"],
                      hp["min_lr"], hp["lr_schedule"])
    new = dict(p)
    for name, grad in [("w", gw), ("b", gb)]:
        buf_name = name + ".momentum_buffer"
        param = p[name].astype(np.float64)
        gi = grad.astype(np.float64) * coef + hp["weight_decay"] * param
        bi = gi
        if hp["momentum"] != 0:
            bi = gi if k == 0 else (hp["momentum"] * p[buf_name].astype(np.float64)
                                    + (1 - hp["dampening"]) * gi)
            gi = gi + hp["momentum"] * bi if hp["nesterov"] else bi
        new[buf_name] = bi.astype(F32)
        new[name] = (param - lr * gi).astype(F32)
    mean = x.astype(np.float64).mean(0)
    new["running_mean"] = (0.9 * p["running_mean"].astype(np.float64)
                           + 0.1 * mean).astype(F32)
    return new, float(loss), lr, norm


def batch(arrays, position):
    n = len(arrays[0])
    idx = [(position + j) % n for j in range(BATCH)]
    return [a[idx] for a in arrays]


def close(a, b, rtol=1e-5, atol=1e-7):
    return abs(a - b) <= atol + rtol * abs(b)


def check(args):
    d = args.data
    train = [np.load(os.path.join(d, f + ".npy")) for f in ["x", "y", "mask"]]
    evald = [np.load(os.path.join(d, "eval_" + f + ".npy"))
             for f in ["x", "y", "mask"]]
    hp = {"lr": args.lr, "momentum": args.momentum, "dampening": args.dampening,
          "nesterov": args.nesterov, "weight_decay": args.weight_decay,
          "clip_norm": args.clip_norm, "warmup": args.warmup,
          "total_steps": args.total_steps, "min_lr": args.min_lr,
          "lr_schedule": {"constant": 0, "linear": 1, "cosine": 2}[args.lr_schedule]}
    if hp["lr_schedule"] != 0 and hp["total_steps"] == 0:
        hp["total_steps"] = args.steps
    p = dict(INITIAL)
    p["w.momentum_buffer"] = np.zeros(3, F32)
    p["b.momentum_buffer"] = np.zeros(4, F32)
    lines = [json.loads(l) for l in open(args.log)]
    if len(lines) != args.steps:
        sys.exit("expected %d lines, got %d" % (args.steps, len(lines)))
    keys = ["step", "loss", "lr", "grad_norm", "step_time_s", "samples_per_s",
            "arena_high_water_bytes"]
    for k in range(args.steps):
        x, y, mask = batch(train, k * BATCH)
        p, loss, lr, norm = train_step(p, k, x, y, mask, hp)
        got = lines[k]
        for key in keys:
            if key not in got:
                sys.exit("step %d: no '%s' in %s" % (k + 1, key, got))
        if got["step"] != k + 1:
            sys.exit("line %d has step %s" % (k + 1, got["step"]))
        for key, want in [("loss", loss), ("lr", lr), ("grad_norm", norm)]:
            if not close(got[key], want):
                sys.exit("step %d: %s is %r, the reference %r"
                         % (k + 1, key, got[key], want))
        evaluated = args.eval_every and (k + 1) % args.eval_every == 0
        if evaluated:
            n = len(evald[0])
            # Whole global batches only: a remainder is left out.
            losses = [forward(p, *batch(evald, b * BATCH))[0]
                      for b in range(n // BATCH)]
            want = float(np.mean(np.array(losses, np.float64)))
            if not close(got.get("eval_loss", float("nan")), want):
                sys.exit("step %d: eval_loss is %r, the reference %r"
                         % (k + 1, got.get("eval_loss"), want))
        elif "eval_loss" in got:
            sys.exit("step %d: unexpected eval_loss" % (k + 1))
        if got["samples_per_s"] <= 0 or got["step_time_s"] < 0:
            sys.exit("step %d: bad timing %s" % (k + 1, got))
    print("matches the reference: %d steps, final loss %.6g" % (args.steps, loss))


def same(args):
    first, last = [int(v) for v in args.steps.split("-")]
    logs = []
    for path in [args.a, args.b]:
        logs.append({l["step"]: l for l in map(json.loads, open(path))})
    for k in range(first, last + 1):
        for key in ["step", "loss", "lr", "grad_norm"]:
            a, b = logs[0].get(k, {}).get(key), logs[1].get(k, {}).get(key)
            if a is None or a != b:
                sys.exit("step %d: %s %r vs %r" % (k, key, a, b))
    print("same: steps %d-%d" % (first, last))


def check_onnx(args):
    import onnx
    from onnx import numpy_helper
    model = onnx.load(args.model)
    onnx.checker.check_model(model)
    inits = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    manifest = json.load(open(os.path.join(args.checkpoint, "manifest.json")))
    trained = 0
    for t in manifest["tensors"]:
        if t["role"] not in ("parameter", "state"):
            continue
        want = np.load(os.path.join(args.checkpoint, t["file"]))
        if not np.array_equal(inits[t["name"]], want):
            sys.exit("%s: %s vs %s" % (t["name"], inits[t["name"]], want))
        trained += not np.array_equal(want, INITIAL[t["name"]])
    if inits["half"] != np.float32(0.5):
        sys.exit("the constant 'half' changed")
    print("onnx ok: %d initializers, %d changed by training"
          % (len(inits), trained))


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("setup")
    s.add_argument("out")
    c = sub.add_parser("check")
    c.add_argument("log")
    c.add_argument("--data", required=True)
    c.add_argument("--steps", type=int, required=True)
    c.add_argument("--eval-every", type=int, default=0)
    c.add_argument("--lr", type=float, default=0.1)
    c.add_argument("--momentum", type=float, default=0.9)
    c.add_argument("--dampening", type=float, default=0.0)
    c.add_argument("--nesterov", action="store_true")
    c.add_argument("--weight-decay", type=float, default=0.0)
    c.add_argument("--clip-norm", type=float, default=0.0)
    c.add_argument("--lr-schedule", default="constant")
    c.add_argument("--warmup", type=int, default=0)
    c.add_argument("--total-steps", type=int, default=0)
    c.add_argument("--min-lr", type=float, default=0.0)
    m = sub.add_parser("same")
    m.add_argument("a")
    m.add_argument("b")
    m.add_argument("--steps", required=True)
    o = sub.add_parser("check-onnx")
    o.add_argument("model")
    o.add_argument("checkpoint")
    args = parser.parse_args()
    {"setup": lambda: setup(args.out), "check": lambda: check(args),
     "same": lambda: same(args), "check-onnx": lambda: check_onnx(args)}[
        args.command]()


if __name__ == "__main__":
    main()
