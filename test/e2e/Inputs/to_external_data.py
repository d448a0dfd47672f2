"""Writes a copy of an ONNX model with every initializer of at least
--threshold bytes (default 0: all) as external data in one file next to it.

Usage: to_external_data.py IN.onnx OUT.onnx [--location NAME] [--threshold N]
"""
import argparse
import os
import sys

import onnx


def main(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--location", default="weights.data")
    parser.add_argument("--threshold", type=int, default=0)
    args = parser.parse_args(argv[1:])
    model = onnx.load(args.input)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    onnx.save_model(model, args.output, save_as_external_data=True,
                    all_tensors_to_one_file=True, location=args.location,
                    size_threshold=args.threshold)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
