"""Checks of mixed-precision training runs (test/e2e/compile-precision.test).

Usage:
  check_precision.py slice IN.npy OUT.npy N
      Writes the first N samples of IN.npy to OUT.npy.
  check_precision.py compare LABEL BASE.jsonl RUN.jsonl [--rtol R] [--steps N]
      Every one of the N steps of RUN is logged, its loss within R (default
      0.02) relative of BASE's at the same step, no step skipped, and the
      loss falls (the mean of the last five steps below that of the first
      five). Prints the largest relative deviation.
  check_precision.py overflow LOG.jsonl --init S --window W
      An fp16 run on one repeated batch that starts with an overflowing loss
      scale S: step 1 uses S; a step is skipped exactly when its grad_norm is
      not finite; after a skipped step the loss is unchanged (the parameters
      did not move) and the scale halves; after W good steps in a row it
      doubles, and otherwise stays. At least two skipped steps first and one
      doubling must occur. Prints the loss_scale sequence.
  check_precision.py resume WHOLE.jsonl RESUMED.jsonl
      A run stopped and resumed (the log appended to) logs the steps of the
      uninterrupted run with the same loss, grad_norm (NaN equal to NaN),
      loss_scale and skipped, exactly: the loss-scale state and the
      optimizer's step count survive the checkpoint.
  check_precision.py plan FP32.json LOW.json PRECISION [--fewer-activations]
      plan.json of the same model in fp32 and PRECISION: the precision
      field, 16-bit parameters (half the bytes), optimizer state grown by the
      fp32 master weights (4 bytes per parameter; and the fp16 loss-scale
      scalars), the same model-state total (16 bytes per parameter under
      AdamW), and with --fewer-activations
      fewer activation bytes (in a tiny model the casts can outweigh the
      savings).
Prints OK or FAIL: ... (exit 1).
"""
import json
import math
import sys

import numpy as np

import tolerance


