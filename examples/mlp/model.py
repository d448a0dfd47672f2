"""A multilayer perceptron classifier that returns its logits and loss."""

from torch import nn
from torch.nn import functional as F


class MLP(nn.Module):
    """Four Linear layers with ReLU and tanh-approximated GELU in between.

    forward(x [B, in_features] float, y [B] int64 class labels) returns
    (logits [B, num_classes], loss []), the loss being the mean cross entropy.
    """

    def __init__(self, in_features=16, hidden=64, num_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(in_features, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, hidden // 2)
        self.fc4 = nn.Linear(hidden // 2, num_classes)
        self.act1 = nn.ReLU()
        self.act2 = nn.GELU(approximate="tanh")
        self.act3 = nn.ReLU()

    def forward(self, x, y):
        h = self.act1(self.fc1(x))
        h = self.act2(self.fc2(h))
        h = self.act3(self.fc3(h))
        logits = self.fc4(h)
        loss = F.cross_entropy(logits, y)
        return logits, loss
