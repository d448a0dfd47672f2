"""Holds plan.json's predicted communication time of plan-collectives.test's
three plans against REFERENCE.md's formulas (see the test's header)."""

import json
import os
import sys

work = sys.argv[1]
plans = {n: json.load(open(os.path.join(work, f"per{n}.plan.json")))
         for n in (1, 2, 4)}
profile = json.load(open(os.path.join(work, "per1.json")))
eff = profile["efficiency"]["network"]
beta_inter = profile["inter_node"]["bandwidth_bytes_per_s"] * eff
beta_intra = profile["intra_node"]["bandwidth_bytes_per_s"] * eff
n = 4
# What the gradient all-reduces move in all: every parameter's fp32
# gradient, and the loss (a 4-byte scalar averaged over dp).
S = 4 * plans[1]["parameters_total"] + 4
k, G = 2, 2
formulas = {
    1: ("one ring across 4 nodes", 2 * (n - 1) / n * S / beta_inter),
    4: ("one ring inside a node", 2 * (n - 1) / n * S / beta_intra),
    2: ("2 nodes of 2 ranks, hierarchical",
        2 * (k - 1) / k * S / beta_intra
        + 2 * (G - 1) / G * (S / k) / beta_inter),
}
for per in (1, 4, 2):
    label, expected = formulas[per]
    predicted = plans[per]["predicted"]["communication_s"]
    print(f"{label}: predicted {predicted:.5g} s, formula {expected:.5g} s, "
          f"ratio {predicted / expected:.4f}")
print(f"the flat ring across the nodes would be "
      f"{formulas[1][1] / formulas[2][1]:.2f}x the hierarchical")
