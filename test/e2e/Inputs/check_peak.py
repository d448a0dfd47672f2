"""Holds plan.json's planned arena against the arena high-water mark the
runtime measured (the last line of the training log).

Usage: check_peak.py PLAN.json LOG.jsonl
"""
import json
import sys


def main(argv):
    with open(argv[1]) as f:
        plan = json.load(f)
    with open(argv[2]) as f:
        last = [json.loads(line) for line in f if line.strip()][-1]
    planned = plan["ranks"][0]["memory_bytes"]["arena"]
    measured = last["arena_high_water_bytes"]
    ok = planned == measured
    print(f"planned peak {planned} bytes, measured {measured} bytes: "
          f"{'OK' if ok else 'MISMATCH'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
