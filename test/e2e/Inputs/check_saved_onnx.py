"""Checks a model written by `train --save-onnx`.

Usage: check_saved_onnx.py SAVED.onnx ORIGINAL.onnx CHECKPOINT_DIR
                           [REF_PARAMS_DIR] [--rtol R] [--tensor-rtol T]

- onnx.checker (full check, with shape inference) accepts SAVED.onnx;
- its graph (nodes, inputs, outputs, opsets) is ORIGINAL.onnx's;
- every initializer that the checkpoint (CHECKPOINT_DIR/manifest.json) holds
  as a parameter or state tensor (BatchNorm running statistics) equals the
  checkpoint's value bit for bit, and every other initializer is the
  original's;
- training changed at least one parameter and every state tensor;
- with REF_PARAMS_DIR (the params_final/ of references.py's float64 run of
  the same training), the tensors PyTorch trained are, all together, within
  R (default 1e-4) relative L2 of PyTorch's, and each within T (default
  1e-3), or within tolerance.py's bound where the run's sensitivity.json
  (next to REF_PARAMS_DIR) shows that the trajectory amplifies rounding:
  Adam turns rounding noise into full-size steps where a gradient is zero
  in exact arithmetic (the attention's key bias: softmax cancels it), and a
  near-tie of a ReLU or max-pool that one rounding flips moves every later
  step (the CNN with SGD); every other tensor of the checkpoint (one the
  step carries but does not train) is unchanged.
Prints the figures, then OK or FAIL (exit 1).
"""
import argparse
import os
import sys

import numpy as np

import checkpoint_tensors
import onnx
import onnx.checker
import onnx.numpy_helper

import tolerance


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("saved")
    parser.add_argument("original")
    parser.add_argument("checkpoint")
    parser.add_argument("ref_params", nargs="?")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--tensor-rtol", type=float, default=1e-3)
    args = parser.parse_args(argv[1:])

    problems = []
    saved = onnx.load(args.saved)
    original = onnx.load(args.original)
    try:
        onnx.checker.check_model(saved, full_check=True)
        print("onnx.checker: OK")
    except Exception as e:  # the checker's own exception types vary
        print(f"onnx.checker: {type(e).__name__}: {e}")
        problems.append("the checker refuses the model")

    for field in ("node", "input", "output"):
        if list(getattr(saved.graph, field)) != \
                list(getattr(original.graph, field)):
            problems.append(f"the graph's {field} list differs from the "
                            f"original's")
    if list(saved.opset_import) != list(original.opset_import):
        problems.append("the opset imports differ from the original's")

    # (name, role) -> (entry, whole value), blocks put together.
    manifest = checkpoint_tensors.manifest(args.checkpoint)
    saved_tensors = checkpoint_tensors.load(args.checkpoint, manifest)
    trained = {name: entry for (name, role), (entry, _) in saved_tensors.items()
               if role in ("parameter", "state")}
    originals = {i.name: onnx.numpy_helper.to_array(i)
                 for i in original.graph.initializer}
    values = {i.name: onnx.numpy_helper.to_array(i)
              for i in saved.graph.initializer}
    if sorted(values) != sorted(originals):
        problems.append("the initializer names differ from the original's")
    missing = sorted(set(trained) - set(values))
    if missing:
        problems.append(f"no initializer for {', '.join(missing)}")

    ref = {}
    spread = {}
    if args.ref_params:
        spread = tolerance.load(os.path.dirname(
            os.path.normpath(args.ref_params))) or {}
        for f in sorted(os.listdir(args.ref_params)):
            ref[f[:-4]] = np.load(os.path.join(args.ref_params, f))
        absent = sorted(set(ref) - set(trained))
        if absent:
            problems.append(f"PyTorch trains {', '.join(absent)}, which the "
                            f"checkpoint does not hold")
    changed = {"parameter": 0, "state": 0}
    untrained = 0
    worst_ref, worst_name = 0.0, ""
    tensor_spread = spread.get("params_tensors", {})
    failing = []
    diff_sq, ref_sq = 0.0, 0.0
    for name, value in sorted(values.items()):
        if name not in trained:
            if name in originals and not np.array_equal(value,
                                                        originals[name]):
                problems.append(f"constant initializer {name} changed")
            continue
        entry = trained[name]
        ckpt = saved_tensors[(name, entry["role"])][1]
        if value.dtype != ckpt.dtype or value.shape != ckpt.shape or \
                value.tobytes() != ckpt.tobytes():
            problems.append(f"initializer {name} is not the checkpoint's "
                            f"value")
        moved = not np.array_equal(value, originals[name])
        changed[entry["role"]] += int(moved)
        if not args.ref_params:
            continue
        if name not in ref:
            # Carried by the step but not trained (PyTorch has no gradient
            # for it either): it must come back as it went in.
            untrained += 1
            if moved:
                problems.append(f"{name}, which PyTorch does not train, "
                                f"changed")
            continue
        want = ref[name].astype(np.float64)
        d = float(np.sum((value.astype(np.float64) - want) ** 2))
        w = float(np.sum(want ** 2))
        diff_sq += d
        ref_sq += w
        rel = np.sqrt(d / max(w, 1e-60))
        limit = tolerance.bound(args.tensor_rtol,
                                tensor_spread.get(name, 0.0))
        if rel > limit:
            failing.append((name, rel, limit))
        if rel > worst_ref:
            worst_ref, worst_name = rel, name
    states = sum(1 for t in trained.values() if t["role"] == "state")
    if changed["parameter"] == 0:
        problems.append("training changed no parameter")
    if changed["state"] != states:
        problems.append(f"training changed only {changed['state']} of "
                        f"{states} state tensors")

    print(f"initializers: {len(values)}, {len(trained)} of them equal to "
          f"the checkpoint of step {manifest['step']}; changed by training: "
          f"{changed['parameter']} parameters, {changed['state']} of "
          f"{states} state tensors")
    if args.ref_params:
        overall = np.sqrt(diff_sq / max(ref_sq, 1e-60))
        together = spread.get("params")
        line = (f"vs PyTorch: {len(ref)} trained tensors, relative L2 "
                f"{overall:.2e} together, worst tensor {worst_ref:.2e} "
                f"({worst_name}; together: "
                f"{tolerance.describe(args.rtol, together)}); {untrained} "
                f"untrained tensors unchanged")
        print(line)
        tolerance.record(f"{args.saved}: {line}")
        if overall > tolerance.bound(args.rtol, together):
            problems.append(f"the trained tensors differ from PyTorch's by "
                            f"{overall:.2e} relative L2")
        for name, rel, limit in failing:
            problems.append(f"{name} differs from PyTorch's by {rel:.2e} "
                            f"relative L2 (bound {limit:.2e})")
    for p in problems:
        print(f"FAIL: {p}")
    print("OK" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
