"""Exports an example model to ONNX and writes PyTorch's reference outputs.

Each example's make_example.py describes its model with an `Example` and hands
it to `main`, which parses the shared command line:

  --out DIR         where model.onnx and the .npy files go (created)
  --opset N         ONNX opset (13, 14 or 17 are the ones dtc is tested at)
  --training        export in TrainingMode.TRAINING (BatchNormalization takes
                    batch statistics, Dropout nodes stay in the graph)
  --static          export without dynamic axes (the batch size is baked in)
  --batch N         the batch size of the export and of its reference data
  --ref-batch N     also write inputs and PyTorch's outputs for batch size N
                    into DIR/batchN/ (repeatable), from the same weights
  --all-variants    write every variant the tests use into
                    DIR/opsetN-{eval,training}-{dynamic,static}/ (one Python
                    start instead of twelve; --ref-batch applies to the
                    dynamic ones)
  --print-ops       print the Counter of the export's node op types
  --dynamo          export with PyTorch 2's default exporter
                    (torch.onnx.export(..., dynamo=True): opset 20 by
                    default, IR version 10, Gelu as one op, the opset-18
                    forms of the reductions and Split) with optimize=False;
                    eval mode only (torch.export traces inference:
                    BatchNormalization in inference form, no Dropout; dtc's
                    --train-batchnorm trains it as model.train() does).
                    Under a PyTorch older than 2.5 the script reruns itself
                    in a virtual environment with PyTorch 2 and onnxscript
                    from PyPI ($DTC_TORCH2_VENV, default
                    ~/.cache/dtc/venv-torch2), made on first use
  --torchscript     also save the module (same weights) with torch.jit.save,
                    scripted (DIR/model_scripted.pt) and traced on the
                    export's data (DIR/model_traced.pt), for dtc's
                    TorchScript importer
  --dynamo-optimize with --dynamo, also run the exporter's optimizer (its
                    default): an inference model, not one to train. It
                    folds BatchNormalization into the convolutions under
                    the convolutions' names and a transposed weight into a
                    new initializer, so a weight tied to it (the GPT's
                    embedding and head) becomes two parameters

DIR/ receives model.onnx, one NAME.npy per graph input (the data) and one
NAME.npy per graph output (PyTorch's result for that data), NAME being the
ONNX input or output name. Everything is deterministic: the weights depend only
on --seed, the data on --seed and the batch size.
"""

import argparse
import collections
import copy
import os
import sys
import warnings

import numpy as np
import onnx
import onnx.checker
import onnx.numpy_helper
import onnx.shape_inference
import torch

#: The opsets --all-variants exports at.
ALL_OPSETS = (13, 14, 17)
#: What PyTorch 2's exporter is pinned to in the virtual environment that
#: --dynamo makes (the newest releases on PyPI when none is given).
TORCH2_PACKAGES = ("torch", "onnxscript", "onnx", "numpy")


class Example:
    """What `main` needs to know about one example model.

    build_model(): returns the nn.Module; it is called once, after seeding.
    make_inputs(batch, generator): returns a list of input tensors, in the
      order of input_names and of the module's forward arguments.
    input_names, output_names: the ONNX names; forward returns one tensor per
      output name. Outputs of rank 0 (the loss) have no batch axis.
    default_batch: the batch size of the export unless --batch says otherwise.
    """

    def __init__(self, name, build_model, make_inputs, input_names,
                 output_names, default_batch):
        self.name = name
        self.build_model = build_model
        self.make_inputs = make_inputs
        self.input_names = list(input_names)
        self.output_names = list(output_names)
        self.default_batch = default_batch


