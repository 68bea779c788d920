"""The five dtypes of `tensor` and torch's rules for combining them.

A dtype is a small named object that knows its NumPy counterpart. The
promotion rules decide the dtype of a result before any kernel runs, so the
backends only ever see arrays that already agree.
"""

from __future__ import annotations

import numpy as np


class dtype:  # noqa: N801 (torch spells it in lower case)
    """A tensor element type, printed as `tensor.float32` and so on."""

    __slots__ = ("name", "numpy_dtype", "is_floating_point", "itemsize", "_rank", "_category")

    def __init__(self, name: str, numpy_dtype: str, category: int, rank: int):
        self.name = name
        self.numpy_dtype = np.dtype(numpy_dtype)
        self.itemsize = self.numpy_dtype.itemsize
        self.is_floating_point = category == _FLOAT
        self._category = category  # bool < integer < floating point
        self._rank = rank  # order inside the whole lattice

    def __repr__(self) -> str:
        return f"tensor.{self.name}"

    def __reduce__(self):
        return _by_name, (self.name,)


_BOOL, _INT, _FLOAT = 0, 1, 2

bool_ = dtype("bool", "bool", _BOOL, 0)
int32 = dtype("int32", "int32", _INT, 1)
int64 = dtype("int64", "int64", _INT, 2)
float32 = dtype("float32", "float32", _FLOAT, 3)
float64 = dtype("float64", "float64", _FLOAT, 4)

ALL_DTYPES = (float32, float64, int32, int64, bool_)

# Quantized dtypes (chapter 10, tensor/_quantized.py): integers that stand for
# real numbers through a scale and a zero point. They are no part of the
# promotion lattice and never come from a NumPy dtype (uint8 storage alone
# does not say it is quantized), so they stay out of the tables below.
_QUANTIZED = 3
quint8 = dtype("quint8", "uint8", _QUANTIZED, -1)
qint8 = dtype("qint8", "int8", _QUANTIZED, -1)
qint32 = dtype("qint32", "int32", _QUANTIZED, -1)
QUANTIZED_DTYPES = (quint8, qint8, qint32)
DEFAULT_FLOAT = float32

_FROM_NUMPY = {d.numpy_dtype: d for d in ALL_DTYPES}
_BY_NAME = {d.name: d for d in ALL_DTYPES}


def _by_name(name: str) -> dtype:
    return _BY_NAME.get(name) or {d.name: d for d in QUANTIZED_DTYPES}[name]


def from_numpy_dtype(np_dtype) -> dtype:
    """Our dtype for a NumPy dtype; `TypeError` naming it when we have none."""
    try:
        return _FROM_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"unsupported dtype {np_dtype!s}: tensor supports float32, float64, int32, int64 "
            "and bool"
        ) from None


def as_dtype(value) -> dtype:
    """Accept a `tensor` dtype (or a NumPy dtype / Python type) and return ours."""
    if isinstance(value, dtype):
        return value
    if value is float:
        return float32
    if value is int:
        return int64
    if value is bool:
        return bool_
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    return from_numpy_dtype(value)


def promote_types(a: dtype, b: dtype) -> dtype:
    """The smallest dtype both `a` and `b` convert to (torch.promote_types)."""
    return a if a._rank >= b._rank else b


def scalar_dtype(value) -> dtype:
    """The dtype a Python number takes when it stands alone."""
    if value is True or value is False or isinstance(value, np.bool_):
        return bool_
    if isinstance(value, (int, np.integer)):
        return int64
    return DEFAULT_FLOAT


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Let a lower-priority group change the result only if it is of a higher category."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category == _FLOAT:
        return higher
    if higher._category == _BOOL or lower._category == _FLOAT:
        return promote_types(higher, lower)
    return higher


def result_type(*operands) -> dtype:
    """torch's result type: tensors with dims outrank 0-d tensors, which outrank Python numbers.

    A number only matters when its category (bool, integer, float) is above
    that of the tensors: `int_tensor * 0.5` is float32 but `float64_tensor * 0.5`
    stays float64.
    """
    dim_result = zero_result = scalar_result = None
    for op in operands:
        arr = getattr(op, "_array", None)
        if arr is not None:
            d = _FROM_NUMPY[arr.dtype]
            if arr.ndim:
                dim_result = d if dim_result is None else promote_types(dim_result, d)
            else:
                zero_result = d if zero_result is None else promote_types(zero_result, d)
        else:
            d = scalar_dtype(op)
            scalar_result = d if scalar_result is None else promote_types(scalar_result, d)
    return _combine(dim_result, _combine(zero_result, scalar_result))
