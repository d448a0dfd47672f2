"""The bounds dtc's training is held to, against PyTorch's float64 reference.

dtc computes in float32, so it ends some distance from the exact (float64)
trajectory; how far a float32 computation may land is a property of the
trajectory, not of dtc. references.py measures it for each reference run
(sensitivity.json): the distance from the float64 run of PyTorch's own
float32 run and of float64 runs whose initial weights were perturbed by one
float32 rounding. A check's bound is the larger of

- its stated tolerance (1e-4 relative for losses and trained weights, 1e-3
  for one tensor: well above float32 rounding through a short run of a
  small model, well below what a wrong formula, a missed term or a stale
  buffer does), and
- FACTOR times the measured spread, where a trajectory amplifies rounding:
  a ReLU or max-pool near a tie that one rounding flips (the CNN example
  with SGD at batch 4: PyTorch's float32 run with OpenBLAS's and ATen's
  AVX2 kernels, and one of six float64 runs perturbed in an earlier
  measurement, end 3.9e-4 from the float64 weights where the others end
  1.5e-7 from them), or Adam normalizing a
  gradient that is zero in exact arithmetic (the GPT's attention key bias,
  which softmax cancels).

FACTOR is 10: a perturbation of the initial weights alone moves the CNN's
final weights by about 4e-8, while float32 arithmetic throughout the run
(dtc's, or PyTorch's) moves them by 1.3e-7 to 1.5e-7, three to four times
as far; 10 leaves room over that without reaching a wrong formula's error.
"""
import json
import os

#: How many times the measured spread a float32 run may differ by.
FACTOR = 10.0


def load(refdir):
    """REFDIR/sensitivity.json, or None where the reference has none."""
    path = os.path.join(refdir, "sensitivity.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def bound(stated, spread):
    """The larger of the stated tolerance and FACTOR times the spread (None:
    the reference measured none)."""
    return max(stated, FACTOR * (spread or 0.0))


def describe(stated, spread):
    """How a bound came about, for a check's report line."""
    if spread is None:
        return f"bound {stated:g}, no float32 ensemble"
    if FACTOR * spread > stated:
        return (f"bound {FACTOR * spread:.2e} = {FACTOR:g} x the "
                f"float32 spread {spread:.2e}")
    return f"bound {stated:g}, float32 spread {spread:.1e}"


def record(line):
    """Appends a check's report line to $DTC_TEST_REPORT, when set: the
    figures of every comparison of a suite run in one file (the tolerance
    audit), where FileCheck otherwise swallows them."""
    path = os.environ.get("DTC_TEST_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(line.rstrip("\n") + "\n")