def _parse_args(example, argv):
    parser = argparse.ArgumentParser(
        description="Exports the %s example to ONNX with PyTorch's reference "
        "outputs." % example.name)
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--opset", type=int, default=None,
                        choices=range(13, 22), metavar="{13..21}",
                        help="ONNX opset version (default 17; with --dynamo "
                        "the exporter's default; 18 and later need "
                        "--dynamo)")
    parser.add_argument("--training", action="store_true",
                        help="export in TrainingMode.TRAINING")
    parser.add_argument("--static", action="store_true",
                        help="export without dynamic batch axes")
    parser.add_argument("--batch", type=int, default=example.default_batch,
                        help="batch size of the export (default %d)" %
                        example.default_batch)
    parser.add_argument("--ref-batch", type=int, action="append", default=[],
                        metavar="N",
                        help="also write references for batch size N into "
                        "OUT/batchN/ (repeatable)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the weights and data (default 0)")
    parser.add_argument("--all-variants", action="store_true",
                        help="write every tested variant (opsets %s, eval "
                        "and training, dynamic and static) into "
                        "OUT/opsetN-{eval,training}-{dynamic,static}/, "
                        "ignoring --opset, --training and --static" %
                        ", ".join(map(str, ALL_OPSETS)))
    parser.add_argument("--print-ops", action="store_true",
                        help="print a Counter of the export's node op types")
    parser.add_argument("--dynamo", action="store_true",
                        help="export with PyTorch 2's default exporter "
                        "(dynamo=True, optimize=False; eval mode; reruns "
                        "under a virtual environment with PyTorch 2 if "
                        "this one is older)")
    parser.add_argument("--torchscript", action="store_true",
                        help="also write DIR/model_scripted.pt and "
                        "DIR/model_traced.pt (torch.jit.save)")
    parser.add_argument("--dynamo-optimize", action="store_true",
                        help="with --dynamo, also run the exporter's "
                        "optimizer (for inference: it changes parameters)")
    args = parser.parse_args(argv)
    if args.dynamo_optimize and not args.dynamo:
        parser.error("--dynamo-optimize needs --dynamo")
    if args.dynamo and (args.training or args.all_variants):
        parser.error("--dynamo exports the eval-mode model only (drop %s)" %
                     ("--training" if args.training else "--all-variants"))
    if args.opset is not None and args.opset > 17 and not args.dynamo:
        parser.error("opset %d needs --dynamo (PyTorch's TorchScript-based "
                     "exporter writes up to 17 here)" % args.opset)
    if args.opset is None and not args.dynamo:
        args.opset = 17
    for batch in [args.batch] + args.ref_batch:
        if batch < 1:
            parser.error("batch sizes must be positive, got %d" % batch)
    if args.static and args.ref_batch and not args.all_variants:
        parser.error("--ref-batch needs a dynamic export (drop --static)")
    return args


def _make_data(example, batch, seed):
    """The inputs for one batch size: a fixed stream per (seed, batch)."""
    generator = torch.Generator().manual_seed(1000003 * (seed + 1) + batch)
    return example.make_inputs(batch, generator)


def _write_npys(directory, names, tensors):
    os.makedirs(directory, exist_ok=True)
    for name, tensor in zip(names, tensors):
        np.save(os.path.join(directory, name + ".npy"),
                tensor.detach().numpy(), allow_pickle=False)


def _reference(model, training, inputs):
    """PyTorch's outputs on a private copy (training-mode BatchNorm updates its
    running statistics; the export must see the untouched weights)."""
    ref = copy.deepcopy(model)
    ref.train(training)
    with torch.no_grad():
        outputs = ref(*inputs)
    if not isinstance(outputs, (tuple, list)):
        outputs = (outputs,)
    return outputs


def _check_export(path, state, buffers, folded=False):
    """Loads the export back, makes sure its initializers hold the weights the
    references were computed with, and runs ONNX's checker and shape inference.

    Tracing in training mode runs the forward once, and training-mode
    BatchNorm updates its running statistics as it does so: buffers that moved
    are put back to their values before the export, so that the file holds the
    model's initial state. A parameter that differs is an error, unless
    `folded` (the dynamo exporter's optimizer folded BatchNormalization into
    the convolutions' weights, under their names).
    """
    model = onnx.load(path)
    restored = False
    for init in model.graph.initializer:
        if init.name not in state:
            continue
        want = state[init.name].numpy()
        if np.array_equal(onnx.numpy_helper.to_array(init), want):
            continue
        if folded:
            continue
        if init.name not in buffers:
            sys.exit("error: initializer %s differs from the model's weights"
                     % init.name)
        init.CopyFrom(onnx.numpy_helper.from_array(want, init.name))
        restored = True
    if restored:
        onnx.save(model, path)
    onnx.checker.check_model(model, full_check=True)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    return model


def _variant_name(opset, training, static):
    return "opset%d-%s-%s" % (opset, "training" if training else "eval",
                              "static" if static else "dynamic")


