"""Statistical test of dtg.dropout in training (test/e2e/dropout-statistics.test).

  dropout_statistics.py make OUTDIR
      OUTDIR/model.onnx: x [batch, N] -> Dropout(ratio 0.1) and Dropout(ratio
      0.5) in training mode (streams 0 and 1), each times a parameter of N
      ones (w1, w2), loss = ReduceMean(d1 * w1) + ReduceMean(d2 * w2);
      OUTDIR/x.npy: two samples, x and 2x (x uniform in +-[0.5, 2)).
  dropout_statistics.py check OUTDIR NAME=GRADDIR ... [--same A,B,...]
                             [--differ A,B]
      decodes the dropout outputs from each step-1 gradient folder, checks
      keep rate, scaling and key independence, and that folders named with
      --same give bit-identical gradients (replay) and folders named with
      --differ masks that share only the expected fraction (other keys).

Why the gradients show the masks: with global batch 2 and micro-batch 1,
micro-batch k of step s sees sample k under the dropout key (seed, s) with
its elements at indices k*N onwards, as they are in the global batch
(BuildTrainStep; on two data-parallel ranks, rank k holds sample k and draws
the same bits), and d(loss)/d(w) is the dropout output divided by N. N is
a power of two and the step divides by 2 micro-batches, so the applied
gradient is exactly (d_k0 + d_k1) / 2N, whose entries are one of 0, a, 2a
and fl(3a) with a = fl(x * (1 / (1 - ratio))). Each entry is decoded exactly;
any other value is a scaling error.
"""
import math
import os
import sys

import numpy as np

N = 1 << 17
# The ratios as the model holds them (float32; 0.1 is 0.10000000149...).
RATIOS = {"w1": float(np.float32(0.1)), "w2": 0.5}
SIGMAS = 5.0


