"""Checks `dtc autotune`'s CSV and report against each other and against
whole-model plans.

Usage: check_autotune.py CSV REPORT DEVICES

- every candidate is a layout of DEVICES (dp x tp x pp = DEVICES), none
  twice;
- each candidate confirmed on the whole model (plan_step_s set) was priced
  per layer within 35% of that plan's step time and 50% of its peak;
- the report's winner ("best: FLAGS") is the fastest confirmed candidate
  that fits, and no unconfirmed candidate was estimated faster than the
  slowest confirmed one (the confirmed are the estimate's best).
Prints one line per check.
"""
import csv
import re
import sys


def main(path, report_path, devices):
    rows = list(csv.DictReader(open(path)))
    seen = set()
    for r in rows:
        layout = (r["dp"], r["tp"], r["pp"], r["zero"], r["recompute"],
                  r["micro_batch"], r["schedule"], r["virtual_stages"],
                  r["sequence_parallel"])
        assert layout not in seen, layout
        seen.add(layout)
        assert int(r["dp"]) * int(r["tp"]) * int(r["pp"]) == devices, layout
    print(f"{len(rows)} candidates, each a layout of {devices} devices, "
          "none twice")
    confirmed = [r for r in rows if r["plan_step_s"]]
    assert confirmed, "no candidate was planned whole"
    worst = 0
    for r in confirmed:
        est, plan = float(r["step_s"]), float(r["plan_step_s"])
        err = abs(est - plan) / plan
        peak_err = abs(float(r["peak_bytes"]) - float(r["plan_peak_bytes"])) \
            / float(r["plan_peak_bytes"])
        worst = max(worst, err)
        assert err < 0.35, (r, err)
        assert peak_err < 0.5, (r, peak_err)
    print(f"{len(confirmed)} confirmed: per-layer step time within 35% of "
          "the whole plan's")
    report = open(report_path).read()
    best = re.search(r"^best: (.*)$", report, re.M).group(1)
    mesh = re.search(r"--mesh (\d+)x(\d+)x(\d+)", best).groups()
    micro = re.search(r"--micro-batch (\d+)", best).group(1)
    fastest = min(confirmed, key=lambda r: float(r["plan_step_s"]))
    assert (fastest["dp"], fastest["tp"], fastest["pp"]) == mesh, (fastest,
                                                                   best)
    assert fastest["micro_batch"] == micro, (fastest, best)
    print("the winner is the fastest plan confirmed on the whole model")
    slowest_confirmed = max(float(r["step_s"]) for r in confirmed)
    for r in rows:
        if r["fits"] == "1" and not r["plan_step_s"] and not r["pruned"]:
            assert float(r["step_s"]) >= slowest_confirmed - 1e-12, r
    print("the confirmed are the best estimated")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
