"""Checks a profile written by `dtc calibrate --mpi-ranks`: its
mpi_all_reduce samples, and its intra-node link against them.

Usage: check_mpi_profile.py PROFILE.json

The link must be the ring's alpha-beta fit (REFERENCE.md): an all-reduce of
B bytes over n ranks takes 2(n-1) latencies + 2(n-1)/n B / bandwidth. Each
sample must be within a factor of 3 of that prediction (the fit is one line
through eight sizes from 8 B to 16 MiB), the latency under 1 ms and the
bandwidth between 10 MB/s and 10 TB/s. Prints a summary, then OK or FAIL.
"""
import json
import sys

p = json.load(open(sys.argv[1]))
samples = p.get("mpi_all_reduce", [])
problems = []
ranks = sorted({int(s[0]) for s in samples})
sizes = sorted({int(s[1]) for s in samples})
print("%d samples over %s ranks, %d B to %d B" %
      (len(samples), ",".join(map(str, ranks)), sizes[0] if sizes else 0,
       sizes[-1] if sizes else 0))
link = p.get("intra_node", {})
alpha, beta = link.get("latency_s", -1), link.get("bandwidth_bytes_per_s", 0)
if not (0 <= alpha < 1e-3):
    problems.append("latency %g s" % alpha)
if not (1e7 < beta < 1e13):
    problems.append("bandwidth %g B/s" % beta)
if p.get("efficiency", {}).get("network") != 1:
    problems.append("network efficiency should be 1 for a measured link")
for n, size, seconds in samples:
    predicted = 2 * (n - 1) * alpha + 2 * (n - 1) / n * size / beta
    if not (seconds / 3 <= predicted <= seconds * 3):
        problems.append("%d B over %d ranks: measured %.3g s, the link "
                        "predicts %.3g s" % (size, n, seconds, predicted))
for problem in problems:
    print("  " + problem)
print("FAIL" if problems else "OK")
sys.exit(1 if problems else 0)
