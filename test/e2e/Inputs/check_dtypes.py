"""Checks that every outputK.npy in GOT has the dtype and shape of WANT's
(the interpreter's --expect compares values only).

Usage: check_dtypes.py GOT_DIR WANT_DIR; prints OK or the differences.
"""
import os
import sys

import numpy as np


def main(got_dir, want_dir):
    names = sorted(n for n in os.listdir(want_dir)
                   if n.startswith("output") and n.endswith(".npy"))
    bad = []
    for name in names:
        want = np.load(os.path.join(want_dir, name))
        got = np.load(os.path.join(got_dir, name))
        if got.dtype != want.dtype or got.shape != want.shape:
            bad.append(f"{name}: {got.dtype}{list(got.shape)} where PyTorch "
                       f"has {want.dtype}{list(want.shape)}")
    for line in bad:
        print(line)
    print(f"{len(names)} outputs" if names else "no outputs")
    print("FAIL" if bad or not names else "OK")
    return 1 if bad or not names else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
