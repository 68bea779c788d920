"""Importing torchvision beside a torch it was not built with.

PyPI's torchvision 0.28.0 is a CUDA build. Beside the CPU torch 2.13.0 that
these machines hold, its C++ library (``_C.so``) does not load, and
torchvision then carries on without its C++ ops, except that its
``_meta_registrations`` registers fake kernels for ``torchvision::nms`` and
``qnms`` regardless, and that fails on operators that were never defined
("operator torchvision::nms does not exist"). Defining those two schemas with
``torch.library`` (their text as the C++ library declares them) lets the import
finish. The classification models never call a C++ op; where ``_C.so`` does
load, it defines the operators itself and nothing is done here.

``compare`` calls this before importing a ``torchvision`` or ``timm`` module
(``python -m minifx compare torchvision.models:resnet18``), and so do the tests.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
from typing import Any

import torch

_kept: list[Any] = []  # the library holding the schemas must stay alive


def make_torchvision_importable() -> None:
    """Define torchvision's missing operator schemas if its C++ library cannot load."""
    if _kept:
        return
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.submodule_search_locations is None:
        return  # not installed: the import itself will say so
    ext = importlib.machinery.PathFinder.find_spec("_C", list(spec.submodule_search_locations))
    try:
        if ext is None or ext.origin is None:
            raise OSError("torchvision has no _C library")
        torch.ops.load_library(ext.origin)
    except OSError:
        library = torch.library.Library("torchvision", "FRAGMENT")
        for op in ("nms", "qnms"):
            library.define(f"{op}(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _kept.append(library)
    else:
        _kept.append(None)
