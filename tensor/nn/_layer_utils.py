"""Small helpers shared by the layer classes."""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from .._dtype import DEFAULT_FLOAT, as_dtype
from .._tensor import Tensor
from .parameter import Parameter


def empty_parameter(shape: tuple[int, ...], dtype=None) -> Parameter:
    """A Parameter of the given shape (float32 unless told), to be filled by an initialiser."""
    numpy_dtype = (DEFAULT_FLOAT if dtype is None else as_dtype(dtype)).numpy_dtype
    return Parameter(Tensor._from_array(np.zeros(shape, dtype=numpy_dtype)))


def filled_buffer(shape: tuple[int, ...], value: float, dtype=None) -> Tensor:
    numpy_dtype = (DEFAULT_FLOAT if dtype is None else as_dtype(dtype)).numpy_dtype
    return Tensor._from_array(np.full(shape, value, dtype=numpy_dtype))


def pair(value: int | Sequence[int]) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays a pair (as a tuple)."""
    if hasattr(value, "__index__"):
        return (operator.index(value), operator.index(value))
    return tuple(operator.index(v) for v in value)  # type: ignore[return-value]
