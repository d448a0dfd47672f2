"""Compares the generated source of the same model at two depths.

Usage: check_code_size.py SHALLOW/train.cpp DEEP/train.cpp LAYERS_SHALLOW
       LAYERS_DEEP MAX_BYTES_RATIO

Counts in each file the fused-kernel functions (`static void fused_N(`), the
ops the step functions print (each sets `ctx->current_op`, once, whether
straight or inside a loop over the layers) and the bytes. Kernels that are
the same up to their buffers are defined once, and ops that repeat layer
after layer are printed once inside a loop, so both counts must be equal at
both depths; what still grows with depth is data (the loops' tables, the
tensor descriptions, guard mode's live ranges), whose share the bytes ratio
bounds. Prints the figures, then OK or FAIL.
"""
import sys


def main(argv):
    shallow, deep = argv[1], argv[2]
    layers = int(argv[3]), int(argv[4])
    bound = float(argv[5])
    kernels, ops, sizes = [], [], []
    for path in (shallow, deep):
        with open(path) as f:
            text = f.read()
        kernels.append(sum(1 for line in text.splitlines()
                           if line.startswith("static void fused_")))
        ops.append(text.count("ctx->current_op = "))
        sizes.append(len(text.encode()))
    ratio = sizes[1] / sizes[0]
    for n, k, o, b in zip(layers, kernels, ops, sizes):
        print(f"{n} layers: {k} kernel functions, {o} ops printed, {b} bytes")
    print(f"bytes ratio {ratio:.2f} (bound {bound})")
    failures = []
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
