"""Compares a dtc training log (and step-1 gradients) with PyTorch's reference.

Usage: compare_training.py LOG.jsonl REFDIR [GRADDIR] [--rtol R] [--steps N]
Fails (exit 1) if any step's loss (of the first N, default all) differs by
more than R (default 1e-4)
relative, or any parameter's step-1 gradient by more than R in relative L2
norm, from references.py's float64 run in REFDIR; where REFDIR's
sensitivity.json shows that the trajectory (or a tensor's gradient)
amplifies rounding, by more than tolerance.py's bound instead.
"""
import json
import os
import sys

import numpy as np

import tolerance


def main(argv):
    rtol = 1e-4
    if "--rtol" in argv:
        i = argv.index("--rtol")
        rtol = float(argv[i + 1])
        del argv[i:i + 2]
    limit = None
    if "--steps" in argv:
        i = argv.index("--steps")
        limit = int(argv[i + 1])
        del argv[i:i + 2]
    log, ref = argv[1], argv[2]
    grads = argv[3] if len(argv) > 3 else None
    with open(log) as f:
        steps = [json.loads(line) for line in f if line.strip()][:limit]
    got = np.array([s["loss"] for s in steps], dtype=np.float64)
    want = np.load(os.path.join(ref, "losses.npy"))[: len(got)]
    if len(got) != len(want) or len(got) == 0:
        print(f"FAIL: {len(got)} logged steps, reference has {len(want)}")
        return 1
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-12)
    spread = tolerance.load(ref) or {}
    line = (f"losses: {len(got)} steps, worst relative difference "
            f"{rel.max():.2e} "
            f"({tolerance.describe(rtol, spread.get('loss'))})")
    print(line)
    tolerance.record(f"{log}: {line}")
    ok = bool(rel.max() <= tolerance.bound(rtol, spread.get("loss")))
    if grads:
        names = sorted(os.listdir(os.path.join(ref, "grads_step1")))
        worst, failing = 0.0, []
        tensor_spread = spread.get("grads_step1_tensors", {})
        for name in names:
            path = os.path.join(grads, name)
            if not os.path.exists(path):
                print(f"FAIL: no gradient for {name}")
                return 1
            a = np.load(path).astype(np.float64)
            b = np.load(os.path.join(ref, "grads_step1", name)).astype(np.float64)
            r = np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)
            worst = max(worst, r)
            if r > tolerance.bound(rtol, tensor_spread.get(name[:-4], 0)):
                failing.append(f"{name[:-4]} {r:.2e}")
        line = (f"gradients: {len(names)} parameters, worst relative L2 "
                f"{worst:.2e}")
        print(line)
        tolerance.record(f"{grads}: {line}")
        for f in failing:
            print(f"gradient differs: {f}")
        ok = ok and not failing
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