def _export_variant(example, model, state, args, out, opset, training,
                    static):
    """Writes one export and its references into `out`."""
    os.makedirs(out, exist_ok=True)
    inputs = _make_data(example, args.batch, args.seed)
    outputs = _reference(model, training, inputs)
    _write_npys(out, example.input_names, inputs)
    _write_npys(out, example.output_names, outputs)
    if not static:
        for batch in args.ref_batch:
            directory = os.path.join(out, "batch%d" % batch)
            ref_inputs = _make_data(example, batch, args.seed)
            _write_npys(directory, example.input_names, ref_inputs)
            _write_npys(directory, example.output_names,
                        _reference(model, training, ref_inputs))

    dynamic_axes = None
    if not static:
        dynamic_axes = {name: {0: "batch"} for name in example.input_names}
        for name, output in zip(example.output_names, outputs):
            if output.dim() > 0:
                dynamic_axes[name] = {0: "batch"}
    path = os.path.join(out, "model.onnx")
    if args.dynamo:
        _export_dynamo(example, model, inputs, path, opset, static,
                       args.dynamo_optimize)
    else:
        _export_torchscript(example, model, inputs, path, opset, training,
                            dynamic_axes)
    buffers = {name for name, _ in model.named_buffers()}
    exported = _check_export(path, state, buffers, args.dynamo_optimize)
    if args.torchscript:
        _save_torchscript(model, inputs, out, training)
    if args.print_ops:
        counter = collections.Counter(n.op_type for n in exported.graph.node)
        print("%s %s: %s" % (example.name,
                             "dynamo" if args.dynamo else
                             _variant_name(opset, training, static),
                             dict(sorted(counter.items()))))


def _save_torchscript(model, inputs, out, training):
    """torch.jit.save of the module scripted and traced (in the mode of the
    export), with the weights the ONNX file holds."""
    module = copy.deepcopy(model)
    module.train(training)
    torch.jit.script(module).save(os.path.join(out, "model_scripted.pt"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(copy.deepcopy(module), tuple(inputs),
                                 check_trace=False)
    # Tracing in training mode ran the forward, which moved BatchNorm's
    # running statistics: put back the model's.
    initial = model.state_dict()
    with torch.no_grad():
        for name, value in traced.state_dict().items():
            value.copy_(initial[name])
    traced.save(os.path.join(out, "model_traced.pt"))


def _export_dynamo(example, model, inputs, path, opset, static, optimize):
    """torch.onnx.export(dynamo=True) as a user calls it, with the batch axis
    dynamic unless `static`."""
    kwargs = {}
    if opset is not None:
        kwargs["opset_version"] = opset
    if not static:
        batch = torch.export.Dim("batch")
        kwargs["dynamic_shapes"] = tuple({0: batch} for _ in inputs)
    exported = copy.deepcopy(model)
    exported.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(exported, tuple(inputs), path, dynamo=True,
                          input_names=example.input_names,
                          output_names=example.output_names,
                          optimize=optimize, **kwargs)


def _export_torchscript(example, model, inputs, path, opset, training,
                        dynamic_axes):
    mode = (torch.onnx.TrainingMode.TRAINING if training
            else torch.onnx.TrainingMode.EVAL)
    with warnings.catch_warnings():
        # The tracer warns about Python ints taken from tensor sizes; they are
        # exported as Shape/Gather chains, which is what the importer expects.
        warnings.simplefilter("ignore")
        torch.onnx.export(copy.deepcopy(model), tuple(inputs), path,
                          input_names=example.input_names,
                          output_names=example.output_names,
                          opset_version=opset, training=mode,
                          do_constant_folding=False,
                          dynamic_axes=dynamic_axes)


def rerun_under_torch2(argv):
    """With --dynamo under a PyTorch without the dynamo exporter (Debian's
    1.13), reruns this script with the same arguments under the Python of a
    virtual environment with PyTorch 2 and onnxscript, made on first use.
    Returns only when no rerun is needed."""
    version = tuple(int(v) for v in torch.__version__.split(".")[:2])
    if "--dynamo" not in argv or version >= (2, 5):
        return
    venv = os.environ.get("DTC_TORCH2_VENV") or os.path.join(
        os.path.expanduser("~"), ".cache", "dtc", "venv-torch2")
    python = os.path.join(venv, "bin", "python")
    if not os.path.isfile(python):
        print("--dynamo: making %s with %s from PyPI (PyTorch %s here has no "
              "dynamo exporter; a few GB)" % (venv, ", ".join(TORCH2_PACKAGES),
                                              torch.__version__),
              file=sys.stderr)
        import subprocess
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "--quiet"] +
                       list(TORCH2_PACKAGES), check=True)
    sys.stdout.flush()
    os.execv(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:])


def main(example, argv=None):
    args = _parse_args(example, argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    model = example.build_model()
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if not args.all_variants:
        _export_variant(example, model, state, args, args.out, args.opset,
                        args.training, args.static)
        return
    for opset in ALL_OPSETS:
        for training in (False, True):
            for static in (False, True):
                out = os.path.join(args.out,
                                   _variant_name(opset, training, static))
                _export_variant(example, model, state, args, out, opset,
                                training, static)
