"""The ResNets, written once over either library's ``nn``.

``resnet18(nn)`` and ``resnet50(nn)`` build torchvision's layouts and module
names (no torchvision needed) from ``tensor.nn`` or ``torch.nn``, so one
source gives a tensor model and its torch twin whose traced graphs agree.
Chapter 0 checks a small one layer by layer against torch, chapter 7 fuses
ResNet-18, chapter 9 traces it beside torch.fx, chapter 10 quantizes it,
chapter 11 converts ResNet-18 and ResNet-50, and the benchmarks time them.

This module imports neither library itself (a benchmark's tensor process
must not load torch): the library is the package the given ``nn`` belongs to.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from types import ModuleType, SimpleNamespace
from typing import Any


@functools.cache
def resnet_classes(nn: ModuleType) -> SimpleNamespace:
    """``BasicBlock``, ``Bottleneck`` and ``ResNet`` as subclasses of ``nn.Module``.

    Made once per library (cached), so two models of one library share their
    classes. The layers are created in torchvision's order, which is the
    order a seeded random initialisation draws their weights in.
    """
    library = importlib.import_module(nn.__name__.split(".")[0])  # tensor or torch

    class BasicBlock(nn.Module):
        """Two 3x3 convolutions and a residual connection (ResNet-18 and -34)."""

        expansion = 1

        def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = _projection(nn, inplanes, planes, stride)

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class Bottleneck(nn.Module):
        """1x1 down, 3x3, 1x1 up (four times wider), and a residual connection (ResNet-50)."""

        expansion = 4

        def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
            super().__init__()
            out = planes * self.expansion
            self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = nn.Conv2d(planes, out, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(out)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = _projection(nn, inplanes, out, stride)

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        """A 7x7 stem and a max pool, then one stage per entry of ``layers`` (``layer1``,
        ``layer2`` ...; each after the first halves the size and doubles the width), an
        average pool and a linear classifier."""

        def __init__(self, block: type, layers: Sequence[int], num_classes: int = 1000,
                     width: int = 64) -> None:
            super().__init__()
            self.inplanes = width
            self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.stages = [f"layer{i + 1}" for i in range(len(layers))]
            for i, (name, blocks) in enumerate(zip(self.stages, layers)):
                setattr(self, name, self._make_layer(block, width * 2**i, blocks,
                                                     stride=1 if i == 0 else 2))
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(self.inplanes, num_classes)

        def _make_layer(self, block: type, planes: int, blocks: int, stride: int) -> Any:
            layers = [block(self.inplanes, planes, stride)]
            self.inplanes = planes * block.expansion
            layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            for name in self.stages:
                x = getattr(self, name)(x)
            x = library.flatten(self.avgpool(x), 1)
            return self.fc(x)

    return SimpleNamespace(BasicBlock=BasicBlock, Bottleneck=Bottleneck, ResNet=ResNet)


def _projection(nn: ModuleType, inplanes: int, out: int, stride: int) -> Any:
    """The 1x1 convolution and BatchNorm that reshape the residual, where the shape changes."""
    if stride == 1 and inplanes == out:
        return None
    return nn.Sequential(nn.Conv2d(inplanes, out, 1, stride=stride, bias=False),
                         nn.BatchNorm2d(out))


def resnet(nn: ModuleType, layers: Sequence[int], *, bottleneck: bool = False,
           num_classes: int = 1000, width: int = 64) -> Any:
    """A ResNet of basic blocks (or bottlenecks), ``layers[i]`` blocks in stage i."""
    classes = resnet_classes(nn)
    block = classes.Bottleneck if bottleneck else classes.BasicBlock
    return classes.ResNet(block, layers, num_classes=num_classes, width=width)


def resnet18(nn: ModuleType, num_classes: int = 10, width: int = 64) -> Any:
    """ResNet-18: basic blocks, 2-2-2-2; ``width`` is the stem's channels (64 in torchvision)."""
    return resnet(nn, (2, 2, 2, 2), num_classes=num_classes, width=width)


def resnet50(nn: ModuleType, num_classes: int = 1000) -> Any:
    """ResNet-50: bottleneck blocks, 3-4-6-3, as torchvision lays it out."""
    return resnet(nn, (3, 4, 6, 3), bottleneck=True, num_classes=num_classes)
