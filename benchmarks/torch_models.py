"""The torch modules that benchmarks/capture.py captures with minifx and torch.fx.

A chain of ``n`` elementwise operations, and a ResNet-50 in plain
``torch.nn`` (bottleneck blocks 3-4-6-3, as torchvision lays it out, from
tests/models.py), so that the benchmark needs nothing beyond torch.
"""

from __future__ import annotations

import torch
from torch import nn

from tests.models import resnet50


class TorchChain(nn.Module):
    """``n`` elementwise operations in a row (add, mul, relu, repeat)."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n

    def forward(self, x):
        for _ in range(self.n // 3):
            x = x + 1.0
            x = x * 0.5
            x = torch.relu(x)
        for _ in range(self.n % 3):
            x = x + 1.0
        return x


def ResNet50(num_classes: int = 1000) -> nn.Module:
    """torchvision's ResNet-50 in plain ``torch.nn``: tests/models.py's, written once for
    tensor and torch (the name is the class name torchvision's callers know)."""
    return resnet50(nn, num_classes=num_classes)
