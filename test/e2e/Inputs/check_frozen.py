"""Checks which parameters a compiled training run changed.

Usage: check_frozen.py ORIGINAL.onnx CHECKPOINT_DIR --freeze PATTERN,...

Every tensor of CHECKPOINT_DIR/manifest.json with the role "parameter" whose
name matches a --freeze glob (fnmatch, as dtc and train_reference.py match
them) must equal ORIGINAL.onnx's initializer bit for bit, and every other
parameter must differ from it (training moved it). Also fails if a glob
matches no parameter, or if the checkpoint holds optimizer state for a
frozen parameter. Prints the figures, then OK or FAIL (exit 1).
"""
import argparse
import fnmatch
import sys

import numpy as np

import checkpoint_tensors
import onnx
import onnx.numpy_helper


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("original")
    parser.add_argument("checkpoint")
    parser.add_argument("--freeze", required=True)
    args = parser.parse_args(argv[1:])
    patterns = [p for p in args.freeze.split(",") if p]

    original = {i.name: onnx.numpy_helper.to_array(i)
                for i in onnx.load(args.original).graph.initializer}
    # (name, role) -> (entry, whole value), blocks put together.
    tensors = checkpoint_tensors.load(args.checkpoint)

    problems = []
    frozen, trained = [], []
    kept, moved = 0, 0
    for (name, role), (_, value) in tensors.items():
        if role != "parameter":
            continue
        if name not in original:
            problems.append(f"{name} is no initializer of the original")
            continue
        same = value.dtype == original[name].dtype and \
            value.shape == original[name].shape and \
            value.tobytes() == original[name].tobytes()
        if any(fnmatch.fnmatchcase(name, p) for p in patterns):
            frozen.append(name)
            kept += int(same)
            if not same:
                problems.append(f"frozen {name} changed")
        else:
            trained.append(name)
            moved += int(not same)
            if same:
                problems.append(f"{name}, which is not frozen, did not "
                                f"change")
    for p in patterns:
        if not any(fnmatch.fnmatchcase(n, p) for n in frozen):
            problems.append(f"--freeze pattern '{p}' matches no parameter")
    for name, role in tensors:
        if role == "optimizer_state" and \
                any(name.startswith(n + ".") for n in frozen):
            problems.append(f"optimizer state {name} for a frozen "
                            f"parameter")

    print(f"frozen: {kept} of {len(frozen)} unchanged "
          f"({', '.join(sorted(frozen))}); others: {moved} of "
          f"{len(trained)} changed")
    for p in problems:
        print(f"FAIL: {p}")
    print("OK" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
