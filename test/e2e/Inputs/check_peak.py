"""Holds plan.json's planned arena and peak against what the runtime measured
(the last line of the training log): the arena's high-water mark, and that
plus every tensor buffer the runtime allocated for the step.

Usage: check_peak.py PLAN.json LOG.jsonl
"""
import json
import sys


def main(argv):
    with open(argv[1]) as f:
        plan = json.load(f)
    with open(argv[2]) as f:
        last = [json.loads(line) for line in f if line.strip()][-1]
    memory = plan["ranks"][0]["memory_bytes"]
    ok = True
    for key, planned, measured in (
            ("arena", memory["arena"], last["arena_high_water_bytes"]),
            ("peak", memory["peak"], last["memory_peak_bytes"])):
        good = planned == measured
        ok = ok and good
        print(f"planned {key} {planned} bytes, measured {measured} bytes: "
              f"{'OK' if good else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
