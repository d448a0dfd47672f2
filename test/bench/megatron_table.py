#!/usr/bin/python3
"""dtc's predicted throughput against Megatron-LM's published weak scaling.

Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
Clusters Using Megatron-LM" (SC 2021), table 1: GPTs of 1.7B to 1T
parameters (vocabulary 51,200, sequence 2,048) trained on up to 3,072
A100-80GB GPUs of NVIDIA's Selene (DGX A100 nodes: 8 GPUs on NVLink, one
200 Gb/s InfiniBand port per GPU), in mixed precision with activation
recompute, the interleaved pipeline schedule where p > 1 and plain data
parallelism, each row's achieved teraFLOP/s per GPU counted with the
paper's eq. 3 (the FLOPs of a step with full recompute, one forward more):
96 B s l h^2 (1 + s/(6h) + V/(16 l h)).

For each row this script writes the GPT with examples/gpt/make_weightless.py
(weights absent: only `dtc plan` reads it), plans the row's layout with
`dtc plan --json --device-profile a100-80g` (mesh dp x t x p, the paper's
batch, micro-batches of one sequence, bf16, AdamW, full recompute, the
interleaved schedule where p > 1, with 2 virtual stages per device, or 3
where 2 do not divide the layers evenly, as Megatron-LM requires of its
layers per chunk: 76.1B and 529.6B), and
prints the paper's teraFLOP/s per GPU beside the predicted one: eq. 3's
FLOPs over the predicted step time and the GPU count (and dtc's own count of
the FLOPs it runs, flops_per_step_all, over the same), with their ratio, the
predicted step split into compute / bubble / exposed communication, and the
predicted peak memory of a rank against the 80 GB.

What the paper leaves unsaid is assumed here and printed: micro-batch size 1
and the virtual stages per device. The table's FLOPs count only what eq. 3
counts; both sides use it.

Not part of the suite (planning the large rows takes minutes each).
Usage: megatron_table.py [--rows 1.7B,18.4B,...] [--dtc PATH] [--work DIR]
"""

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SEQ, VOCAB = 2048, 51200

#: Table 1 of Narayanan et al. 2021: name, heads, hidden, layers, tensor-
#: and pipeline-parallel sizes, GPUs, batch, achieved teraFLOP/s per GPU.
ROWS = [
    ("1.7B", 24, 2304, 24, 1, 1, 32, 512, 137),
    ("3.6B", 32, 3072, 30, 2, 1, 64, 512, 138),
    ("7.5B", 32, 4096, 36, 4, 1, 128, 512, 142),
    ("18.4B", 48, 6144, 40, 8, 1, 256, 1024, 135),
    ("39.1B", 64, 8192, 48, 8, 2, 512, 1536, 138),
    ("76.1B", 80, 10240, 60, 8, 4, 1024, 1792, 140),
    ("145.6B", 96, 12288, 80, 8, 8, 1536, 2304, 148),
    ("310.1B", 128, 16384, 96, 8, 16, 1920, 2160, 155),
    ("529.6B", 128, 20480, 105, 8, 35, 2520, 2520, 163),
    ("1008.0B", 160, 25600, 128, 8, 64, 3072, 3072, 163),
]



def virtual_stages(layers, p):
    """2 chunks per device, or 3, whichever cuts the layers evenly."""
    for v in (2, 3):
        if layers % (p * v) == 0:
            return v
    return 1


