"""A small convolutional classifier that returns its logits and loss."""

import torch
from torch import nn
from torch.nn import functional as F


def conv_bn_relu(in_channels, out_channels):
    """3x3 convolution (no bias), BatchNorm and ReLU; keeps the image size."""
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(),
    )


class CNN(nn.Module):
    """Six convolutions and two Linear layers on 3x16x16 images:

      16x16: conv-bn-relu 3->8, conv-bn-relu 8->8, max pool 2x2
       8x8:  conv-bn-relu 8->16, conv-bn-relu 16->16, average pool 2x2
       4x4:  conv-bn-relu 16->32, conv 32->32 stride 2 (with bias) + relu
       2x2:  flatten to 128, linear 128->32 + relu, linear 32->num_classes

    forward(images [B, 3, 16, 16] float, labels [B] int64) returns
    (logits [B, num_classes], loss []), the loss being the mean cross entropy.
    """

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn_relu(3, 8),
            conv_bn_relu(8, 8),
            nn.MaxPool2d(2),
            conv_bn_relu(8, 16),
            conv_bn_relu(16, 16),
            nn.AvgPool2d(2),
            conv_bn_relu(16, 32),
            nn.Conv2d(32, 32, 3, stride=2, padding=1),
            nn.ReLU(),
        )
        self.classifier = nn.Sequential(
            nn.Flatten(),
            nn.Linear(32 * 2 * 2, 32),
            nn.ReLU(),
            nn.Linear(32, num_classes),
        )
        # Non-trivial BatchNorm parameters and running statistics, so that the
        # eval-mode normalization is not an identity and a swapped operand
        # shows.
        g = torch.Generator().manual_seed(1234)
        for module in self.modules():
            if isinstance(module, nn.BatchNorm2d):
                c = module.num_features
                with torch.no_grad():
                    module.weight.copy_(1 + 0.2 * torch.randn(c, generator=g))
                    module.bias.copy_(0.2 * torch.randn(c, generator=g))
                    mean, var = module.running_mean, module.running_var
                    mean.copy_(0.1 * torch.randn(c, generator=g))
                    var.copy_(1 + 0.5 * torch.rand(c, generator=g))

    def forward(self, images, labels):
        logits = self.classifier(self.features(images))
        loss = F.cross_entropy(logits, labels)
        return logits, loss
