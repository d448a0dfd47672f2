"""Rewrites the expected outputs of the node tests in test/onnx/data/node18
whose values ONNX 1.16.2's reference evaluator got wrong and later ONNX
releases corrected, with a later release's reference evaluator (the models
and inputs stay as ONNX 1.16.2 wrote them):

  test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True
      ceil_mode's last window divided by taps past the padded end
      (onnx/onnx#6650); ONNX Runtime and PyTorch count only the taps
      inside the input and its pads
  test_cast_FLOAT_to_BFLOAT16, test_castlike_FLOAT_to_BFLOAT16(_expanded)
      float to bfloat16 truncated instead of rounded to nearest even, as
      Cast's definition and PyTorch round

Run by scripts/update-onnx-testdata.sh after scripts/make-onnx-testdata.py,
in a virtual environment with a later `onnx`; fails if an output it would
replace is unchanged (the list is then out of date).
"""

import os
import sys

import numpy as np
import onnx
import onnx.helper
import onnx.numpy_helper
from onnx.reference import ReferenceEvaluator

STALE = [
    "test_averagepool_3d_dilations_large_count_include_pad_is_1_ceil_mode_is_True",
    "test_cast_FLOAT_to_BFLOAT16",
    "test_castlike_FLOAT_to_BFLOAT16",
    "test_castlike_FLOAT_to_BFLOAT16_expanded",
]


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "test", "onnx", "data", "node18")
    for test in STALE:
        folder = os.path.join(root, test)
        model = onnx.load(os.path.join(folder, "model.onnx"))
        data = os.path.join(folder, "test_data_set_0")
        feeds = {}
        for i, value in enumerate(model.graph.input):
            tensor = onnx.load_tensor(os.path.join(data, "input_%d.pb" % i))
            array = onnx.numpy_helper.to_array(tensor)
            # 1.16.2 wrote CastLike's bfloat16 `like` as UINT16 bits: read
            # them as the model declares them.
            declared = onnx.helper.tensor_dtype_to_np_dtype(
                value.type.tensor_type.elem_type)
            if array.dtype != declared:
                array = array.view(declared)
            feeds[value.name] = array
        results = ReferenceEvaluator(model).run(None, feeds)
        for i, (value, result) in enumerate(zip(model.graph.output, results)):
            path = os.path.join(data, "output_%d.pb" % i)
            old = onnx.load_tensor(path)
            new = onnx.numpy_helper.from_array(np.asarray(result), old.name)
            new.data_type = old.data_type
            if new.SerializeToString() == old.SerializeToString():
                sys.exit("%s: onnx %s computes the output 1.16.2 wrote; "
                         "nothing to refresh" % (test, onnx.__version__))
            with open(path, "wb") as f:
                f.write(new.SerializeToString())
        print("%s: output refreshed with onnx %s" % (test, onnx.__version__))


if __name__ == "__main__":
    main()
