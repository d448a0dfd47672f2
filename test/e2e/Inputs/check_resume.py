"""Checks that a stopped and resumed run continued the exact trajectory.

Usage: check_resume.py WHOLE.jsonl RESUMED.jsonl

WHOLE.jsonl is the log of an uninterrupted run; RESUMED.jsonl the log of a
run stopped after some step and resumed with --resume (the log is appended
to). Both must hold the same steps 1..N in order, each with the same loss,
learning rate and gradient norm, exactly. Prints the figures, then OK or FAIL
(exit 1).
"""
import json
import sys


def read(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main(argv):
    whole, resumed = read(argv[1]), read(argv[2])
    numbers = [s["step"] for s in resumed]
    n = len(whole)
    if [s["step"] for s in whole] != list(range(1, n + 1)) or \
            numbers != list(range(1, n + 1)):
        print(f"FAIL: steps {numbers} after resuming, the uninterrupted run "
              f"has 1..{n}")
        return 1
    keys = ("loss", "lr", "grad_norm")
    differ = [(s["step"], k, s[k], w[k]) for s, w in zip(resumed, whole)
              for k in keys if s[k] != w[k]]
    print(f"resumed: {n} steps, {len(differ)} values differ from the "
          f"uninterrupted run")
    for step, key, got, want in differ[:5]:
        print(f"FAIL: step {step}: {key} {got!r}, uninterrupted {want!r}")
    print("OK" if not differ else "FAIL")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
