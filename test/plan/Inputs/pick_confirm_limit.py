"""Finds a memory limit under which autotune's best estimate that fits does
not fit when planned whole, while a later candidate does.

Usage: pick_confirm_limit.py CSV
CSV: `dtc autotune --csv` of a run without a limit, every candidate planned
whole (plan_peak_bytes set). Each midpoint between a candidate's estimated
and whole-plan peak (estimate below) is tried: under the limit L, the
candidates whose estimate is at most L are ranked as autotune ranks them
(step time, then peak); L is taken when the first of them peaks above L
planned whole and a later one within L. Prints L in GiB (what
--memory-limit takes) and the flags of the candidate that should win,
or fails saying no such limit exists.
"""
import csv
import sys

rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["plan_peak_bytes"]]
limits = sorted((float(r["peak_bytes"]) + float(r["plan_peak_bytes"])) / 2
                for r in rows
                if float(r["peak_bytes"]) < float(r["plan_peak_bytes"]))
for limit in limits:
    fitting = sorted((r for r in rows if float(r["peak_bytes"]) <= limit),
                     key=lambda r: (float(r["step_s"]),
                                    float(r["peak_bytes"])))
    if len(fitting) < 2 or float(fitting[0]["plan_peak_bytes"]) <= limit:
        continue
    later = [r for r in fitting[1:] if float(r["plan_peak_bytes"]) <= limit]
    if later:
        print(f"{limit / 2**30:.9f}")
        sys.exit(0)
sys.exit("no limit makes the best estimate fail when planned whole")
