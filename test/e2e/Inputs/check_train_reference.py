#!/usr/bin/python3
"""Checks the runs of examples/common/train_reference.py that
train-reference.test makes, and prints the figures.

  check_train_reference.py training RUNS MODEL_DIR DATA_DIR LABELS IGNORE
                           [--batchnorm]
    RUNS/{sgd,adamw}{,-m4}: 3 steps on all 48 samples (global batch 48), one
      batch and 4 micro-batches; RUNS/lr0-b12: 5 steps of 12 samples at
      lr 0; RUNS/lr0-b36: 2 steps of 36 samples at lr 0.
  check_train_reference.py schedule RUN_COSINE RUN_LINEAR
    the learning rates of the two schedule runs, and clipping.

Exits non-zero at the first failed assertion.
"""

import glob
import math
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper


def rel(a, b):
    return abs(a - b) / abs(b)


def load(run, name):
    return np.load(os.path.join(run, name + ".npy"))


def weighted_mean(losses, counts):
    return float(np.dot(losses, counts) / np.sum(counts))


def check_training(runs, model_dir, data_dir, labels, ignore, batchnorm):
    target = np.load(os.path.join(data_dir, labels + ".npy"))
    n = target.shape[0]
    assert n == 48, n

    def count(start, size):
        index = (start + np.arange(size)) % n
        return int((target[index] != ignore).sum())

    onnx_model = onnx.load(os.path.join(model_dir, "model.onnx"))
    inits = {i.name: onnx.numpy_helper.to_array(i)
             for i in onnx_model.graph.initializer}
    # Trainable: every float initializer but the causal masks and the
    # BatchNorm running statistics.
    buffers = (".attn.bias", "running_mean", "running_var")
    want = sorted(k for k, v in inits.items()
                  if v.dtype == np.float32 and not k.endswith(buffers))

    for opt in ("sgd", "adamw"):
        run, run4 = os.path.join(runs, opt), os.path.join(runs, opt + "-m4")
        losses, losses4 = load(run, "losses"), load(run4, "losses")
        assert losses.dtype == np.float64 and losses.shape == (3,), losses
        # (a) finite and falling.
        assert np.all(np.isfinite(losses)), losses
        assert np.all(np.diff(losses) < 0), losses
        lrs = load(run, "lrs")
        assert np.all(lrs == lrs[0]), lrs
        # Gradients: one file per trainable initializer, with its shape;
        # their norm is grad_norms[0] (no clipping).
        files = sorted(glob.glob(os.path.join(run, "grads_step1", "*.npy")))
        names = [os.path.basename(f)[:-4] for f in files]
        assert names == want, (names, want)
        grads = {k: np.load(f) for k, f in zip(names, files)}
        for k, g in grads.items():
            assert g.shape == inits[k].shape and g.dtype == np.float32, k
        norm = math.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2))
                             for g in grads.values()))
        norms = load(run, "grad_norms")
        assert np.all(np.isfinite(norms)) and np.all(norms > 0), norms
        assert rel(norm, norms[0]) < 1e-6, (norm, norms[0])
        moved = sum(not np.array_equal(np.load(os.path.join(
            run, "params_final", k + ".npy")), inits[k]) for k in want)
        assert moved == len(want), (moved, len(want))
        if batchnorm:  # the running statistics are trained state
            stats = [k for k in inits if k.endswith(("running_mean",
                                                     "running_var"))]
            assert stats and all(not np.array_equal(np.load(os.path.join(
                run, "params_final", k + ".npy")), inits[k]) for k in stats)
        # (b) 4 micro-batches against one batch.
        diff = max(rel(a, b) for a, b in zip(losses4, losses))
        gdiff = max(np.linalg.norm(np.load(os.path.join(
            run4, "grads_step1", k + ".npy")) - g) / np.linalg.norm(g)
            for k, g in grads.items())
        print("%s: losses %s, 4 micro-batches: losses rel %.2g, step-1 "
              "gradients rel L2 %.2g" % (opt, np.array2string(
                  losses, precision=6), diff, gdiff))
        if batchnorm:
            # BatchNorm's statistics are per micro-batch: not one batch.
            assert diff > 1e-5, diff
        else:
            assert diff < 1e-6, diff
            assert gdiff < 1e-5, gdiff

    # The stream: at lr 0 the weights stay, so step k's loss is that of
    # samples [(k-1)*B, k*B) mod 48 on the initial weights.
    lr0 = load(os.path.join(runs, "lr0-b12"), "losses")
    assert lr0[4] == lr0[0], lr0  # 48 samples: step 5 wraps to step 1
    counts = [count(12 * k, 12) for k in range(4)]
    mean = weighted_mean(lr0[:4], counts)
    for opt in ("sgd", "adamw"):
        first = load(os.path.join(runs, opt + "-m4"), "losses")[0]
        print("%s: 4 micro-batches step 1 %.9g, lr-0 micro-batch losses "
              "weighted by counts %s: %.9g, rel %.2g" % (
                  opt, first, counts, mean, rel(mean, first)))
        assert rel(mean, first) < 1e-6
    if not batchnorm:
        # Step 2 of 36 takes samples 36..47 and 0..23 (wrapping inside the
        # batch): batches 4, 1, 2 of 12.
        lr0b36 = load(os.path.join(runs, "lr0-b36"), "losses")
        want2 = weighted_mean(lr0[[3, 0, 1]], [counts[3], counts[0],
                                               counts[1]])
        print("wrap inside a batch: %.9g vs %.9g, rel %.2g" % (
            lr0b36[1], want2, rel(lr0b36[1], want2)))
        assert rel(lr0b36[1], want2) < 1e-6
    print("OK")


def check_schedule(cosine, linear):
    # lr 0.1, warmup 2, total 6, min_lr 0.01, 8 steps.
    c = math.cos
    want = [0.05, 0.1, 0.01 + 0.09 * (1 + c(math.pi / 4)) / 2, 0.055,
            0.01 + 0.09 * (1 + c(3 * math.pi / 4)) / 2, 0.01, 0.01, 0.01]
    lrs = load(cosine, "lrs")
    print("cosine lrs %s" % np.array2string(lrs, precision=6))
    assert np.allclose(lrs, want, rtol=1e-12, atol=0), (lrs, want)
    # Clipping at 0.05: the applied gradients' norm is the clip.
    grads = [np.load(f) for f in glob.glob(os.path.join(cosine, "grads_step1",
                                                         "*.npy"))]
    norm = math.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2))
                         for g in grads))
    before = load(cosine, "grad_norms")[0]
    print("clip 0.05: norm before %.6g, after %.9g" % (before, norm))
    assert before > 0.05 and rel(norm, 0.05) < 1e-5, (before, norm)
    # lr 3e-3, warmup 1, total 3, min_lr 0, 4 steps.
    lrs = load(linear, "lrs")
    print("linear lrs %s" % np.array2string(lrs, precision=6))
    assert np.allclose(lrs, [3e-3, 1.5e-3, 0, 0], rtol=1e-12, atol=0), lrs
    print("OK")


if __name__ == "__main__":
    if sys.argv[1] == "training":
        check_training(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5],
                       int(sys.argv[6]), "--batchnorm" in sys.argv[7:])
    elif sys.argv[1] == "schedule":
        check_schedule(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: see the docstring")
