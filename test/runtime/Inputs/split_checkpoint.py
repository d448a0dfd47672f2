"""Rewrites a whole tensor of a checkpoint as blocks, as a distributed run
writes a split tensor (one file and one "split" manifest entry per block).

Usage: split_checkpoint.py FOLDER NAME BLOCKS [--drop K] [--twice K]

Splits tensor NAME along its first dimension into BLOCKS blocks; --drop K
leaves block K out, --twice K lists block K twice (both are refused on
loading).
"""
import argparse
import json
import os
import zlib

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("folder")
parser.add_argument("name")
parser.add_argument("blocks", type=int)
parser.add_argument("--drop", type=int)
parser.add_argument("--twice", type=int)
args = parser.parse_args()
path = os.path.join(args.folder, "manifest.json")
manifest = json.load(open(path))
tensors = []
for t in manifest["tensors"]:
    if t["name"] != args.name:
        tensors.append(t)
        continue
    whole = np.load(os.path.join(args.folder, t["file"]))
    os.remove(os.path.join(args.folder, t["file"]))
    for k, block in enumerate(np.split(whole, args.blocks, axis=0)):
        if k == args.drop:
            continue
        file = f"rank{k}-{t['file']}"
        np.save(os.path.join(args.folder, file), block)
        entry = dict(t, sharding="split", split_dim=0, blocks=args.blocks,
                     block_shape=list(block.shape),
                     offsets=[k * block.shape[0]] + [0] * (block.ndim - 1),
                     file=file,
                     checksum="crc32:%08x" % zlib.crc32(block.tobytes()))
        tensors += [entry] * (2 if k == args.twice else 1)
manifest["tensors"] = tensors
manifest["version"] = 2
json.dump(manifest, open(path, "w"))
