"""Quantized Linear, Conv2d and their fused ReLU forms, ReLU, Hardswish, Dropout, Quantize and
DeQuantize."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._dtype import dtype, qint8, quint8
from ..._functions import zeros
from ..._quantized import QTensor, quantize_per_tensor
from ..._quantized_elementwise import qhardswish
from ..._quantized_ops import prepack, qconv2d, qlinear
from ..._tensor import Tensor
from .. import functional as F
from ..module import Module

__all__ = [
    "Conv2d", "ConvReLU2d", "DeQuantize", "Dropout", "Hardswish", "Linear", "LinearReLU",
    "Quantize", "ReLU",
]


def _float(value: Any) -> float:
    return float(value.item() if isinstance(value, Tensor) else value)


def _int(value: Any) -> int:
    return int(value.item() if isinstance(value, Tensor) else value)


class _QuantizedWeightModule(Module):
    """What Linear and Conv2d share: a qint8 weight, a float bias, the output's qparams."""

    _relu = False

    def _get_name(self) -> str:
        return "Quantized" + type(self).__name__

    def set_weight_bias(self, weight: QTensor, bias: Tensor | None) -> None:
        if not isinstance(weight, QTensor) or weight.dtype is not qint8:
            raise TypeError(f"{self._get_name()}: the weight must be a qint8 QTensor")
        prepack(weight)  # packed once, here, for the int8 kernels
        self._weight = weight
        self._bias = bias

    def weight(self) -> QTensor:
        return self._weight

    def bias(self) -> Tensor | None:
        return self._bias

    def _bias_array(self) -> np.ndarray | None:
        return None if self._bias is None else self._bias._array

    def _start_empty(self, weight_shape: tuple[int, ...], bias: bool) -> None:
        """As torch's constructor: a zero per-tensor weight, a zero bias, scale 1, zero point 0.

        ``from_float`` replaces both at once; until then the module still prints and runs.
        """
        weight = quantize_per_tensor(zeros(weight_shape), 1.0, 0, qint8)
        self.set_weight_bias(weight, zeros(weight_shape[0]) if bias else None)
        self.scale = 1.0
        self.zero_point = 0


class Linear(_QuantizedWeightModule):
    """y = requant(x @ W.T + b) with quint8 x and y, per-channel qint8 W."""

    def __init__(self, in_features: int, out_features: int, bias_: bool = True,
                 dtype: dtype = qint8) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self._start_empty((out_features, in_features), bias_)

    def forward(self, x: QTensor) -> QTensor:
        return qlinear(x, self._weight, self._bias_array(), self.scale, self.zero_point,
                       relu=self._relu)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"scale={self.scale}, zero_point={self.zero_point}, qscheme={self._weight.qscheme()!r}"
        )

    @classmethod
    def from_float(cls, mod: Module, weight: QTensor, scale: float, zero_point: int) -> Linear:
        """A quantized twin of the float ``mod`` (a Linear, or a LinearReLU's Linear)."""
        layer = mod[0] if type(mod).__name__ == "LinearReLU" else mod
        q = cls(layer.in_features, layer.out_features)
        q.set_weight_bias(weight, None if layer.bias is None else layer.bias.detach())
        q.scale, q.zero_point = _float(scale), _int(zero_point)
        return q


class LinearReLU(Linear):
    """Linear whose requantization clamps at the output's zero point: the ReLU for free."""

    _relu = True


class Conv2d(_QuantizedWeightModule):
    """Quantized 2-d convolution (groups=1), quint8 in and out, per-channel qint8 weight."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 dilation=1, groups: int = 1, bias: bool = True) -> None:
        super().__init__()
        pair = lambda v: (v, v) if isinstance(v, int) else tuple(v)  # noqa: E731
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride = pair(kernel_size), pair(stride)
        self.padding, self.dilation, self.groups = pair(padding), pair(dilation), groups
        self._start_empty((out_channels, in_channels // groups, *self.kernel_size), bias)

    def forward(self, x: QTensor) -> QTensor:
        return qconv2d(x, self._weight, self._bias_array(), self.stride, self.padding,
                       self.dilation, self.groups, self.scale, self.zero_point, relu=self._relu)

    def extra_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}, scale={self.scale}, zero_point={self.zero_point}"
        )
        if self.padding != (0, 0):
            text += f", padding={self.padding}"
        if self.dilation != (1, 1):
            text += f", dilation={self.dilation}"
        if self._bias is None:
            text += ", bias=False"
        return text

    @classmethod
    def from_float(cls, mod: Module, weight: QTensor, scale: float, zero_point: int) -> Conv2d:
        """A quantized twin of the float ``mod`` (a Conv2d, or a ConvReLU2d's Conv2d)."""
        conv = mod[0] if type(mod).__name__ == "ConvReLU2d" else mod
        if not isinstance(conv.padding, tuple):
            raise NotImplementedError(
                f"quantized Conv2d: padding={conv.padding!r} is not supported"
            )
        q = cls(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride, conv.padding,
                conv.dilation, conv.groups, conv.bias is not None)
        q.set_weight_bias(weight, None if conv.bias is None else conv.bias.detach())
        q.scale, q.zero_point = _float(scale), _int(zero_point)
        return q


class ConvReLU2d(Conv2d):
    """Conv2d whose requantization clamps at the output's zero point."""

    _relu = True


class ReLU(Module):
    """ReLU on a quantized tensor: max(q, zero_point), same scale and zero point."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()

    def _get_name(self) -> str:
        return "QuantizedReLU"

    def forward(self, x: QTensor) -> QTensor:
        return F.relu(x)


class Quantize(Module):
    """Float to quint8 with fixed parameters (torch.ao.nn.quantized.Quantize)."""

    def __init__(self, scale: float, zero_point: int, dtype: dtype = quint8) -> None:
        super().__init__()
        self.scale, self.zero_point, self.dtype = _float(scale), _int(zero_point), dtype

    def forward(self, x: Tensor) -> QTensor:
        return quantize_per_tensor(x, self.scale, self.zero_point, self.dtype)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}, dtype={self.dtype!r}"


class DeQuantize(Module):
    """Quantized back to float32."""

    def forward(self, x: QTensor) -> Tensor:
        return x.dequantize()




class Hardswish(Module):
    """Hardswish on a quantized tensor, quantized with the output's ``scale`` and
    ``zero_point`` (its values are not in the input's range)."""

    def __init__(self, scale: float, zero_point: int) -> None:
        super().__init__()
        self.scale, self.zero_point = _float(scale), _int(zero_point)

    def _get_name(self) -> str:
        return "QuantizedHardswish"

    def forward(self, x: QTensor) -> QTensor:
        return qhardswish(x, self.scale, self.zero_point)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}"

    @classmethod
    def from_float(cls, mod: Module, weight: None, scale: float, zero_point: int) -> Hardswish:
        return cls(scale, zero_point)


class Dropout(Module):
    """Dropout of a quantized (so evaluated) model: the identity, as torch's."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p, self.inplace = p, inplace

    def _get_name(self) -> str:
        return "QuantizedDropout"

    def forward(self, x: QTensor) -> QTensor:
        return x

    @classmethod
    def from_float(cls, mod: Module, weight: None, scale: float, zero_point: int) -> Dropout:
        return cls(mod.p, mod.inplace)
