"""Compares two dtc checkpoints of the same model, taken on different meshes.

Usage: compare_checkpoints.py ONE_RANK_DIR MESH_DIR [--rtol R]

Checks that both manifests list the same tensors (name, role, dtype, whole
shape) at the same step and data position, and that every tensor of the
mesh's checkpoint (whole, or put together from the blocks the ranks wrote:
each "split" entry's block at its offsets along split_dim, in the
program's layout, then read as the whole's shape) is within R (default
1e-4, relative L2) of the one-rank checkpoint's. Prints one line with the
worst difference, then OK or FAIL (exit 1).
"""
import argparse
import sys

import numpy as np

from checkpoint_tensors import load, manifest


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("one")
    parser.add_argument("mesh")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args(argv[1:])
    a, b = manifest(args.one), manifest(args.mesh)
    problems = []
    for key in ("step", "data_position", "global_batch"):
        if a[key] != b[key]:
            problems.append(f"{key}: {b[key]} against {a[key]}")
    ta, tb = load(args.one, a), load(args.mesh, b)
    if set(ta) != set(tb):
        problems.append(f"tensors differ: {sorted(set(ta) ^ set(tb))}")
    worst, where = 0.0, ""
    for key in sorted(set(ta) & set(tb)):
        (x, u), (y, v) = ta[key], tb[key]
        if x["shape"] != y["shape"] or x["dtype"] != y["dtype"]:
            problems.append(f"{key}: {y['dtype']}{y['shape']} against "
                            f"{x['dtype']}{x['shape']}")
            continue
        u, v = u.astype(np.float64), v.astype(np.float64)
        rel = np.linalg.norm(v - u) / max(np.linalg.norm(u), 1e-12)
        if rel > worst:
            worst, where = rel, f"{key[0]} ({key[1]})"
        if rel > args.rtol:
            problems.append(f"{key[0]} ({key[1]}): {rel:.2e} relative L2")
    print(f"{len(tb)} tensors, worst {worst:.1e} relative L2 {where}")
    for p in problems:
        print(f"  {p}")
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
