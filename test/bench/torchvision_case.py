"""torchvision models for train_speed.py: ResNet-18 and MobileNetV2 with 10
classes, seeded weights, and a cross-entropy loss, as a model.onnx that
`dtc compile` and ONNX Runtime Training take and as the same module for
PyTorch.

  python3 torchvision_case.py NAME OUT --batch B --size S --samples N

writes OUT/model.onnx (opset 17, training mode, inputs `images` [B, 3, S, S]
and `labels` [B] with a dynamic batch axis, outputs `logits` and `loss`),
OUT/train/images.npy and OUT/train/labels.npy (N samples). `build(name)` and
`load_weights(module, onnx_model)` give the module with the export's
weights (its initializers, by the module's parameter and buffer names).
"""

import argparse
import sys

import torch
import torch.nn.functional as F
import torchvision

from case_common import load_weights, save_and_export  # noqa: F401

MODELS = {"resnet18": torchvision.models.resnet18,
          "mobilenet_v2": torchvision.models.mobilenet_v2}
CLASSES = 10


class WithLoss(torch.nn.Module):
    """The classifier and the mean cross-entropy of its logits: forward
    returns (logits, loss), as the examples' models do."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, images, labels):
        logits = self.net(images)
        return logits, F.cross_entropy(logits, labels)


def build(name):
    """The model with seeded weights, in training mode, its dropout off (a
    random mask would differ between the frameworks, and so would the
    losses being compared)."""
    torch.manual_seed(0)
    model = WithLoss(MODELS[name](num_classes=CLASSES))
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0
    model.train()
    return model


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("name", choices=sorted(MODELS))
    parser.add_argument("out")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=64)
    parser.add_argument("--samples", type=int, default=64)
    args = parser.parse_args(argv)
    model = build(args.name)
    g = torch.Generator().manual_seed(1)
    images = torch.randn(args.samples, 3, args.size, args.size, generator=g)
    labels = torch.randint(0, CLASSES, (args.samples,), generator=g)
    save_and_export(model, args.out, args.batch,
                    {"images": images, "labels": labels})
    # Every side loads its weights from the file's initializers (tracing
    # ran a forward, which moved BatchNorm's running statistics, and the
    # file holds the moved ones).


if __name__ == "__main__":
    main(sys.argv[1:])