def eq3_flops(batch, layers, hidden):
    """Megatron-LM eq. 3: a step's FLOPs with full activation recompute."""
    l, h, s, V = layers, hidden, SEQ, VOCAB
    return 96 * batch * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default=",".join(r[0] for r in ROWS),
                        help="comma-separated row names (default: all)")
    parser.add_argument("--dtc", default=os.path.join(ROOT, "build", "bin",
                                                      "dtc"))
    parser.add_argument("--work", default="/tmp/dtc-megatron-table",
                        help="where the weightless models are written")
    parser.add_argument("--json", help="write the rows' figures here")
    args = parser.parse_args()
    wanted = args.rows.split(",")
    unknown = [w for w in wanted if w not in [r[0] for r in ROWS]]
    if unknown:
        sys.exit("unknown rows " + ", ".join(unknown) + "; the table has " +
                 ", ".join(r[0] for r in ROWS))
    os.makedirs(args.work, exist_ok=True)
    print("micro-batch 1, bf16, AdamW, full recompute, interleaved schedule "
          "(v chunks per device) where p > 1; profile a100-80g")
    header = (f"{'model':>8} {'t':>2} {'p':>3} {'v':>1} {'GPUs':>5} "
              f"{'batch':>5} | "
              f"{'paper':>6} {'dtc':>6} {'ratio':>5} {'dtc-own':>7} | "
              f"{'step s':>7} {'compute':>7} {'bubble':>6} {'exposed':>7} "
              f"{'peak GiB':>8} {'plan s':>6}")
    print(header)
    results = []
    for (name, heads, hidden, layers, t, p, gpus, batch,
         paper) in ROWS:
        if name not in wanted:
            continue
        model = os.path.join(args.work, name)
        if not os.path.exists(os.path.join(model, "model.onnx")):
            subprocess.run([sys.executable,
                            os.path.join(ROOT, "examples", "gpt",
                                         "make_weightless.py"),
                            "--out", model, "--layers", str(layers),
                            "--hidden", str(hidden), "--heads", str(heads),
                            "--seq", str(SEQ), "--vocab", str(VOCAB)],
                           check=True, stdout=subprocess.DEVNULL)
        dp = gpus // (t * p)
        cmd = [args.dtc, "plan", os.path.join(model, "model.onnx"),
               "--mesh", f"{dp}x{t}x{p}", "--global-batch", str(batch),
               "--micro-batch", "1", "--precision", "bf16",
               "--optimizer", "adamw", "--recompute", "full",
               "--device-profile", "a100-80g", "--memory-limit", "1000000",
               "--json"]
        v = virtual_stages(layers, p) if p > 1 else 1
        if v > 1:
            cmd += ["--schedule", "interleaved", "--virtual-stages", str(v)]
        elif p > 1:
            cmd += ["--schedule", "1f1b"]
        start = time.time()
        run = subprocess.run(cmd, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        seconds = time.time() - start
        if run.returncode != 0:
            print(f"{name:>8}: dtc plan failed ({' '.join(cmd[1:])}):\n" +
                  run.stderr.strip())
            continue
        plan = json.loads(run.stdout)
        predicted = plan["predicted"]
        step = predicted["step_time_s"]
        ours = eq3_flops(batch, layers, hidden) / step / gpus / 1e12
        own = plan["flops_per_step_all"] / step / gpus / 1e12
        peak = max(r["memory_bytes"]["peak"] for r in plan["ranks"]) / 2**30
        print(f"{name:>8} {t:>2} {p:>3} {v:>1} {gpus:>5} {batch:>5} | "
              f"{paper:>6} {ours:>6.1f} {ours / paper:>5.2f} {own:>7.1f} | "
              f"{step:>7.2f} {predicted['compute_s']:>7.2f} "
              f"{predicted['bubble_s']:>6.2f} "
              f"{predicted['exposed_communication_s']:>7.2f} "
              f"{peak:>8.1f} {seconds:>6.1f}", flush=True)
        results.append(dict(model=name, t=t, p=p, v=v, gpus=gpus, batch=batch,
                            paper_tflops=paper, predicted_tflops=ours,
                            ratio=ours / paper, dtc_flops_tflops=own,
                            step_s=step, compute_s=predicted["compute_s"],
                            bubble_s=predicted["bubble_s"],
                            exposed_s=predicted["exposed_communication_s"],
                            peak_gib=peak, plan_seconds=seconds))
    within = sum(1 for r in results if abs(r["ratio"] - 1) <= 0.25)
    print(f"{within} of {len(results)} rows within 25% of the paper")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
