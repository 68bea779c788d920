"""Fused float modules: a layer and the ReLU after it, as one module (torch.ao.nn.intrinsic).

``prepare_fx`` puts these in place of a ``Conv2d`` (or ``Linear``) followed by
a ``ReLU``, so that one observer sees the ReLU's output and ``convert_fx``
can swap the pair for one quantized module whose kernel applies the ReLU
while requantizing. In float they compute exactly what the pair computes.
"""

from __future__ import annotations

from .modules import Conv2d, Linear, ReLU, Sequential

__all__ = ["ConvReLU2d", "LinearReLU"]


class _FusedPair(Sequential):
    """A Sequential of exactly (layer, ReLU), type-checked."""

    _layer_type: type = object

    def __init__(self, layer, relu) -> None:
        if type(layer) is not self._layer_type or type(relu) is not ReLU:
            raise TypeError(
                f"{type(self).__name__}: expected ({self._layer_type.__name__}, ReLU), got "
                f"({type(layer).__name__}, {type(relu).__name__})"
            )
        super().__init__(layer, relu)


class ConvReLU2d(_FusedPair):
    """Conv2d then ReLU."""

    _layer_type = Conv2d


class LinearReLU(_FusedPair):
    """Linear then ReLU."""

    _layer_type = Linear
