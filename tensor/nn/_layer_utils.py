"""Small helpers shared by the layer classes."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from .._dtype import DEFAULT_FLOAT, as_dtype
from .._tensor import Tensor
from . import init
from .parameter import Parameter


def empty_parameter(shape: tuple[int, ...], dtype=None) -> Parameter:
    """A Parameter of the given shape (float32 unless told), to be filled by an initialiser."""
    numpy_dtype = (DEFAULT_FLOAT if dtype is None else as_dtype(dtype)).numpy_dtype
    return Parameter(Tensor._from_array(np.zeros(shape, dtype=numpy_dtype)))


def reset_weight_and_bias(weight: Parameter, bias: Parameter | None) -> None:
    """torch's default start for Linear and Conv2d, so fresh layers have torch's scale.

    ``kaiming_uniform_`` with ``a=sqrt(5)`` draws the weight from
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)); the bias gets the same bound (and stays
    zero when there is no fan-in).
    """
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init.calculate_fan_in_and_fan_out(weight)
        if fan_in:
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(bias, -bound, bound)


def filled_buffer(shape: tuple[int, ...], value: float, dtype=None) -> Tensor:
    numpy_dtype = (DEFAULT_FLOAT if dtype is None else as_dtype(dtype)).numpy_dtype
    return Tensor._from_array(np.full(shape, value, dtype=numpy_dtype))


def pair(value: int | Sequence[int]) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays a pair (as a tuple)."""
    if hasattr(value, "__index__"):
        return (operator.index(value), operator.index(value))
    return tuple(operator.index(v) for v in value)  # type: ignore[return-value]
