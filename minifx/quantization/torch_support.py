"""The one torch-specific piece: an observer must be a torch module inside a torch model.

Imported only when a torch model is quantized (``import minifx`` never imports torch).
"""

from __future__ import annotations

from typing import Any

import torch

from .observer import ObserverBase

__all__ = ["TorchObserver", "build_torch_quantized"]


class TorchObserver(torch.nn.Module):
    """A torch module around one of our observers: same forward, same attributes."""

    def __init__(self, observer: ObserverBase) -> None:
        super().__init__()
        object.__setattr__(self, "observer", observer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.observer(x)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            observer = self.__dict__.get("observer")
            if observer is None:
                raise
            return getattr(observer, name)

    def _get_name(self) -> str:
        return type(self.observer).__name__

    def extra_repr(self) -> str:
        return self.observer.extra_repr()


def build_torch_quantized(
    quantized_type: type, module: Any, weight: Any, scale: Any, zp: Any
) -> Any:
    """torch's quantized module for a float (or fused) torch module, with our qparams.

    A module without weights (Dropout, Hardswish) is built by torch's ``from_reference``.
    """
    if weight is None:
        return quantized_type.from_reference(module, float(scale), int(zp))
    layer = module[0] if hasattr(module, "__getitem__") else module
    if hasattr(layer, "in_features"):
        new = quantized_type(layer.in_features, layer.out_features)
    else:
        new = quantized_type(
            layer.in_channels, layer.out_channels, layer.kernel_size, stride=layer.stride,
            padding=layer.padding, dilation=layer.dilation, groups=layer.groups,
            bias=layer.bias is not None,
        )
    bias = None if layer.bias is None else layer.bias.detach().float()
    new.set_weight_bias(weight, bias)
    new.scale = float(scale)
    new.zero_point = int(zp)
    return new
