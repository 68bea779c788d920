"""ResNet-18 written once for both libraries (no torchvision here), and small helpers.

``resnet18(lib)`` builds torchvision's ResNet-18 layout and module names from
``lib.nn`` (``lib`` is the ``tensor`` or the ``torch`` package), so the same
code gives a tensor model and its torch twin whose traced graphs agree.
"""

from __future__ import annotations

import numpy as np
import torch

from tests.helpers import copy_weights


def resnet18(lib, num_classes: int = 10, width: int = 64):
    """ResNet-18 (BasicBlock, [2, 2, 2, 2]) from ``lib.nn``; ``width`` is the stem's channels."""
    nn = lib.nn

    class BasicBlock(nn.Module):
        def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = None
            if stride != 1 or inplanes != planes:
                self.downsample = nn.Sequential(
                    nn.Conv2d(inplanes, planes, 1, stride=stride, bias=False),
                    nn.BatchNorm2d(planes),
                )

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inplanes = width
            self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(width, 1)
            self.layer2 = self._make_layer(width * 2, 2)
            self.layer3 = self._make_layer(width * 4, 2)
            self.layer4 = self._make_layer(width * 8, 2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(width * 8, num_classes)

        def _make_layer(self, planes: int, stride: int):
            blocks = [BasicBlock(self.inplanes, planes, stride), BasicBlock(planes, planes)]
            self.inplanes = planes
            return nn.Sequential(*blocks)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            x = lib.flatten(self.avgpool(x), 1)
            return self.fc(x)

    return ResNet()


def randomize_batchnorms(model, seed: int = 0) -> None:
    """Give every BatchNorm non-trivial statistics and affine parameters, so fusion shows."""
    rng = np.random.default_rng(seed)
    for module in model.modules():
        if type(module).__name__.startswith("BatchNorm"):
            n = module.num_features
            state = {
                "weight": rng.uniform(0.5, 1.5, n),
                "bias": rng.normal(0.0, 0.2, n),
                "running_mean": rng.normal(0.0, 0.2, n),
                "running_var": rng.uniform(0.5, 2.0, n),
            }
            module.load_state_dict(
                {k: torch.from_numpy(v.astype(np.float32)) for k, v in state.items()}
                | {"num_batches_tracked": torch.tensor(1)},
                strict=True,
            )


def twins(width: int = 64, seed: int = 0):
    """A torch ResNet-18 in eval mode with random BatchNorm statistics, and its tensor twin."""
    import tensor

    torch.manual_seed(seed)
    theirs = resnet18(torch, width=width)
    randomize_batchnorms(theirs, seed)
    ours = resnet18(tensor, width=width)
    copy_weights(theirs, ours)
    return ours.eval(), theirs.eval()
