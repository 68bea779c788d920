"""Quantized functions that need the output's scale and zero point (torch.ops.quantized.add,
mul).

``convert_fx`` rewrites ``a + b`` between two quantized tensors (and
``relu(a + b)``) into a call of these, with the scale and zero point that
calibration found for the result as ``get_attr`` arguments.
"""

from __future__ import annotations

from typing import Any

from ..._quantized import QTensor
from ..._quantized_elementwise import qmul
from ..._quantized_ops import qadd

__all__ = ["add", "add_relu", "mul", "mul_relu"]


def add(qa: QTensor, qb: QTensor, scale: Any, zero_point: Any) -> QTensor:
    """``qa + qb`` quantized with ``scale`` and ``zero_point`` (torch.ops.quantized.add)."""
    return qadd(qa, qb, scale, zero_point)


def add_relu(qa: QTensor, qb: QTensor, scale: Any, zero_point: Any) -> QTensor:
    """``relu(qa + qb)`` quantized with ``scale`` and ``zero_point`` (quantized.add_relu)."""
    return qadd(qa, qb, scale, zero_point, relu=True)


def mul(qa: QTensor, qb: QTensor, scale: Any, zero_point: Any) -> QTensor:
    """``qa * qb`` quantized with ``scale`` and ``zero_point`` (torch.ops.quantized.mul)."""
    return qmul(qa, qb, scale, zero_point)


def mul_relu(qa: QTensor, qb: QTensor, scale: Any, zero_point: Any) -> QTensor:
    """``relu(qa * qb)`` quantized with ``scale`` and ``zero_point`` (quantized.mul_relu)."""
    return qmul(qa, qb, scale, zero_point, relu=True)


for _f in (add, add_relu, mul, mul_relu):
    _f.__module__ = "tensor.nn.quantized.functional"
