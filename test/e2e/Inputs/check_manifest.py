"""Checks a distributed checkpoint's manifest against its files.

Usage: check_manifest.py FOLDER

- every (name, role) is listed either once whole ("replicated") or as
  blocks ("split") that tile it: `blocks` entries with distinct offsets
  along split_dim, block_shape times blocks along it = the whole's
  elements;
- every file holds its entry's dtype and shape (the block's for a block),
  and its CRC-32 (zlib.crc32 of numpy.load(file).tobytes()) is the
  manifest's checksum;
- prints the stages and the ranks whose files are there (file names
  "stageS-rankR-..."), how many tensors are split and into how many
  blocks, and the manifest's version.
"""
import collections
import json
import os
import sys
import zlib

import numpy

folder = sys.argv[1]
manifest = json.load(open(os.path.join(folder, "manifest.json")))
by_tensor = collections.defaultdict(list)
for t in manifest["tensors"]:
    by_tensor[(t["name"], t["role"])].append(t)
tiled = True
split = 0
blocks = collections.Counter()
for (name, role), entries in by_tensor.items():
    if entries[0]["sharding"] == "replicated":
        tiled &= len(entries) == 1
        continue
    split += 1
    first = entries[0]
    dim, n = first["split_dim"], first["blocks"]
    offsets = sorted(e["offsets"][dim] for e in entries)
    size = first["block_shape"][dim]
    tiled &= all(e["sharding"] == "split" and e["blocks"] == n and
                 e["block_shape"] == first["block_shape"] for e in entries)
    tiled &= offsets == [b * size for b in range(n)]
    tiled &= int(numpy.prod(first["block_shape"])) * n == \
        int(numpy.prod(first["shape"]))
    blocks[n] += 1
files_ok = True
for t in manifest["tensors"]:
    array = numpy.load(os.path.join(folder, t["file"]))
    shape = t["block_shape"] if t["sharding"] == "split" else t["shape"]
    crc = "crc32:%08x" % zlib.crc32(array.tobytes())
    files_ok &= list(array.shape) == list(shape) and crc == t["checksum"]
stages = sorted({t["file"].split("-")[0] for t in manifest["tensors"]})
ranks = sorted({t["file"].split("-")[1] for t in manifest["tensors"]},
               key=lambda r: int(r[4:]))
print("version", manifest["version"], "each tensor once, whole or tiled:",
      tiled, "files and checksums:", files_ok)
print("stages", stages, "ranks", ranks)
print("split", split, "tensors, by blocks", dict(sorted(blocks.items())))
