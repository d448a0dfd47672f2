"""Holds the bytes each rank's collectives sent per step in one run against
another's (the CPU target's, whose MPI ring counts every byte it sends).

Usage: compare_bytes.py LABEL WANT_DIR GOT_DIR

Each DIR holds the rank-N.json files of `train --rank-report DIR`. Every
rank of WANT must be in GOT with the same comm_bytes_per_step per mesh-axes
group, and some rank must have sent something. Prints one line per group
with rank 0's bytes, then OK or FAIL (exit 1).
"""
import glob
import json
import os
import sys


def main():
    label, want_dir, got_dir = sys.argv[1:4]
    problems = []
    totals = {}
    ranks = sorted(glob.glob(os.path.join(want_dir, "rank-*.json")))
    if not ranks:
        problems.append("no rank reports in " + want_dir)
    for path in ranks:
        want = json.load(open(path))["comm_bytes_per_step"]
        got_path = os.path.join(got_dir, os.path.basename(path))
        if not os.path.exists(got_path):
            problems.append("missing " + got_path)
            continue
        got = json.load(open(got_path))["comm_bytes_per_step"]
        if want != got:
            problems.append("%s: %s, expected %s" % (os.path.basename(path),
                                                      got, want))
        for group, n in want.items():
            totals[group] = totals.get(group, 0) + n
    for group in sorted(totals):
        print("%s: %s: %d bytes per step over all ranks" %
              (label, group, totals[group]))
    if not any(totals.values()):
        problems.append("no rank sent anything")
    for p in problems:
        print("  " + p)
    print("FAIL" if problems else "OK")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
