"""Starts a compiled program on several ranks, then kills or stops one.

Usage: kill_rank.py --np N --rank R --signal KILL|STOP [--limit S]
                    [--after-steps K] [--when-exists GLOB]
                    [--env NAME=VALUE ...] -- TRAIN ARGS...

Runs `mpirun -np N TRAIN ARGS... --log-jsonl LOG` (with each NAME=VALUE in
the ranks' environment), waits until the run has
logged K steps (default 1: it is in its training loop) and, with
--when-exists, until a path matching GLOB exists, sends the signal to the process
of rank R (the process of this job's mpirun that runs TRAIN with
OMPI_COMM_WORLD_RANK=R in /proc/PID/environ), and waits at
most S seconds (default 60) for the whole job to end. Prints what mpirun and
the ranks wrote, then "ended after T s with status X" or "still running
after S s" (and kills the job). A job that ends by itself is what a dead or
hung rank must cause: every rank ends, never a hang.
"""
import argparse
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time


def parent_pid(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            # The command name (field 2) may hold spaces; the parent follows
            # the closing parenthesis and the state.
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def descends_from(pid, ancestor):
    while pid and pid > 1:
        if pid == ancestor:
            return True
        pid = parent_pid(pid)
    return False


def rank_pid(train, rank, job_pid):
    """The process of `rank` in this job: it runs `train` (the same file, not
    just the same name: other tests may run their own `train` at the same
    time) and descends from this job's mpirun."""
    exe = os.path.realpath(train)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.path.realpath(f"/proc/{pid}/exe") != exe:
                continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        if (f"OMPI_COMM_WORLD_RANK={rank}".encode() in env
                and descends_from(int(pid), job_pid)):
            return int(pid)
    return None


def main(argv):
    split = argv.index("--")
    parser = argparse.ArgumentParser()
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--signal", choices=["KILL", "STOP"], required=True)
    parser.add_argument("--limit", type=float, default=60)
    parser.add_argument("--after-steps", type=int, default=1)
    parser.add_argument("--when-exists")
    parser.add_argument("--env", action="append", default=[])
    args = parser.parse_args(argv[1:split])
    train, rest = argv[split + 1], argv[split + 2:]
    log = tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False).name
    exports = [x for e in args.env for x in ("-x", e)]
    job = subprocess.Popen(
        ["mpirun", "--oversubscribe", "-np", str(args.np), *exports, train,
         *rest, "--log-jsonl", log],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and job.poll() is None:
        with open(log) as f:
            if f.read().count("\n") >= args.after_steps:
                break
        time.sleep(0.05)
    while (args.when_exists and time.time() < deadline and job.poll() is None
           and not glob.glob(args.when_exists)):
        time.sleep(0.01)
    pid = rank_pid(train, args.rank, job.pid)
    if pid is None or job.poll() is not None:
        job.kill()
        print(job.communicate()[0])
        print("kill_rank.py: the job did not start training")
        return 1
    start = time.time()
    os.kill(pid, getattr(signal, "SIG" + args.signal))
    try:
        out, _ = job.communicate(timeout=args.limit)
    except subprocess.TimeoutExpired:
        job.kill()
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # the signalled rank is gone already
        out = job.communicate()[0]
        print(out)
        print(f"still running after {args.limit:.0f} s")
        return 1
    print(out)
    print(f"ended after {time.time() - start:.1f} s with status "
          f"{'nonzero' if job.returncode else 'zero'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
