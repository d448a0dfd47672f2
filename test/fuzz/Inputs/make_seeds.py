#!/usr/bin/env python3
"""Writes the seed corpus of the importer's fuzzer into a folder.

    make_seeds.py OUTDIR

Every model.onnx of Debian's ONNX test data (as SUITE-TEST.onnx; their
TensorProto data files are left out, they only slow the first pass down) and,
in OUTDIR/malformed, the malformed models of
test/Import/ONNX/Inputs/make_malformed.py. Used by test/fuzz/import-fuzz.test
and scripts/fuzz.sh.
"""

import glob
import os
import shutil
import subprocess
import sys

TESTDATA = "/usr/share/libonnx-testdata/data"
MALFORMED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                         "Import", "ONNX", "Inputs", "make_malformed.py")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for model in sorted(glob.glob(os.path.join(TESTDATA, "*", "*",
                                               "model.onnx"))):
        test_dir = os.path.dirname(model)
        name = "%s-%s.onnx" % (os.path.basename(os.path.dirname(test_dir)),
                               os.path.basename(test_dir))
        shutil.copyfile(model, os.path.join(out, name))
    subprocess.run([sys.executable, MALFORMED, os.path.join(out, "malformed")],
                   check=True)


if __name__ == "__main__":
    main()
