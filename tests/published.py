"""Published models for the tests: torchvision's and timm's, built with random weights.

``import_torchvision()`` is the one way the tests import torchvision, and
``build`` the one way they make a model: by its builder's name, with no
pretrained weights (nothing is downloaded), seeded, in eval mode.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

import torch

from minifx.frameworks.published import make_torchvision_importable


def import_torchvision() -> ModuleType:
    """torchvision, importable beside the CPU torch of these machines (see
    ``minifx.frameworks.published`` for why it needs help)."""
    if importlib.util.find_spec("torchvision") is None:
        raise ImportError("torchvision is not installed: pip install -e '.[dev,torch]'")
    make_torchvision_importable()
    return importlib.import_module("torchvision")


def import_timm() -> ModuleType:
    """timm, which imports torchvision (so that goes first)."""
    import_torchvision()
    return importlib.import_module("timm")


def build(name: str, **kwargs: Any) -> torch.nn.Module:
    """``torchvision.models.<name>`` (or ``timm:<name>``) with random weights, in eval mode."""
    torch.manual_seed(0)
    if name.startswith("timm:"):
        model = import_timm().create_model(name[5:], pretrained=False, **kwargs)
    else:
        models = import_torchvision().models
        model = getattr(models, name)(weights=None, **kwargs)
    return model.eval()