def read_log(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fail(message):
    print("FAIL: " + message)
    return 1


def compare(argv):
    label, base_path, run_path = argv[:3]
    rtol, steps = 0.02, 20
    rest = argv[3:]
    while rest:
        flag, value = rest[0], rest[1]
        rest = rest[2:]
        if flag == "--rtol":
            rtol = float(value)
        elif flag == "--steps":
            steps = int(value)
        else:
            return fail(f"unknown flag {flag}")
    base, run = read_log(base_path), read_log(run_path)
    for name, log in (("base", base), (label, run)):
        if [s["step"] for s in log] != list(range(1, steps + 1)):
            return fail(f"{name} logs steps {[s['step'] for s in log]}, "
                        f"not 1..{steps}")
    worst, at = 0.0, 0
    for b, r in zip(base, run):
        if r.get("skipped", 0):
            return fail(f"{label}: step {r['step']} was skipped")
        d = abs(r["loss"] - b["loss"]) / abs(b["loss"])
        if not d <= worst:
            worst, at = d, r["step"]
    losses = [r["loss"] for r in run]
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    line = (f"{label}: max relative loss deviation {worst:.3e} (step {at}); "
            f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(line)
    tolerance.record(f"{line} (bound {rtol:g})")
    if not worst <= rtol:
        return fail(f"{label}: step {at} deviates {worst:.3e} > {rtol}")
    if not last < first:
        return fail(f"{label}: the loss does not fall ({first} -> {last})")
    print("OK")
    return 0


def overflow(argv):
    path = argv[0]
    init, window = None, None
    rest = argv[1:]
    while rest:
        flag, value = rest[0], rest[1]
        rest = rest[2:]
        if flag == "--init":
            init = float(value)
        elif flag == "--window":
            window = int(value)
    log = read_log(path)
    scales = [s["loss_scale"] for s in log]
    print("loss_scale:", " ".join(f"{s:g}" for s in scales))
    print("skipped:   ", " ".join(str(s["skipped"]) for s in log))
    if not math.isclose(scales[0], init, rel_tol=1e-6):
        return fail(f"step 1 used scale {scales[0]}, not {init}")
    good, doublings = 0, 0
    for prev, cur in zip(log, log[1:]):
        finite = math.isfinite(prev["grad_norm"])
        if prev["skipped"] != (0 if finite else 1):
            return fail(f"step {prev['step']}: skipped={prev['skipped']} "
                        f"with grad_norm {prev['grad_norm']}")
        if prev["skipped"]:
            good = 0
            want = prev["loss_scale"] / 2
            if cur["loss"] != prev["loss"]:
                return fail(f"step {cur['step']}: loss {cur['loss']} differs "
                            f"from {prev['loss']} after skipped step "
                            f"{prev['step']}: the parameters moved")
        else:
            good += 1
            want = prev["loss_scale"]
            if good == window:
                want *= 2
                good = 0
                doublings += 1
        if not math.isclose(cur["loss_scale"], want, rel_tol=1e-6):
            return fail(f"step {cur['step']}: scale {cur['loss_scale']}, "
                        f"expected {want}")
    if not (log[0]["skipped"] and log[1]["skipped"]):
        return fail("the first two steps were not skipped")
    if doublings == 0:
        return fail("the scale never doubled")
    if not log[-1]["loss"] < log[0]["loss"]:
        return fail("the loss does not fall")
    print("OK")
    return 0


def resume(argv):
    whole, resumed = read_log(argv[0]), read_log(argv[1])
    if [s["step"] for s in resumed] != [s["step"] for s in whole]:
        return fail(f"steps {[s['step'] for s in resumed]} after resuming, "
                    f"not those of the uninterrupted run")

    def same(a, b):
        return a == b or (isinstance(a, float) and isinstance(b, float) and
                          math.isnan(a) and math.isnan(b))

    for w, r in zip(whole, resumed):
        for key in ("loss", "grad_norm", "loss_scale", "skipped"):
            if not same(w[key], r[key]):
                return fail(f"step {w['step']}: {key} {r[key]!r} after "
                            f"resuming, {w[key]!r} uninterrupted")
    print(f"resumed: {len(whole)} steps as uninterrupted")
    print("OK")
    return 0


def plan(argv):
    base_path, low_path, precision = argv[:3]
    with open(base_path) as f:
        base = json.load(f)
    with open(low_path) as f:
        low = json.load(f)
    if base["precision"] != "fp32" or low["precision"] != precision:
        return fail(f"precision fields {base['precision']}, "
                    f"{low['precision']}")
    n = base["parameters_total"]
    b = base["ranks"][0]["memory_bytes"]
    m = low["ranks"][0]["memory_bytes"]

    def states(mem):
        return mem["parameters"] + mem["gradients"] + mem["optimizer_state"]

    print(f"fp32: parameters {b['parameters']} gradients {b['gradients']} "
          f"optimizer_state {b['optimizer_state']} activations "
          f"{b['activations']} peak {b['peak']}")
    print(f"{precision}: parameters {m['parameters']} gradients "
          f"{m['gradients']} optimizer_state {m['optimizer_state']} "
          f"activations {m['activations']} peak {m['peak']}")
    print(f"model states per parameter: fp32 {states(b) / n:g}, "
          f"{precision} {states(m) / n:g}")
    if m["parameters"] * 2 != b["parameters"]:
        return fail("the parameters are not half the bytes")
    # fp16 adds the loss scale (f32), its good-step count and the optimizer
    # step count (i64).
    scalars = 4 + 8 + 8 if precision == "fp16" else 0
    if m["optimizer_state"] - b["optimizer_state"] != 4 * n + scalars:
        return fail("the optimizer state did not grow by fp32 masters")
    if states(m) != states(b) + scalars:
        return fail("the model-state totals differ")
    if "--fewer-activations" in argv and \
            not m["activations"] < b["activations"]:
        return fail("no fewer activation bytes")
    print("OK")
    return 0


def main(argv):
    mode = argv[1]
    if mode == "slice":
        np.save(argv[3], np.load(argv[2])[: int(argv[4])])
        return 0
    if mode == "compare":
        return compare(argv[2:])
    if mode == "overflow":
        return overflow(argv[2:])
    if mode == "resume":
        return resume(argv[2:])
    if mode == "plan":
        return plan(argv[2:])
    return fail(f"unknown mode {mode}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
