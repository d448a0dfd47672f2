"""Runs several PyTorch reference trainings in one process.

Usage: references.py ARGS... [--- ARGS...]...

Each ARGS is a command line of examples/common/train_reference.py (which
this script finds next to the test folder); the runs share one import of
PyTorch, which is most of the cost of a short run. Stops at the first run
that fails, with train_reference.py's message and exit status.
"""
import importlib.util
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean

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


def main(argv):
    runs, current = [], []
    for arg in argv[1:]:
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
        reference.main(run)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
