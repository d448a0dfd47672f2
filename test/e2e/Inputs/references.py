"""Runs PyTorch's reference trainings, in float64, with their sensitivity.

Usage: references.py [--ensemble K] ARGS... [--- ARGS...]...

Each ARGS is a command line of examples/common/train_reference.py (which
this script finds next to the test folder); the runs share one import of
PyTorch, which is most of the cost of a short run. For each run:

- its --out folder gets the run in float64: the reference dtc (float32) is
  held against, since a float32 reference is itself off the exact result by
  its own rounding, amplified along the trajectory;
- --out/ensemble/ gets the same run in float32 (what PyTorch users get) and
  K float64 runs from initial weights perturbed by a float32 rounding each
  (train_reference.py --perturb 1..K);
- --out/sensitivity.json gets how far those members end from the float64
  run: the worst relative loss, eval-loss and gradient-norm difference over
  the steps, the relative L2 distance of the final parameters (all
  together and per tensor) and of the step-1 gradients. tolerance.py turns
  these into the bounds the checks apply.

K defaults to $DTC_TEST_ENSEMBLE, else 4. Stops at the first run that
fails, with train_reference.py's message and exit status.
"""
import importlib.util
import json
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "..", "examples", "common",
                      "train_reference.py")


def load_train_reference():
    spec = importlib.util.spec_from_file_location("train_reference", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    # make_example.py imports `train_reference`; let it find this one.
    sys.modules["train_reference"] = module
    spec.loader.exec_module(module)
    return module


def out_dir(run):
    """The --out of a train_reference.py command line (the last one)."""
    out = None
    for i, arg in enumerate(run):
        if arg == "--out" and i + 1 < len(run):
            out = run[i + 1]
        elif arg.startswith("--out="):
            out = arg[len("--out="):]
    return out


def relative(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape or got.size == 0:
        return 0.0
    return float(np.max(np.abs(got - want) /
                        np.maximum(np.abs(want), 1e-12)))


def tensors(directory):
    if not os.path.isdir(directory):
        return {}
    return {f[:-4]: np.load(os.path.join(directory, f)).astype(np.float64)
            for f in sorted(os.listdir(directory)) if f.endswith(".npy")}


def l2(got, want):
    """Relative L2 distances: all tensors together, and each."""
    diff_sq, ref_sq, each = 0.0, 0.0, {}
    for name, w in want.items():
        if name not in got:
            continue
        d = float(np.sum((got[name] - w) ** 2))
        r = float(np.sum(w ** 2))
        diff_sq += d
        ref_sq += r
        each[name] = float(np.sqrt(d / max(r, 1e-60)))
    return float(np.sqrt(diff_sq / max(ref_sq, 1e-60))), each


def sensitivity(out, members):
    """How far each member folder ends from the float64 run in `out`."""
    def series(folder, key):
        path = os.path.join(folder, key + ".npy")
        return np.load(path) if os.path.exists(path) else np.zeros(0)

    result = {"members": [os.path.basename(m) for m in members],
              "loss": 0.0, "eval_loss": 0.0, "grad_norm": 0.0,
              "params": 0.0, "params_tensors": {},
              "grads_step1": 0.0, "grads_step1_tensors": {}}
    params = tensors(os.path.join(out, "params_final"))
    grads = tensors(os.path.join(out, "grads_step1"))
    for m in members:
        for key, name in (("loss", "losses"), ("grad_norm", "grad_norms")):
            result[key] = max(result[key], relative(series(m, name),
                                                    series(out, name)))
        got, want = series(m, "eval_losses"), series(out, "eval_losses")
        if want.size:
            result["eval_loss"] = max(result["eval_loss"],
                                      relative(got[:, 1], want[:, 1]))
        for key, want in (("params", params), ("grads_step1", grads)):
            overall, each = l2(tensors(os.path.join(m, key.replace(
                "params", "params_final"))), want)
            result[key] = max(result[key], overall)
            worst = result[key + "_tensors"]
            for name, r in each.items():
                worst[name] = max(worst.get(name, 0.0), r)
    return result


def main(argv):
    args = argv[1:]
    members = int(os.environ.get("DTC_TEST_ENSEMBLE", "4"))
    if args[:1] == ["--ensemble"]:
        if len(args) < 2 or not args[1].isdigit():
            print("references.py: error: --ensemble expects a count",
                  file=sys.stderr)
            return 2
        members = int(args[1])
        args = args[2:]
    runs, current = [], []
    for arg in args:
        if arg == "---":
            runs.append(current)
            current = []
        else:
            current.append(arg)
    runs.append(current)
    runs = [r for r in runs if r]
    if not runs:
        print("references.py: error: no run given", file=sys.stderr)
        return 2
    reference = load_train_reference()
    for run in runs:
        out = out_dir(run)
        if out is None:
            print("references.py: error: a run has no --out", file=sys.stderr)
            return 2
        reference.main(run + ["--dtype", "float64"])
        folders = [os.path.join(out, "ensemble", "float32")]
        reference.main(run + ["--dtype", "float32", "--out", folders[0]])
        for seed in range(1, members + 1):
            folders.append(os.path.join(out, "ensemble", f"perturbed-{seed}"))
            reference.main(run + ["--dtype", "float64", "--perturb",
                                  str(seed), "--out", folders[-1]])
        with open(os.path.join(out, "sensitivity.json"), "w") as f:
            json.dump(sensitivity(out, folders), f, indent=1, sort_keys=True)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
