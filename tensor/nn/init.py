"""Initialisers that fill a parameter in place from the tensor RNG.

They follow torch.nn.init's formulas (``kaiming_uniform_`` with ``a=sqrt(5)``
gives the bound 1/sqrt(fan_in) that Linear and Conv2d use), so a freshly
built layer has weights of the same scale as torch's; the numbers differ
because the random generators differ. ``tensor.manual_seed`` makes them
repeatable.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _functions as _core
from .._tensor import Tensor


def _fill(param: Tensor, values: np.ndarray) -> Tensor:
    param._array[...] = values
    return param


def uniform_(param: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with U(a, b)."""
    draws = _core.rand(param.shape, dtype=param.dtype)._array
    return _fill(param, a + (b - a) * draws)


def normal_(param: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with N(mean, std**2)."""
    draws = _core.randn(param.shape, dtype=param.dtype)._array
    return _fill(param, mean + std * draws)


def zeros_(param: Tensor) -> Tensor:
    return _fill(param, 0)


def ones_(param: Tensor) -> Tensor:
    return _fill(param, 1)


def calculate_fan_in_and_fan_out(param: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight shaped (out, in, *kernel)."""
    shape = tuple(param.shape)
    if len(shape) < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def kaiming_uniform_(param: Tensor, a: float = 0.0) -> Tensor:
    """U(-bound, bound) with bound = sqrt(6 / ((1 + a**2) * fan_in)) (leaky_relu gain)."""
    fan_in, _ = calculate_fan_in_and_fan_out(param)
    bound = math.sqrt(6.0 / ((1 + a * a) * fan_in)) if fan_in else 0.0
    return uniform_(param, -bound, bound)


def constant_(param: Tensor, val: float) -> Tensor:
    """Fill with ``val``."""
    return _fill(param, val)


def _xavier_std(param: Tensor, gain: float) -> float:
    fan_in, fan_out = calculate_fan_in_and_fan_out(param)
    return gain * math.sqrt(2.0 / float(fan_in + fan_out))


def xavier_uniform_(param: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio)."""
    bound = math.sqrt(3.0) * _xavier_std(param, gain)
    return uniform_(param, -bound, bound)


def xavier_normal_(param: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out))."""
    return normal_(param, 0.0, _xavier_std(param, gain))
