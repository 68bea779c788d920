"""Published models for the tests: torchvision's and timm's, built with random weights.

``import_torchvision()`` is the one way the tests import torchvision, and
``build`` the one way they make a model: by its builder's name, with no
pretrained weights (nothing is downloaded), seeded, in eval mode.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from types import ModuleType
from typing import Any

import torch

_keep: list[Any] = []  # the library that holds the operator schemas must stay alive


def import_torchvision() -> ModuleType:
    """torchvision, importable beside the CPU torch of these machines."""
    # PyPI's torchvision 0.28.0 is a CUDA build: its C++ library (_C.so) does not load
    # beside the CPU torch 2.13.0, and torchvision then goes on without its C++ ops
    # (extension._has_ops() is False), except that _meta_registrations registers fake
    # kernels for torchvision::nms and qnms unconditionally, which fails on operators
    # that were never defined ("operator torchvision::nms does not exist"). Defining
    # those two schemas with torch.library (their text as the C++ library declares
    # them) lets the import finish. The classification models never call a C++ op, and
    # where _C.so does load, it defines the operators itself and nothing is done here.
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.submodule_search_locations is None:
        raise ImportError("torchvision is not installed: pip install --no-deps "
                          "torchvision==0.28.0")
    if not _keep:
        ext = importlib.machinery.PathFinder.find_spec(
            "_C", list(spec.submodule_search_locations))
        try:
            if ext is None or ext.origin is None:
                raise OSError("torchvision has no _C library")
            torch.ops.load_library(ext.origin)
        except OSError:
            library = torch.library.Library("torchvision", "FRAGMENT")
            for op in ("nms", "qnms"):
                library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            _keep.append(library)
        else:
            _keep.append(None)
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
