"""Writes TorchScript modules the importer must refuse, each saved with
torch.jit.save into OUT: an op dtc does not support (unsupported_op.pt,
torch.cumprod on the line marked CUMPROD), control flow on the data that
freezing cannot remove (data_dependent.pt, the `if` marked BRANCH), a
result whose shape depends on the data (data_shape.pt, the boolean mask
marked MASK), an in-place update of forward's argument (mutate_input.pt,
MUTATE), of a view (view_mutation.pt, VIEW) and of a buffer read again
(buffer_update.pt, COUNT), and files that are not TorchScript archives (truncated.pt: the
first half of one; text.pt); and a module that imports (linear.pt, one
output) for the errors of the flags that name its values. Usage: make_modules.py OUT"""
import os
import sys

import torch
from torch import nn


class UnsupportedOp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return torch.cumprod(self.fc(x), 0).sum()  # CUMPROD


class DataDependent(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = self.fc(x)
        if bool(h.sum() > 0):  # BRANCH
            h = h * 2
        return h.sum()


class DataShape(nn.Module):
    def forward(self, x):
        return x[x > 0].sum()  # MASK


class MutateInput(nn.Module):
    def forward(self, x):
        x.mul_(2)  # MUTATE
        return x.sum()


class ViewMutation(nn.Module):
    def forward(self, x):
        h = x * 2
        h[:, 0].add_(1)  # VIEW
        return h.sum()


class BufferUpdate(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("count", torch.ones(1))

    def forward(self, x):
        self.count.add_(1)  # COUNT
        return (x * self.count).sum()


def main(out):
    os.makedirs(out, exist_ok=True)
    torch.jit.script(nn.Linear(4, 3)).save(os.path.join(out, "linear.pt"))
    torch.jit.script(UnsupportedOp()).save(os.path.join(out,
                                                        "unsupported_op.pt"))
    torch.jit.script(DataDependent()).save(os.path.join(out,
                                                        "data_dependent.pt"))
    torch.jit.script(DataShape()).save(os.path.join(out, "data_shape.pt"))
    torch.jit.script(MutateInput()).save(os.path.join(out,
                                                      "mutate_input.pt"))
    torch.jit.script(ViewMutation()).save(os.path.join(out,
                                                       "view_mutation.pt"))
    torch.jit.script(BufferUpdate()).save(os.path.join(out,
                                                       "buffer_update.pt"))
    with open(os.path.join(out, "unsupported_op.pt"), "rb") as f:
        whole = f.read()
    with open(os.path.join(out, "truncated.pt"), "wb") as f:
        f.write(whole[:len(whole) // 2])
    with open(os.path.join(out, "text.pt"), "w") as f:
        f.write("not a model\n")


if __name__ == "__main__":
    main(sys.argv[1])
