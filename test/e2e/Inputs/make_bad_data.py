"""Writes wrong training data for the MLP example (x: float32 [N, 16],
y: int64 [N]) from its good data, for the error tests of OUTDIR/train.

Usage: make_bad_data.py DATADIR OUTDIR

  x_f64.npy      x as float64                (wrong dtype)
  y_i32.npy      y as int32                  (wrong dtype)
  x_shape.npy    x[:, :8]                    (wrong sample shape)
  x_rank.npy     x[:, :, None]               (wrong sample rank)
  y_rank.npy     y[:, None]                  (wrong sample rank)
  x_empty.npy    x[:0], y_empty.npy y[:0]    (no samples)
  x_scalar.npy   a 0-d array                 (no sample axis)
  x_short.npy    x[:-1]                      (one sample fewer than y)
  x_few.npy, y_few.npy  the first 3 samples  (fewer than a global batch)
"""
import os
import sys

import numpy as np


def main(argv):
    data, out = argv[1], argv[2]
    os.makedirs(out, exist_ok=True)
    x = np.load(os.path.join(data, "x.npy"))
    y = np.load(os.path.join(data, "y.npy"))
    arrays = {
        "x_f64": x.astype(np.float64),
        "y_i32": y.astype(np.int32),
        "x_shape": np.ascontiguousarray(x[:, :8]),
        "x_rank": np.ascontiguousarray(x[:, :, None]),
        "y_rank": np.ascontiguousarray(y[:, None]),
        "x_empty": x[:0],
        "y_empty": y[:0],
        "x_scalar": np.array(1.0, dtype=np.float32),
        "x_short": x[:-1],
        "x_few": x[:3],
        "y_few": y[:3],
    }
    for name, array in arrays.items():
        np.save(os.path.join(out, name + ".npy"), array)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
