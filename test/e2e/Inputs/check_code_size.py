"""Compares the generated source of the same model at two depths.

Usage: check_code_size.py SHALLOW/train.cpp DEEP/train.cpp LAYERS_SHALLOW LAYERS_DEEP

Counts the fused-kernel functions each defines (`static void fused_N(`) and
the bytes of each file. Kernels that are the same up to their buffers (every
layer's) are emitted once, so both must define the same number of kernel
functions. The step itself (one call per op) still grows with depth: its
bytes are reported, not bounded. Prints the figures, then OK or FAIL.
"""
import re
import sys


def main(argv):
    shallow, deep = argv[1], argv[2]
    layers = int(argv[3]), int(argv[4])
    counts, sizes = [], []
    for path in (shallow, deep):
        with open(path) as f:
            text = f.read()
        counts.append(len(re.findall(r"^static void fused_\d+\(", text,
                                     re.M)))
        sizes.append(len(text.encode()))
    print(f"{layers[0]} layers: {counts[0]} kernel functions, {sizes[0]} "
          f"bytes; {layers[1]} layers: {counts[1]} kernel functions, "
          f"{sizes[1]} bytes (ratio {sizes[1] / sizes[0]:.2f})")
    if counts[0] != counts[1]:
        print("FAIL: the deeper model defines other kernels")
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