def make(out):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    os.makedirs(out, exist_ok=True)
    nodes, inits = [], []
    terms = []
    for k, (param, ratio) in enumerate(RATIOS.items()):
        inits.append(numpy_helper.from_array(np.ones(N, np.float32), param))
        nodes.append(helper.make_node(
            "Constant", [], ["ratio%d" % k],
            value=numpy_helper.from_array(np.array(ratio, np.float32))))
        nodes.append(helper.make_node(
            "Dropout", ["x", "ratio%d" % k, "training"],
            ["d%d" % k, "mask%d" % k], name="dropout%d" % k))
        nodes.append(helper.make_node("Mul", ["d%d" % k, param], ["p%d" % k]))
        nodes.append(helper.make_node("ReduceMean", ["p%d" % k], ["l%d" % k],
                                      keepdims=0))
        terms.append("l%d" % k)
    nodes.insert(0, helper.make_node(
        "Constant", [], ["training"],
        value=numpy_helper.from_array(np.array(True))))
    nodes.append(helper.make_node("Add", terms, ["loss"]))
    graph = helper.make_graph(
        nodes, "dropout_statistics",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", N])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        inits)
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    rng = np.random.default_rng(0)
    x = (rng.uniform(0.5, 2.0, N) * rng.choice([-1.0, 1.0], N))
    x = x.astype(np.float32)
    np.save(os.path.join(out, "x.npy"), np.stack([x, 2 * x]))
    return 0


class Failure(Exception):
    pass


def decode(x, ratio, grad):
    """The masks of micro-batches 0 and 1 encoded in one applied gradient."""
    a = (x.astype(np.float64) * (1.0 / (1.0 - ratio))).astype(np.float32)
    two = (2 * a).astype(np.float32)
    three = (a + two).astype(np.float32)
    value = (grad.astype(np.float64) * (2 * N)).astype(np.float32)
    if not np.array_equal(value.astype(np.float64) / (2 * N),
                          grad.astype(np.float64)):
        raise Failure("gradient entries are not exact multiples of 1/2N")
    is0 = value == 0
    is1, is2, is3 = value == a, value == two, value == three
    bad = ~(is0 | is1 | is2 | is3)
    if bad.any():
        j = int(np.argmax(bad))
        raise Failure("element %d is %r: neither 0 nor x/(1-ratio) (%r) of "
                      "one or both micro-batches" % (j, float(value[j]),
                                                     float(a[j])))
    return is1 | is3, is2 | is3


def within(count, n, p):
    """|count - n p| in standard deviations of Binomial(n, p)."""
    return abs(count - n * p) / math.sqrt(n * p * (1 - p))


def check(argv):
    out = argv[0]
    dirs, same, differ = {}, [], []
    args = iter(argv[1:])
    for arg in args:
        if arg in ("--same", "--differ"):
            (same if arg == "--same" else differ).append(next(args).split(","))
        else:
            name, path = arg.split("=", 1)
            dirs[name] = path
    x = np.load(os.path.join(out, "x.npy"))[0]
    masks = {}
    ok = True

    def report(good, text):
        nonlocal ok
        ok = ok and good
        print(("ok:   " if good else "FAIL: ") + text)

    for name, path in dirs.items():
        for param, ratio in RATIOS.items():
            grad = np.load(os.path.join(path, param + ".npy"))
            try:
                m0, m1 = decode(x, ratio, grad)
            except Failure as e:
                report(False, "%s %s: %s" % (name, param, e))
                continue
            masks[(name, param)] = (m0, m1)
            for k, m in enumerate((m0, m1)):
                kept = int(m.sum())
                z = within(kept, N, 1 - ratio)
                report(z <= SIGMAS,
                       "%s ratio %g micro-batch %d: kept %.4f of %d "
                       "(expected %.4f, %.1f sigma), kept values exactly "
                       "x/(1-ratio)" % (name, ratio, k, kept / N, N,
                                        1 - ratio, z))
            # Indices [0, N) and [N, 2N) of one key: independent masks.
            both = int((m0 & m1).sum())
            z = within(both, N, (1 - ratio) ** 2)
            report(z <= SIGMAS and not np.array_equal(m0, m1),
                   "%s ratio %g: the two micro-batches' keys share %.4f "
                   "(independent: %.4f, %.1f sigma)" %
                   (name, ratio, both / N, (1 - ratio) ** 2, z))
        if (name, "w1") in masks and (name, "w2") in masks:
            # Streams 0 and 1 under the same key: independent masks.
            a, b = masks[(name, "w1")][0], masks[(name, "w2")][0]
            p = (1 - RATIOS["w1"]) * (1 - RATIOS["w2"])
            z = within(int((a & b).sum()), N, p)
            report(z <= SIGMAS, "%s: the two ops' masks share %.4f "
                   "(independent: %.4f, %.1f sigma)" %
                   (name, (a & b).sum() / N, p, z))
    for group in same:
        first = group[0]
        for other in group[1:]:
            equal = all(
                np.array_equal(
                    np.load(os.path.join(dirs[first], p + ".npy")).view(
                        np.uint32),
                    np.load(os.path.join(dirs[other], p + ".npy")).view(
                        np.uint32)) for p in RATIOS)
            report(equal, "%s and %s: bit-identical dropout outputs" %
                   (first, other))
    for a, b in differ:
        for param, ratio in RATIOS.items():
            if (a, param) not in masks or (b, param) not in masks:
                report(False, "%s / %s %s: no masks to compare" % (a, b,
                                                                    param))
                continue
            for k in (0, 1):
                ma, mb = masks[(a, param)][k], masks[(b, param)][k]
                z = within(int((ma & mb).sum()), N, (1 - ratio) ** 2)
                report(z <= SIGMAS and not np.array_equal(ma, mb),
                       "%s vs %s ratio %g micro-batch %d: masks share %.4f "
                       "(independent: %.4f, %.1f sigma)" %
                       (a, b, ratio, k, (ma & mb).sum() / N,
                        (1 - ratio) ** 2, z))
    print("OK" if ok else "FAIL")
    return 0 if ok else 1


def main(argv):
    if len(argv) >= 3 and argv[1] == "make":
        return make(argv[2])
    if len(argv) >= 4 and argv[1] == "check":
        return check(argv[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
