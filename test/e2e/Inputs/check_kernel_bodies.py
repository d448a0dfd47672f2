"""Checks that a compiled program defines each fused kernel once.

Usage: check_kernel_bodies.py OUTDIR

Reads the fused-kernel definitions (`void fused_N(...) {...}`, static or
not) in OUTDIR's train.cpp and train-kernels-*.cpp, each in whatever stage
namespace holds it, and compares them without their names: kernels the same
up to their buffers, in one stage or in several (the stages of a pipeline
run the same layers), must be one definition. Prints the count, then OK,
or FAIL and the first repeated kernel's names.
"""
import os
import re
import sys

DEFINITION = re.compile(r"^(?:static )?void (fused_\d+)(\(.*?\) \{\n.*?^\}\n)",
                        re.M | re.S)


def main(argv):
    outdir = argv[1]
    names = sorted(n for n in os.listdir(outdir)
                   if n == "train.cpp" or (n.startswith("train-kernels-") and
                                           n.endswith(".cpp")))
    first = {}
    repeated = []
    count = 0
    for name in names:
        with open(os.path.join(outdir, name)) as f:
            for m in DEFINITION.finditer(f.read()):
                count += 1
                if m.group(2) in first:
                    repeated.append((first[m.group(2)], m.group(1)))
                else:
                    first[m.group(2)] = m.group(1)
    print(f"{count} kernel definitions, {len(first)} distinct")
    if count == 0:
        print("FAIL: no kernel definitions found")
        return 1
    if count != len(first):
        print("FAIL: a kernel is defined more than once, e.g. "
              + (" and ".join(repeated[0]) if repeated else "?"))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
