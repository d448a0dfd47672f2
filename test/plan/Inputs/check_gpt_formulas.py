"""Holds `dtc plan --json` of a GPT (examples/gpt/make_weightless.py) against
the published formulas of ../../../../shared/REFERENCE.md, written here from
the papers, not from dtc's code:

- parameters, Megatron-LM eq. 2: 12 l h^2 (1 + 13/(12 h) + (V + s)/(12 l
  h)), plus the final LayerNorm's 2 h, which the equation leaves out:
  exactly;
- model FLOPs of a step, Korthikanti et al. eq. 7: 72 B l s h^2 (1 + s/(6 h)
  + V/(12 h l)): within 1%;
- mixed-precision AdamW model states per rank (ZeRO, Rajbhandari et al.
  §5): ZeRO-0 16 P, ZeRO-1 4 P + 12 P/N_d, ZeRO-2 2 P + 14 P/N_d, ZeRO-3
  16 P/N_d bytes (P the parameters of the rank's stage and tensor-parallel
  slice; only with --check-states, bf16): within 1%;
- data-parallel bytes a rank sends a step: the ring all-reduce of the
  gradients, 2 (N_d - 1)/N_d P elements of --grad-bytes bytes (ZeRO 1 and 2
  the same, ZeRO 3 1.5 times), plus --dp-scalars all-reduces of one fp32
  scalar each (the loss and its token count), of which rank 0 sends 4
  bytes: exactly;
- the pipeline bubble, (p - 1)/(v m): exactly;
- with --check-stash (a pipeline, gpipe or 1f1b): the activations stage 0
  holds at its fullest, the micro-batches in flight times what one saves
  (REFERENCE.md: 1F1B keeps at most p micro-batches in flight on the first
  stage, GPipe all m): exactly;
- with --check-activations (16-bit): the activations one layer saves for
  its backward (plan.json's saved_activations of the nodes /h.1/..., a
  middle layer: its residual sums are the next layer's norm inputs), per
  micro-batch of b sequences, within 10% of Korthikanti et al.'s table 2
  under the same saved set: sbh (10 + 24/t + 5as/(ht)) less the dropout
  terms the model has none of (two sbh masks, and 3as^2b of the attention
  dropout's mask and output), so sbh (8 + 24/t + 2as/(ht)); with
  --sequence-parallel sbh (34/t + 5as/(ht)) less the same, so sbh (32/t +
  2as/(ht)). One term differs in precision, not in what is saved: the two
  LayerNorm inputs (2 sbh each in the table, 2 sbh/t under sequence
  parallelism) are saved in fp32, as torch.autocast saves them (its layer
  norms run in fp32; Megatron's fused ones take 16-bit inputs), so 4 sbh
  (4 sbh/t) more. Under full recompute (plan.json's recompute mode
  "full") the table's 2 sbh, the layer's 16-bit output that the next layer
  starts from (the next LayerNorm's fp32 copy of it is recomputed): 2 sbh
  (2 sbh/t with sequence parallelism). Printed tensor by tensor.

Usage: check_gpt_formulas.py PLAN.json --layers L --hidden H --seq S
           --vocab V [--check-states] [--grad-bytes N --dp-scalars K]
           [--check-activations --heads A [--sequence-parallel]]
           [--check-stash]
Prints each figure beside its formula, then OK or FAIL (exit 1)."""
import argparse
import json
import sys


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    for name in ("layers", "hidden", "seq", "vocab"):
        parser.add_argument("--" + name, type=int, required=True)
    parser.add_argument("--check-states", action="store_true")
    parser.add_argument("--grad-bytes", type=int)
    parser.add_argument("--dp-scalars", type=int, default=0)
    parser.add_argument("--check-activations", action="store_true")
    parser.add_argument("--heads", type=int)
    parser.add_argument("--sequence-parallel", action="store_true")
    parser.add_argument("--check-stash", action="store_true")
    args = parser.parse_args(argv[1:])
    with open(args.plan) as f:
        plan = json.load(f)
    l, h, s, V = args.layers, args.hidden, args.seq, args.vocab
    B = plan["global_batch"]
    dp, tp, pp = (plan["mesh"][k] for k in ("dp", "tp", "pp"))
    zero = plan["zero"]
    problems = []

    params = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h))
    params = round(params) + 2 * h
    print(f"parameters {plan['parameters_total']}, Megatron eq. 2 + 2h "
          f"{params}")
    if plan["parameters_total"] != params:
        problems.append("parameters differ")

    flops = 72 * B * l * s * h * h * (1 + s / (6 * h) + V / (12 * h * l))
    ratio = plan["flops_per_step"] / flops
    print(f"model FLOPs a step {plan['flops_per_step']:.6e}, Korthikanti "
          f"eq. 7 {flops:.6e} (ratio {ratio:.4f})")
    if abs(ratio - 1) > 0.01:
        problems.append("model FLOPs beyond 1%")

    rank0 = plan["ranks"][0]
    if args.check_states:
        m = rank0["memory_bytes"]
        states = m["parameters"] + m["gradients"] + m["optimizer_state"]
        P = params / (tp * pp)
        n = dp
        want = {0: 16 * P, 1: 4 * P + 12 * P / n, 2: 2 * P + 14 * P / n,
                3: 16 * P / n}[zero]
        print(f"model states of rank 0 {states}, ZeRO-{zero} {want:.0f} "
              f"(ratio {states / want:.4f})")
        if abs(states / want - 1) > 0.01:
            problems.append("model states beyond 1%")

    if args.grad_bytes is not None and dp > 1:
        P = params / (tp * pp)
        grads = 2 * (dp - 1) / dp * P * args.grad_bytes
        if zero == 3:
            grads *= 1.5
        # A ring all-reduce of one element over n ranks: the element is
        # rank 0's chunk, which rank 0 sends once (in the all-gather phase).
        scalars = args.dp_scalars * 4
        want = grads + scalars
        got = rank0["comm_bytes_per_step"]["dp"]
        print(f"dp bytes rank 0 sends a step {got}: gradients {grads:.0f} + "
              f"{args.dp_scalars} scalar all-reduces {scalars} = {want:.0f}")
        if got != round(want):
            problems.append("dp bytes differ")

    if args.check_activations:
        a, b = args.heads, plan["micro_batch"]
        sbh = s * b * h
        if plan["recompute"]["mode"] == "full":
            want = sbh * 2 / (tp if args.sequence_parallel else 1)
        elif args.sequence_parallel:
            want = sbh * (32 / tp + 2 * a * s / (h * tp) + 4 / tp)
        else:
            want = sbh * (8 + 24 / tp + 2 * a * s / (h * tp) + 4)
        layer = [e for e in rank0["saved_activations"]
                 if e["onnx_node"].startswith("/h.1/")]
        got = sum(e["bytes"] for e in layer)
        for e in sorted(layer, key=lambda e: -e["bytes"]):
            print(f"  {e['bytes'] / sbh:7.3f} sbh  {e['onnx_node']} "
                  f"({e['tensor']})")
        print(f"activations of layer 1 {got} bytes = {got / sbh:.3f} sbh, "
              f"Korthikanti table 2 without dropout {want:.0f} = "
              f"{want / sbh:.3f} sbh with fp32 norm inputs (ratio {got / want:.4f})")
        if abs(got / want - 1) > 0.10:
            problems.append("activations beyond 10%")

    if pp > 1:
        v = plan.get("virtual_stages", 1)
        m = plan["micro_batches"]
        want = (pp - 1) / (v * m)
        got = plan["predicted"]["bubble_fraction"]
        print(f"bubble fraction {got}, (p - 1)/(v m) = {want}")
        if got != want:
            problems.append("bubble differs")

    if args.check_stash:
        m = plan["micro_batches"]
        inflight = {"gpipe": m, "1f1b": min(pp, m)}[plan["schedule"]]
        mem = rank0["memory_bytes"]
        want = inflight * mem["saved_activations"]
        got = mem["activations"]
        print(f"activations stage 0 holds {got} bytes, {inflight} "
              f"micro-batches in flight ({plan['schedule']}, p {pp}, m {m}) "
              f"x {mem['saved_activations']} = {want}")
        if got != want:
            problems.append("stage 0's activations differ")

    for p in problems:
        print("  " + p)
    print("FAIL" if problems else "OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
