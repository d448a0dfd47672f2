"""Writes the ONNX test data that Debian's libonnx-testdata (ONNX 1.12,
opsets up to 17) lacks, from PyPI's `onnx` 1.16 (opsets up to 21):

  test/onnx/data/node18/TEST/   ONNX's node tests whose model imports opset
                                18, 19, 20 or 21, as ONNX's own
                                `backend-test-tools generate-data` writes them
  test/onnx/data/light/NAME/    the model zoo's classics as ONNX's wheel ships
                                them (onnx/backend/test/data/light: AlexNet,
                                DenseNet-121, Inception v1/v2, ResNet-50,
                                ShuffleNet, SqueezeNet, VGG-19, ZFNet-512;
                                float initializers replaced by ConstantOfShape)
                                with the input ONNX's runner feeds them
                                (arange(n)/n in the input's shape) and the
                                shipped output of ONNX's reference evaluator

Run by scripts/update-onnx-testdata.sh, which makes the virtual environment;
the suite reads only the files written here.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.numpy_helper

OPSETS = range(18, 22)


def default_opset(model):
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    return None


def write_node_tests(out):
    with tempfile.TemporaryDirectory() as tmp:
        node = os.path.join(tmp, "node")
        os.makedirs(node)  # generate-data lists it before writing into it
        subprocess.run([sys.executable, "-m", "onnx.backend.test.cmd_tools",
                        "generate-data", "-o", tmp], check=True,
                       stdout=subprocess.DEVNULL)
        kept = 0
        for test in sorted(os.listdir(node)):
            model = onnx.load(os.path.join(node, test, "model.onnx"))
            if default_opset(model) in OPSETS:
                shutil.copytree(os.path.join(node, test),
                                os.path.join(out, test))
                kept += 1
        print("node tests at opsets %d-%d: %d" % (OPSETS[0], OPSETS[-1], kept))


def write_light_models(out):
    light = os.path.join(os.path.dirname(onnx.__file__), "backend", "test",
                         "data", "light")
    for file in sorted(os.listdir(light)):
        if not file.endswith(".onnx"):
            continue
        stem = file[:-len(".onnx")]
        name = stem[len("light_"):]
        model = onnx.load(os.path.join(light, file))
        test = os.path.join(out, name)
        data = os.path.join(test, "test_data_set_0")
        os.makedirs(data)
        shutil.copy(os.path.join(light, file), os.path.join(test, "model.onnx"))
        inits = {i.name for i in model.graph.initializer}
        inputs = [x for x in model.graph.input if x.name not in inits]
        for i, x in enumerate(inputs):
            # As onnx.backend.test.runner's generate_dummy_data(random=False).
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1
                          for d in x.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            value = (np.arange(n).reshape(shape) / n).astype(np.float32)
            with open(os.path.join(data, "input_%d.pb" % i), "wb") as f:
                f.write(onnx.numpy_helper.from_array(value).SerializeToString())
        for i in range(len(model.graph.output)):
            shutil.copy(os.path.join(light, "%s_output_%d.pb" % (stem, i)),
                        os.path.join(data, "output_%d.pb" % i))
        print("light model %s: opset %d" % (name, default_opset(model)))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                        "test", "onnx", "data")
    for sub, write in (("node18", write_node_tests),
                       ("light", write_light_models)):
        out = os.path.join(root, sub)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        write(out)


if __name__ == "__main__":
    main()
