"""Holds plan.json's model-state bytes per parameter against the ZeRO paper's
accounting (Rajbhandari et al. 2020, section 3.1; ../shared/REFERENCE.md).

Usage: check_model_state.py PLAN.json EXPECTED_BYTES_PER_PARAMETER [SCALARS]

The model states a step holds are its parameters, their gradients and the
optimizer state, each once: parameters + gradients + optimizer_state of
plan.json's memory, plus every carried result that keeps a buffer of its
own (a second copy; state_in_place.copied must be 0, and "outputs" then
holds only the metrics). EXPECTED is the formula's figure per parameter:
fp32 SGD with momentum 4 + 4 + 4 = 12, fp32 AdamW 4 + 4 + 4 + 4 = 16,
bf16/fp16 AdamW with fp32 masters 2 + 2 + 4 + 4 + 4 = 16. SCALARS (bytes,
default 0) are the optimizer's scalar state outside the formula (fp16's
loss scale, good-step count and step count). Prints the figures, then OK or
FAIL (exit 1).
"""
import json
import sys


def main(argv):
    with open(argv[1]) as f:
        plan = json.load(f)
    expected = float(argv[2])
    scalars = int(argv[3]) if len(argv) > 3 else 0
    n = plan["parameters_total"]
    rank = plan["ranks"][0]
    memory = rank["memory_bytes"]
    in_place = rank["state_in_place"]
    held = memory["parameters"] + memory["gradients"] + \
        memory["optimizer_state"]
    per = (held - scalars) / n
    print(f"{plan['precision']}: {n} parameters, model states {held} bytes "
          f"({per:g} per parameter, formula {expected:g}); carried results "
          f"in place {in_place['results']}, copied {in_place['copied']}; "
          f"outputs {memory['outputs']} bytes")
    problems = []
    if per != expected:
        problems.append(f"{per:g} bytes per parameter, not {expected:g}")
    if in_place["copied"] != 0 or in_place["results"] == 0:
        problems.append(f"{in_place['copied']} carried results keep buffers "
                        f"of their own")
    # Only the metrics (scalars) are left as outputs.
    if memory["outputs"] > 64:
        problems.append(f"outputs hold {memory['outputs']} bytes")
    for p in problems:
        print(f"FAIL: {p}")
    print("OK" if not problems else "FAIL")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
