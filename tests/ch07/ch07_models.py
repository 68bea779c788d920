"""Chapter 7's ResNet-18 twins, and small helpers.

``resnet18(lib)`` is tests/models.py's ResNet-18 (written once over either
library, torchvision's layout and module names) built from ``lib.nn``, where
``lib`` is the ``tensor`` or the ``torch`` package, so the same code gives a
tensor model and its torch twin whose traced graphs agree.
"""

from __future__ import annotations

import numpy as np
import torch

from tests import models
from tests.helpers import copy_weights


def resnet18(lib, num_classes: int = 10, width: int = 64):
    """ResNet-18 (BasicBlock, [2, 2, 2, 2]) from ``lib.nn``; ``width`` is the stem's channels."""
    return models.resnet18(lib.nn, num_classes=num_classes, width=width)


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
