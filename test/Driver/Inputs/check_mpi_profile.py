"""Checks a profile written by `dtc calibrate --mpi-ranks`: its
mpi_all_reduce samples, and its intra-node link against them.

Usage: check_mpi_profile.py PROFILE.json

The link must be the ring's alpha-beta model (REFERENCE.md: an all-reduce
of B bytes over n ranks takes 2(n-1) latencies + 2(n-1)/n B / bandwidth)
fitted to the samples by least squares in relative error (t = a + b B with
weights 1/t^2; latency a / 2(n-1), bandwidth 2(n-1)/n / b), recomputed here
from the samples to 1e-6; the latency under 10 ms and the bandwidth above
1 MB/s (a loaded machine measures slowly, never absurdly). Timings are not
checked against each other: the suite runs beside other tests. Prints a
summary, then OK or FAIL.
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
if not (0 <= alpha < 1e-2):
    problems.append("latency %g s" % alpha)
if not (1e6 < beta < 1e13):
    problems.append("bandwidth %g B/s" % beta)
if p.get("efficiency", {}).get("network") != 1:
    problems.append("network efficiency should be 1 for a measured link")
points = [(b, t) for r, b, t in samples if r == 2]
sw = sx = sy = sxx = sxy = 0.0
for b, t in points:
    w = 1 / (t * t)
    sw, sx, sy = sw + w, sx + w * b, sy + w * t
    sxx, sxy = sxx + w * b * b, sxy + w * b * t
slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx)
intercept = (sy - slope * sx) / sw
want_alpha = max(intercept, 0) / 2
want_beta = 1 / max(slope, 1e-18)
if abs(alpha - want_alpha) > 1e-6 * max(want_alpha, 1e-12):
    problems.append("latency %g s, the fit gives %g s" % (alpha, want_alpha))
if abs(beta - want_beta) > 1e-6 * want_beta:
    problems.append("bandwidth %g B/s, the fit gives %g B/s" %
                    (beta, want_beta))
for problem in problems:
    print("  " + problem)
print("FAIL" if problems else "OK")
sys.exit(1 if problems else 0)
