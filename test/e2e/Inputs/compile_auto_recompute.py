"""Compiles a model with --recompute auto under a memory limit halfway
between the whole peaks of two earlier compiles (none and full), and writes
the limit in bytes to OUTDIR/limit_bytes.

Usage: compile_auto_recompute.py DTC MODEL OUTDIR NONE/plan.json FULL/plan.json
                                  [dtc compile flags...]
"""
import json
import os
import subprocess
import sys


def peak(path):
    with open(path) as f:
        return json.load(f)["ranks"][0]["memory_bytes"]["peak"]


def main(argv):
    dtc, model, out, none_plan, full_plan = argv[1:6]
    limit = (peak(none_plan) + peak(full_plan)) // 2
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "limit_bytes"), "w") as f:
        f.write(f"{limit}\n")
    cmd = [dtc, "compile", model, "-o", out, "--recompute", "auto",
           "--memory-limit", repr(limit / 2**30)] + argv[6:]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
