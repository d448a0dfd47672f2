"""Reads nvcc's `-Xptxas -v` report (OUTDIR/build.log of dtc compile
--target cuda) and prints one row per kernel and architecture: registers,
shared memory, stack frame, spill stores and loads, and the kernel
(demangled, shortened). Then checks that every ARCH given was built and that
no kernel spills: prints OK or FAIL (exit 1).

Usage: ptxas_table.py BUILD.log [--arch sm_80 --arch sm_90] [--table]
"""
import argparse
import re
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("log")
    parser.add_argument("--arch", action="append", default=[])
    parser.add_argument("--table", action="store_true")
    args = parser.parse_args()
    rows, current = [], None
    for line in open(args.log):
        m = re.search(r"Compiling entry function '([^']+)' for '(sm_\d+)'",
                      line)
        if m:
            current = dict(name=m.group(1), arch=m.group(2), regs=0, smem=0,
                           stack=0, spill_st=0, spill_ld=0)
            rows.append(current)
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, "
                      r"(\d+) bytes spill loads", line)
        if m:
            current["stack"], current["spill_st"], current["spill_ld"] = map(
                int, m.groups())
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["regs"] = int(m.group(1))
            s = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(s.group(1)) if s else 0
    names = subprocess.run(["c++filt"], input="\n".join(r["name"] for r in rows),
                           stdout=subprocess.PIPE, universal_newlines=True
                           ).stdout.splitlines() if rows else []
    for row, name in zip(rows, names):
        row["pretty"] = name if len(name) < 90 else name[:87] + "..."
    if args.table:
        print("| arch | registers | smem B | stack B | spill st/ld B | kernel |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print("| %s | %d | %d | %d | %d/%d | %s |" % (
                r["arch"], r["regs"], r["smem"], r["stack"], r["spill_st"],
                r["spill_ld"], r.get("pretty", r["name"])))
    problems = []
    archs = sorted({r["arch"] for r in rows})
    for arch in args.arch:
        if arch not in archs:
            problems.append("no kernel built for %s" % arch)
    spilling = [r for r in rows if r["spill_st"] or r["spill_ld"]]
    for r in spilling:
        problems.append("%s spills on %s (%d/%d bytes)" % (
            r.get("pretty", r["name"]), r["arch"], r["spill_st"],
            r["spill_ld"]))
    print("%d kernels for %s, most registers %d, %d spilling" % (
        len(rows), " and ".join(archs),
        max([r["regs"] for r in rows] or [0]), len(spilling)))
    for p in problems:
        print("  " + p)
    print("FAIL" if problems or not rows else "OK")
    sys.exit(1 if problems or not rows else 0)


if __name__ == "__main__":
    main()
