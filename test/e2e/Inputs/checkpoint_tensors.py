"""Reads a dtc checkpoint's tensors whole, for the tests' checkers.

load(folder) -> {(name, role): (entry, array)}: a "replicated" entry's file
as it is; a "split" tensor's blocks (one entry each, written by the ranks
that hold them) put together along split_dim in the order of their
offsets, in the program's layout, then read as the whole's shape. The entry
is the tensor's first (its name, role, dtype, shape, sharding).
"""
import json
import os

import numpy as np


def manifest(folder):
    with open(os.path.join(folder, "manifest.json")) as f:
        return json.load(f)


def load(folder, m=None):
    m = m or manifest(folder)
    entries = {}
    for t in m["tensors"]:
        entries.setdefault((t["name"], t["role"]), []).append(t)
    out = {}
    for key, group in entries.items():
        first = group[0]
        if first.get("sharding", "replicated") != "split":
            out[key] = (first, np.load(os.path.join(folder, first["file"])))
            continue
        dim = first["split_dim"]
        group.sort(key=lambda t: t["offsets"][dim])
        whole = np.concatenate(
            [np.load(os.path.join(folder, t["file"])) for t in group],
            axis=dim)
        out[key] = (first, whole.reshape(first["shape"]))
    return out
