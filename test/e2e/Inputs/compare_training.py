"""Compares a dtc training log (and step-1 gradients) with PyTorch's reference.

Usage: compare_training.py LOG.jsonl REFDIR [GRADDIR] [--rtol R]
Fails (exit 1) if any step's loss differs by more than R relative, or any
parameter's step-1 gradient by more than R in relative L2 norm.
"""
import json
import os
import sys

import numpy as np


def main(argv):
    rtol = 1e-4
    if "--rtol" in argv:
        i = argv.index("--rtol")
        rtol = float(argv[i + 1])
        del argv[i:i + 2]
    log, ref = argv[1], argv[2]
    grads = argv[3] if len(argv) > 3 else None
    with open(log) as f:
        steps = [json.loads(line) for line in f if line.strip()]
    got = np.array([s["loss"] for s in steps], dtype=np.float64)
    want = np.load(os.path.join(ref, "losses.npy"))[: len(got)]
    if len(got) != len(want) or len(got) == 0:
        print(f"FAIL: {len(got)} logged steps, reference has {len(want)}")
        return 1
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-12)
    print(f"losses: {len(got)} steps, worst relative difference {rel.max():.2e}")
    ok = bool(rel.max() <= rtol)
    if grads:
        names = sorted(os.listdir(os.path.join(ref, "grads_step1")))
        worst = 0.0
        for name in names:
            path = os.path.join(grads, name)
            if not os.path.exists(path):
                print(f"FAIL: no gradient for {name}")
                return 1
            a = np.load(path).astype(np.float64)
            b = np.load(os.path.join(ref, "grads_step1", name)).astype(np.float64)
            r = np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)
            worst = max(worst, r)
        print(f"gradients: {len(names)} parameters, worst relative L2 {worst:.2e}")
        ok = ok and worst <= rtol
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
