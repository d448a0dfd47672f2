"""Compares the generated source of the same model at two depths.

Usage: check_code_size.py SHALLOW_OUTDIR DEEP_OUTDIR LAYERS_SHALLOW
       LAYERS_DEEP MAX_BYTES_RATIO

Counts in each OUTDIR's sources (train.cpp and the train-kernels-*.cpp
files that hold its fused kernels when they are many) the fused-kernel
functions defined (`void fused_N(...) {`), the ops the step functions print
(each sets `ctx->current_op`, once, whether straight or inside a loop over
the layers) and the bytes. Kernels that are
the same up to their buffers are defined once, and ops that repeat layer
after layer are printed once inside a loop, so both counts must be equal at
both depths; what still grows with depth is data (the loops' tables, the
tensor descriptions, guard mode's live ranges), whose share the bytes ratio
bounds. Prints the figures, then OK or FAIL.
"""
import os
import re
import sys

DEFINITION = re.compile(r"^(?:static )?void fused_\d+\(.*\) \{$", re.M)


def sources(outdir):
    """train.cpp's text, then its kernel files', in name order."""
    names = ["train.cpp"] + sorted(
        n for n in os.listdir(outdir)
        if n.startswith("train-kernels-") and n.endswith(".cpp"))
    texts = []
    for name in names:
        with open(os.path.join(outdir, name)) as f:
            texts.append(f.read())
    return texts


def main(argv):
    shallow, deep = argv[1], argv[2]
    layers = int(argv[3]), int(argv[4])
    bound = float(argv[5])
    kernels, ops, sizes = [], [], []
    for outdir in (shallow, deep):
        texts = sources(outdir)
        kernels.append(sum(len(DEFINITION.findall(t)) for t in texts))
        ops.append(texts[0].count("ctx->current_op = "))
        sizes.append(sum(len(t.encode()) for t in texts))
    ratio = sizes[1] / sizes[0]
    for n, k, o, b in zip(layers, kernels, ops, sizes):
        print(f"{n} layers: {k} kernel functions, {o} ops printed, {b} bytes")
    print(f"bytes ratio {ratio:.2f} (bound {bound})")
    failures = []
    if min(kernels) == 0 or min(ops) == 0:
        failures.append("no kernel definitions or ops found")
    if kernels[0] != kernels[1]:
        failures.append("the deeper model defines other kernels")
    if ops[0] != ops[1]:
        failures.append("the deeper model prints more ops")
    if ratio > bound:
        failures.append("the deeper model's source is too large")
    for failure in failures:
        print("FAIL:", failure)
    if not failures:
        print("OK")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
