"""Small models written once for both libraries (``lib`` is ``torch`` or ``tensor``), each with
the ops of one kind of torch's x86 backend config, and a weight copy between the twins."""

from __future__ import annotations

import numpy as np


def mobilenet_like(lib):
    """Ops whose output shares the input's observer (ReLU6, hardtanh, pool, flatten), and
    Dropout, which has an observer of its own."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.relu6 = nn.ReLU6()
            self.conv2 = nn.Conv2d(8, 8, 3, padding=1)
            self.dropout = nn.Dropout(0.2)
            self.fc = nn.Linear(8, 5)

        def forward(self, x):
            x = self.relu6(self.bn(self.conv(x)))
            x = F.hardtanh(self.conv2(x), -1.0, 2.0)
            x = lib.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1)
            return self.fc(self.dropout(x))

    return Net()


def inception_like(lib):
    """Branches joined by ``cat``: their outputs share one observer."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Conv2d(3, 8, 3, padding=1)
            self.branch1 = nn.Conv2d(8, 4, 1)
            self.branch2 = nn.Conv2d(8, 6, 3, padding=1)
            self.branch3 = nn.Conv2d(8, 2, 1)
            self.head = nn.Conv2d(12, 4, 1)

        def forward(self, x):
            x = F.relu(self.stem(x))
            pooled = F.max_pool2d(x, 3, 1, 1)
            x = lib.cat([self.branch1(x), self.branch2(x), self.branch3(pooled)], 1)
            return self.head(x)

    return Net()


def squeeze_excite_like(lib):
    """Hardswish (its own observer), hardsigmoid and sigmoid (fixed qparams) and ``mul``."""
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.hardswish = nn.Hardswish()
            self.fc1 = nn.Conv2d(8, 4, 1)
            self.fc2 = nn.Conv2d(4, 8, 1)
            self.gate = nn.Hardsigmoid()
            self.conv2 = nn.Conv2d(8, 8, 1)

        def forward(self, x):
            x = self.hardswish(self.conv(x))
            scale = F.adaptive_avg_pool2d(x, 1)
            scale = self.gate(self.fc2(F.relu(self.fc1(scale))))
            x = scale * x
            return lib.sigmoid(self.conv2(x)) * x

    return Net()


def copy_weights(source, target) -> None:
    """Every parameter and buffer of the torch ``source`` into its ``tensor`` twin."""
    import tensor

    state = {k: tensor.from_numpy(np.array(v.detach().numpy()))  # keeps 0-d buffers 0-d
             for k, v in source.state_dict().items()}
    target.load_state_dict(state)
