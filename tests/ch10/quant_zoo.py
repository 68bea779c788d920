"""The torch models that chapter 10 quantizes with both minifx and torch.ao."""

from __future__ import annotations

import torch
import torch.nn as nn

from tests.ch07.ch07_models import randomize_batchnorms, resnet18


class ConvBNReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.bn(self.conv(x)))


class LinearReLU(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


class ResidualBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


class WithFloatOp(nn.Module):
    """GELU has no int8 kernel: it stays in float between dequantize and quantize; the add
    without a ReLU becomes quantized.add."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.lin2 = nn.Linear(4, 4)
        self.gelu = nn.GELU()

    def forward(self, x):
        z = self.lin(x) + self.lin2(x)
        return self.lin2(self.gelu(z))


def issue_example() -> nn.Module:
    """The issue's Sequential(Conv2d, ReLU, Flatten, Linear)."""
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))


def zoo() -> dict[str, tuple[nn.Module, tuple[int, ...]]]:
    """name -> (model in eval mode with random BatchNorm statistics, input shape)."""
    torch.manual_seed(0)
    models = {
        "conv_bn_relu": (ConvBNReLU(), (2, 3, 8, 8)),
        "linear_relu": (LinearReLU(), (4, 16)),
        "residual_block": (ResidualBlock(), (2, 8, 8, 8)),
        "with_float_op": (WithFloatOp(), (3, 4)),
        "issue_example": (issue_example(), (2, 3, 8, 8)),
        "resnet18": (resnet18(torch, width=8), (2, 3, 32, 32)),
    }
    for model, _ in models.values():
        randomize_batchnorms(model)
        model.eval()
    return models
