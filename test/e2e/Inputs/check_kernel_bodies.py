"""Checks that a compiled program defines each fused kernel once.

Usage: check_kernel_bodies.py OUTDIR

Reads the fused-kernel definitions (`void fused_N(...) {...}`, static or
not) in OUTDIR's train.cpp and train-kernels-*.cpp, each in whatever stage
namespace holds it, and compares them without their names: kernels the same
up to their buffers, in one stage or in several (the stages of a pipeline
run the same layers), must be one definition. Prints the count, then OK,
or FAIL and the first repeated kernel's names.
"""
import re
import sys

from check_code_size import sources

DEFINITION = re.compile(r"^(?:static )?void (fused_\d+)(\(.*?\) \{\n.*?^\}\n)",
                        re.M | re.S)


def main(argv):
    first = {}  # a kernel's text without its name: the first name defining it
    repeated = []  # (the first name, a later one) of the same text
    for text in sources(argv[1]):
        for m in DEFINITION.finditer(text):
            name, body = m.group(1), m.group(2)
            if body in first:
                repeated.append((first[body], name))
            else:
                first[body] = name
    print(f"{len(first) + len(repeated)} kernel definitions, "
          f"{len(first)} distinct")
    if not first:
        print("FAIL: no kernel definitions found")
        return 1
    if repeated:
        print("FAIL: a kernel is defined more than once, e.g. "
              + " and ".join(repeated[0]))
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
